"""Ignore markers: `repomap: noindex` keeps a file out, ignore-start/-end keep lines out of the
text rows and chunks; through the real CLI on real files."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

START, END, NOINDEX = (
    "repomap" + ": ignore-start",
    "repomap" + ": ignore-end",
    "repomap" + ": noindex",
)

FILES = {
    "keep.py": f'''"""Visible module."""

# visible comment about pools
def visible():
    return "visible string"

# {START}
# fixture comment zebrafish
API_TOKEN_FIXTURE = "zebrafish-fixture-value"
def generated_helper():
    """generated docstring zebrafish"""
    return 1
# {END}

# after the block: giraffe
''',
    "skip.py": f"# {NOINDEX}\n# private comment okapi\ndef hidden():\n    return 'okapi'\n",
    "notes.md": f"# Notes\n\nvisible text.\n\n<!-- {START} -->\nsecret doc words narwhal\n<!-- {END} -->\n",
    "prose.py": f'"""Mentions {NOINDEX} in prose, which does not count."""\n# prose comment tapir\n',
    "open.py": f"# before lemur\nX = 1\n# {START}\n# never closed: ocelot\n",
}


def _hits(repo: Path, *args: str) -> list[dict]:
    done = run_cli(*args, "--root", repo, "--json", "--no-refresh")
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["results"]


def test_markers_keep_files_and_blocks_out_of_text_and_chunks(make_repo) -> None:
    repo = make_repo(FILES)
    indexed = run_cli("index", repo, "--json")
    assert indexed.returncode == 0, indexed.stderr
    skipped = json.loads(indexed.stdout)["results"][0]["skipped_files"]
    assert {"path": "skip.py", "reason": "noindex marker (repomap: noindex)"} in skipped
    for word in ("zebrafish", "okapi", "narwhal", "ocelot"):
        assert _hits(repo, "search-text", word) == [], word
        assert _hits(repo, "search", word, "--mode", "lexical") == [], word
    assert _hits(repo, "search-docs", "narwhal") == []
    for word in ("giraffe", "tapir", "lemur", "visible"):
        assert _hits(repo, "search-text", word), word
    assert _hits(repo, "search-docs", "visible")
    # definitions inside a block stay symbols; a noindex file has none
    assert [h["name"] for h in _hits(repo, "symbols", "generated_helper")] == ["generated_helper"]
    assert _hits(repo, "symbols", "hidden") == []


def test_adding_a_noindex_marker_later_removes_the_files_rows(make_repo) -> None:
    repo = make_repo({"a.py": "# searchable capybara\ndef f():\n    pass\n"})
    assert run_cli("index", repo).returncode == 0
    assert _hits(repo, "search-text", "capybara")
    (repo / "a.py").write_text(f"# {NOINDEX}\n# searchable capybara\ndef f():\n    pass\n")
    assert run_cli("index", repo).returncode == 0
    assert _hits(repo, "search-text", "capybara") == []
    assert _hits(repo, "symbols", "f") == []
