"""Which index a command uses: flags, environment, then (for queries) the nearest index upward."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import run_cli

from repomap import config

FILES = {
    "pkg/pool.py": "# pick the oldest idle connection\ndef get():\n    return 1\n",
    "pkg/deep/util.py": "def helper():\n    return 2\n",
}


def test_a_query_in_a_subfolder_uses_the_index_of_the_tree_around_it(make_repo):
    repo = make_repo(FILES)
    assert run_cli("index", repo).returncode == 0
    inside = repo / "pkg" / "deep"
    found = run_cli("search-text", "oldest", "--json", cwd=inside)
    assert found.returncode == 0, found.stderr
    assert [hit["file_path"] for hit in json.loads(found.stdout)["results"]] == ["pkg/pool.py"]
    symbols = run_cli("symbols", "helper", "--json", cwd=inside)
    assert symbols.returncode == 0, symbols.stderr
    assert "pkg/deep/util.py" in symbols.stdout


def test_commands_that_write_serve_or_open_paths_keep_the_current_folder(make_repo, tmp_path):
    """`index` run inside a new project below an indexed folder (a home folder, say) indexes
    the project, never the whole folder above; `open` reads paths from where it runs."""
    home = make_repo({"notes.py": "# home notes\n"}, root=tmp_path / "home")
    assert run_cli("index", home).returncode == 0
    project = make_repo({"main.py": "# project main\n"}, root=home / "newproject")
    done = run_cli("index", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["root"] == str(project)
    assert (project / ".repomap" / "index.db").is_file()
    opened = run_cli("open", "main.py", cwd=project)
    assert opened.returncode == 0 and opened.stdout == "# project main\n"


def test_the_search_upward_stops_at_a_repository_top(make_repo, tmp_path):
    """An index in a folder above a repository is not the repository's index."""
    outer = make_repo({"notes.py": "# outer\n"}, root=tmp_path / "outer")
    assert run_cli("index", outer).returncode == 0
    repo = make_repo(FILES, root=outer / "project")
    (repo / ".git").mkdir()
    assert config.indexed_ancestor(repo / "pkg") == repo / "pkg"
    assert config.indexed_ancestor(outer / "elsewhere") == outer
    missing = run_cli("search-text", "outer", cwd=repo)
    assert missing.returncode != 0
    assert missing.stderr.startswith("error: no index at ") and str(repo) in missing.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a folder another user's")
def test_an_ancestor_this_user_cannot_enter_is_skipped_not_a_crash(make_repo, tmp_path):
    """Another user's index (a folder of mode 700) above the current folder: the search
    upward cannot look inside it and goes on, where Path.is_file raised PermissionError."""
    repo = make_repo(FILES)
    locked = repo / ".repomap"
    locked.mkdir()
    (locked / "index.db").write_bytes(b"")
    locked.chmod(0o700)
    script = (  # imports first: the interpreter's own files may be unreadable to that user
        "import os; from pathlib import Path; from repomap import config; os.setuid(65534); "
        f"print(config.indexed_ancestor(Path({str(repo / 'pkg')!r})))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(repo / "pkg")


def test_flags_and_environment_come_before_the_search_upward(make_repo, tmp_path, monkeypatch):
    repo = make_repo(FILES)
    assert run_cli("index", repo).returncode == 0
    monkeypatch.chdir(repo / "pkg")
    assert config.resolve(find_index=True).root == repo
    assert config.resolve().root == repo / "pkg"  # only queries look upward
    assert config.resolve(tmp_path, find_index=True).root == tmp_path
    assert config.resolve(db=tmp_path / "other.db", find_index=True).root == repo / "pkg"
    monkeypatch.setenv("REPOMAP_ROOT", str(tmp_path))
    assert config.resolve(find_index=True).root == tmp_path
