"""Which index a command uses: flags, environment, then the nearest indexed folder upward."""

from __future__ import annotations

import json

from conftest import run_cli

from repomap import config

FILES = {
    "pkg/pool.py": "# pick the oldest idle connection\ndef get():\n    return 1\n",
    "pkg/deep/util.py": "def helper():\n    return 2\n",
}


def test_a_command_in_a_subfolder_uses_the_index_of_the_tree_around_it(make_repo):
    repo = make_repo(FILES)
    assert run_cli("index", repo).returncode == 0
    inside = repo / "pkg" / "deep"

    found = run_cli("search-text", "oldest", "--json", cwd=inside)
    assert found.returncode == 0, found.stderr
    assert [hit["file_path"] for hit in json.loads(found.stdout)["results"]] == ["pkg/pool.py"]

    (repo / "pkg" / "new.py").write_text("# a newly added note\n")
    updated = run_cli("index", "--json", cwd=inside)
    assert updated.returncode == 0, updated.stderr
    summary = json.loads(updated.stdout)
    assert summary["root"] == str(repo) and summary["added"] == 1
    assert not (inside / ".repomap").exists()  # no second index inside the tree


def test_the_search_upward_stops_at_a_repository_top(make_repo, tmp_path):
    """An index in a folder above a repository is not the repository's: `repomap index` run
    inside it indexes the repository, never the folder above."""
    outer = make_repo({"notes.py": "# outer\n"}, root=tmp_path / "outer")
    assert run_cli("index", outer).returncode == 0
    repo = make_repo(FILES, root=outer / "project")
    (repo / ".git").mkdir()
    assert config.indexed_ancestor(repo / "pkg") == repo / "pkg"

    missing = run_cli("search-text", "outer", cwd=repo)
    assert missing.returncode != 0
    assert missing.stderr.startswith("error: no index at ") and str(repo) in missing.stderr
    assert config.indexed_ancestor(outer / "elsewhere") == outer


def test_flags_and_environment_come_before_the_search_upward(make_repo, tmp_path, monkeypatch):
    repo = make_repo(FILES)
    assert run_cli("index", repo).returncode == 0
    monkeypatch.chdir(repo / "pkg")
    assert config.resolve().root == repo
    assert config.resolve(tmp_path).root == tmp_path
    other_db = tmp_path / "other.db"
    assert config.resolve(db=other_db).root == repo / "pkg"  # --db alone: ROOT is the cwd
    monkeypatch.setenv("REPOMAP_ROOT", str(tmp_path))
    assert config.resolve().root == tmp_path
