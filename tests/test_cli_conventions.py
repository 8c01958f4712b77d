"""The conventions every `repomap` command keeps (issue 16): exit status, the JSON envelope,
flag names, --max-lines, paths, --version; the real CLI in a subprocess on real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from docs_fixture import REPO


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import indexed_tree

    return indexed_tree(tmp_path_factory.mktemp("conventions") / "repo", REPO)


def cli(root: Path, *args: str):
    return run_cli(*args, "--root", root, env={"REPOMAP_SEARCH_LOG": "0"})


# --- --max-lines 0: no lines, only the count of the lines left out ---------------------------


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["show", "main", "--max-lines", "0"],
            "src/app.py:11-12  function main\n... (2 more lines)\n",
        ),
        (["show", "--section", "Usage", "--max-lines", "0"], "... (14 more lines)\n"),
        (["outline", "src/app.py", "--max-lines", "0"], "... (5 more lines)\n"),
        (["open", "README.md", "--max-lines", "0"], "... (22 more lines)\n"),
    ],
)
def test_max_lines_0_shows_no_lines_only_how_many_were_left_out(repo, args, expected):
    done = cli(repo, *args)
    assert (done.returncode, done.stdout) == (0, expected), done.stderr
