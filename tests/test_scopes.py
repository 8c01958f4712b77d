"""Branch scopes (scope.mode = git | env) and `repomap prune`, on a real git repository built
in the test, through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

from repomap import config

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})  # fmt: skip
    return done.stdout


@pytest.fixture
def repo(make_repo) -> Path:
    files = {f"pkg/m{n}.py": f"def f{n}():\n    '''function number {n}'''\n    return {n}\n"
             for n in range(20)}  # fmt: skip
    root = make_repo({**files, "repomap.toml": "[scope]\nmode = 'git'\n"})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


def _index(root: Path, *args: str) -> dict:
    done = run_cli("index", root, "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["results"][0]


def test_each_branch_gets_its_own_index_and_a_new_one_costs_what_changed(repo: Path) -> None:
    first = _index(repo)
    assert first["db_path"] == ".repomap/scopes/main/index.db" and first["added"] == 20
    git(repo, "checkout", "-q", "-b", "feature/login")
    (repo / "pkg" / "m3.py").write_text("def login():\n    '''sign in walrus'''\n")
    second = _index(repo)
    folder = config.sanitize_scope("feature/login")
    assert folder.startswith("feature-login-") and folder != "feature-login"
    assert second["db_path"] == f".repomap/scopes/{folder}/index.db"
    assert (second["added"], second["modified"], second["unchanged"]) == (0, 1, 19)
    found = run_cli("search-text", "walrus", "--root", repo, "--json")
    assert json.loads(found.stdout)["count"] == 1
    git(repo, "checkout", "-q", "-f", "main")  # main's files: main's index has no walrus
    assert run_cli("search-text", "walrus", "--root", repo, "--no-refresh").returncode == 1
    status = json.loads(run_cli("status", "--root", repo, "--json").stdout)
    assert status["results"][0]["scope"] == "main"
    scopes = {s["name"]: s for s in status["scopes"]}
    assert set(scopes) == {"main", "feature/login"}
    assert scopes["feature/login"]["folder"] == folder and scopes["feature/login"]["files"] == 20


def test_names_that_differ_only_in_unsafe_characters_get_two_folders(repo: Path) -> None:
    for branch in ("feature/x", "feature-x"):
        git(repo, "checkout", "-q", "-b", branch)
        _index(repo)
    folders = sorted(p.name for p in (repo / ".repomap" / "scopes").iterdir() if p.is_dir())
    assert len(folders) == 2 and "feature-x" in folders
    assert all(name.startswith("feature-x") for name in folders)
    assert config.sanitize_scope("../../etc").startswith("etc-")


@pytest.mark.slow
def test_the_embedding_cache_is_shared_by_content_so_a_branch_embeds_only_what_changed(
    repo: Path,
) -> None:
    first = _index(repo, "--embed")
    assert first["embeddings"]["embedded"] > 0
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "pkg" / "m7.py").write_text("def seven():\n    '''a changed docstring'''\n")
    second = _index(repo)  # the copied index has vectors: embedding follows
    embeddings = second["embeddings"]
    assert embeddings["embedded"] == 1, embeddings  # the one changed chunk
    assert embeddings["coverage"] == 1.0


@pytest.mark.slow
def test_a_text_embedded_on_one_branch_is_not_embedded_again_on_another(repo: Path) -> None:
    _index(repo, "--embed")
    git(repo, "checkout", "-q", "-b", "two")
    _index(repo)  # seeded from main, before the new text exists anywhere
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "one")
    text = 'def shared_helper():\n    """merged from a colleague branch"""\n'
    (repo / "pkg" / "shared.py").write_text(text)
    assert _index(repo)["embeddings"]["embedded"] == 1
    git(repo, "checkout", "-q", "-f", "two")
    (repo / "pkg" / "shared.py").write_text(text)
    embeddings = _index(repo)["embeddings"]
    assert (embeddings["embedded"], embeddings["reused"]) == (0, 1), embeddings


def test_env_mode_names_the_scope_by_an_environment_variable(make_repo) -> None:
    root = make_repo({"a.py": "X = 1\n", "repomap.toml": "[scope]\nmode = 'env'\n"})
    done = run_cli("index", root, "--json", env={"REPOMAP_SCOPE": "ci-123"})
    assert json.loads(done.stdout)["results"][0]["db_path"] == ".repomap/scopes/ci-123/index.db"
    assert not (root / ".repomap" / "index.db").exists()


def test_the_fixed_mode_keeps_the_one_index_it_always_had(make_repo) -> None:
    root = make_repo({"a.py": "X = 1\n"})
    assert config.resolve(root).db_path == root / ".repomap" / "index.db"
    assert _index(root)["db_path"] == ".repomap/index.db"
    assert not (root / ".repomap" / "scopes").exists()
    with pytest.raises(config.BadArgument):
        config.db_path_for_scope(root, "feature")
    assert config.db_path_for_scope(root, "main") == root / ".repomap" / "index.db"


def test_prune_lists_scopes_of_deleted_branches_and_removes_them_only_with_apply(
    repo: Path,
) -> None:
    _index(repo)
    for branch in ("keep", "gone"):
        git(repo, "checkout", "-q", "-b", branch)
        _index(repo)
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-D", "gone")
    listed = run_cli("prune", "--root", repo, "--json")
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert [(r["name"], r["reason"]) for r in found["results"]] == [
        ("gone", "branch 'gone' no longer exists")
    ]
    assert (repo / ".repomap" / "scopes" / "gone" / "index.db").exists()  # a dry run
    applied = run_cli("prune", "--root", repo, "--apply")
    assert applied.returncode == 0 and "removed gone" in applied.stdout
    assert not (repo / ".repomap" / "scopes" / "gone").exists()
    assert (repo / ".repomap" / "scopes" / "keep" / "index.db").exists()
    registry = json.loads((repo / ".repomap" / "scopes" / "registry.json").read_text())
    assert sorted(registry) == ["keep", "main"]
    old = json.loads(run_cli("prune", "--root", repo, "--older-than", "0d", "--json").stdout)
    assert [r["name"] for r in old["results"]] == ["keep"]  # never the current scope
    bad = run_cli("prune", "--root", repo, "--older-than", "soon")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --older-than")


def test_clean_scope_removes_one_branch_index(repo: Path) -> None:
    _index(repo)
    git(repo, "checkout", "-q", "-b", "topic")
    _index(repo)
    done = run_cli("clean", "--root", repo, "--scope", "main")
    assert done.returncode == 0, done.stderr
    assert not (repo / ".repomap" / "scopes" / "main").exists()
    assert (repo / ".repomap" / "scopes" / "topic" / "index.db").exists()
    assert sorted(p.name for p in (repo / "pkg").iterdir())[:2] == ["m0.py", "m1.py"]


def test_a_server_started_on_one_branch_never_writes_another_branchs_files_into_its_index(
    repo: Path,
) -> None:
    from repomap.index.freshness import Refresher

    _index(repo)
    settings = config.resolve(repo)
    assert settings.scope == "main"
    refresher = Refresher(settings, wait=60)
    try:
        refresher.ensure_fresh()
        git(repo, "checkout", "-q", "-b", "elsewhere")
        (repo / "pkg" / "m1.py").write_text("# only on the other branch quokka\n")
        notices = refresher.refresh_now()
    finally:
        refresher.close()
    assert any("restart the server" in notice for notice in notices), notices
    db = repo / ".repomap" / "scopes" / "main" / "index.db"
    done = run_cli("search-text", "quokka", "--db", db, "--root", repo, "--no-refresh")
    assert done.returncode == 1  # main's index did not take the other branch's file
