"""`repomap search-text` and `repomap stats` as a user runs them: the real CLI in a subprocess."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from conftest import CLI_FILES, indexed_tree, run_cli

from repomap import config
from repomap.errors import ExitCode
from repomap.index import pipeline as indexer


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_tree(tmp_path_factory.mktemp("cli") / "repo", CLI_FILES)


def search(root: Path, *args: str, env: dict | None = None):
    return run_cli(
        "search-text", *args, "--root", root, env={"REPOMAP_SEARCH_LOG": "0", **(env or {})}
    )


def test_json_output_has_the_documented_shape(root: Path) -> None:
    done = search(root, "connection pool", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"query", "results", "total", "took_ms"} <= set(data)
    assert data["query"] == "connection pool" and data["total"] == 1
    first = data["results"][0]
    assert set(first) >= {"file_path", "line_number", "element_type", "symbol_name", "content", "rank",
                          "snippet"}  # fmt: skip
    assert (first["file_path"], first["line_number"]) == ("src/pool.py", 3)
    assert "[MATCH]" in first["snippet"] and 0 < first["rank"] <= 1


def test_every_option_reaches_the_search(root: Path) -> None:
    done = search(root, "TODO", "--type", "comment", "--limit", "1", "--path", "other.py", "--lang",
                  "python", "--json")  # fmt: skip
    data = json.loads(done.stdout)
    assert [(r["file_path"], r["element_type"]) for r in data["results"]] == [
        ("src/other.py", "comment")
    ]
    literal = json.loads(search(root, "failed TO open", "--literal", "-i", "--json").stdout)
    assert [r["line_number"] for r in literal["results"]] == [5]
    assert json.loads(search(root, "failed TO open", "--literal", "--json").stdout)["results"] == []


def test_a_query_that_starts_with_a_dash_is_a_query_not_an_option(root: Path) -> None:
    done = search(root, "->", "--literal", "--json")
    assert done.returncode == ExitCode.NO_MATCH, done.stderr
    assert json.loads(done.stdout)["query"] == "->"
    typo = search(root, "pool", "--limt", "5")
    assert typo.returncode == ExitCode.USAGE and "--limt" in typo.stderr


def test_no_results_is_an_empty_list_and_exit_1_as_grep(root: Path) -> None:
    done = search(root, "xylophone", "--json")
    assert done.returncode == ExitCode.NO_MATCH
    assert json.loads(done.stdout)["results"] == []
    human = search(root, "xylophone")
    assert human.returncode == ExitCode.NO_MATCH and "no matches" in human.stderr


def test_human_output_groups_by_file_with_path_line_symbol_and_snippet(root: Path) -> None:
    done = search(root, "TODO")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "src/other.py" in lines and "src/pool.py" in lines
    assert any("src/pool.py:3" in line and "comment" in line for line in lines)
    assert any("TODO: the ConnectionPool should expire idle connections" in line for line in lines)
    assert "2 matches" in done.stderr


@pytest.mark.parametrize(
    "args, code, message",
    [
        (
            ['"unclosed'],
            ExitCode.USAGE,
            "error: bad query at position 1: this quote is never closed",
        ),
        (["a AND"], ExitCode.USAGE, "error: bad query at position 3: AND has nothing after it"),
        (["*"], ExitCode.USAGE, "literal mode"),
        (["   "], ExitCode.USAGE, "the query is empty"),
        (["pool", "--limit", "0"], ExitCode.USAGE, "error: "),
        (["pool", "--limit", "1001"], ExitCode.USAGE, "error: "),
        (["pool", "--type", "comments"], ExitCode.USAGE, "error: "),
        (["pool", "--lang", "java"], ExitCode.USAGE, "error: unknown language 'java'"),
    ],
)
def test_errors_are_one_line_with_a_usage_exit_status(
    root: Path, args: list, code: int, message: str
) -> None:
    done = search(root, *args)
    assert done.returncode == code
    assert done.stdout == ""
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_missing_index_says_how_to_build_it(tmp_path: Path) -> None:
    done = run_cli("search-text", "pool", "--db", tmp_path / "none.db")
    assert done.returncode == ExitCode.NO_INDEX
    assert (
        done.stderr.strip()
        == f"error: no index at {tmp_path / 'none.db'}; run `repomap index` first"
    )


def test_a_corrupt_file_says_so_and_how_to_fix_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database at all" * 100)
    done = run_cli("search-text", "pool", "--db", bad)
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: ") and "repomap index" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_index_of_an_older_schema_says_how_to_upgrade(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    assert run_cli("migrate", "--db", old, "--to", "5").returncode == 0
    done = run_cli("search-text", "pool", "--db", old)
    assert done.returncode == ExitCode.NO_INDEX
    assert "schema v5" in done.stderr and "run `repomap index` to upgrade it" in done.stderr


def test_a_json_query_imports_neither_rich_nor_tree_sitter_nor_numpy_nor_sqlite_utils(
    root: Path,
) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "repomap.cli", "search-text", "pool", "--json",
         "--root", str(root)],
        capture_output=True, text=True, env={"REPOMAP_SEARCH_LOG": "0", "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "repomap.search.text" in imported
    heavy = ("rich", "tree_sitter", "numpy", "sqlite_utils")
    assert not {name for name in imported if name.split(".")[0] in heavy}


def test_searches_are_logged_and_summarized_by_stats(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("# the pool\n")
    indexer.run(config.resolve(root, workers=1))
    for args in (["pool"], ["pool"], ["nothing"], ["a AND"], ["pool", "--literal"]):
        run_cli("search-text", *args, "--root", root)
    run_cli("search-text", "pool", "--root", root, env={"REPOMAP_SEARCH_LOG": "0"})  # not logged
    done = run_cli("stats", "--root", root, "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["searches"] == 5 and stats["errors"] == 1
    assert stats["by_mode"] == {"fts": 4, "literal": 1}
    assert stats["top_queries"][0] == {"query": "pool", "count": 2}
    assert stats["zero_result_queries"] == [{"query": "nothing", "count": 1}]
    assert set(stats["latency_ms"]) == {"p50", "p95", "p99", "max"}
    human = run_cli("stats", "--root", root)
    assert human.returncode == 0 and "most frequent" in human.stdout and "nothing" in human.stdout


def test_stats_without_a_log_says_so(tmp_path: Path) -> None:
    done = run_cli("stats", "--db", tmp_path / "index.db")
    assert done.returncode == 0 and "no searches logged yet" in done.stdout


def test_a_log_that_cannot_be_written_does_not_fail_the_search(root: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    with sqlite3.connect(root / ".repomap" / "index.db") as source, sqlite3.connect(db) as target:
        source.backup(target)
    (tmp_path / "index-search-log.jsonl").mkdir()  # opening it for appending fails, even as root
    done = run_cli("search-text", "pool", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"] == 1 and done.stderr == ""


def test_output_to_a_pipe_is_never_wrapped(tmp_path: Path) -> None:
    words = " ".join(f"word{n}" for n in range(40))  # a comment far wider than 80 columns
    root = indexed_tree(tmp_path / "repo", {"wide.py": f"# needle {words}\n"})
    done = run_cli("search-text", "needle", "--root", root, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    [snippet] = [line for line in done.stdout.splitlines() if "needle" in line]
    assert len(snippet) > 80 and "word0" in snippet and "word30" in snippet  # one line


def test_a_snippet_ends_with_an_ellipsis_only_where_words_were_cut(tmp_path: Path) -> None:
    filler = " ".join(f"word{n}" for n in range(60))
    root = indexed_tree(
        tmp_path / "repo",
        {
            "whole.py": '''
                def get():
                    """Get a connection from the pool."""
                ''',
            "quoted.py": 'MESSAGE = "(the pool is closed)"\n',
            "long.py": f"# {filler} pool {filler}.\n",
            "docs/guide.md": "# Pool\n\nThe pool keeps connections.\n",
            "docs/long.md": f"# Long\n\n{filler} pool {filler}.\n",
        },
    )
    texts = search(root, "pool", "--json", "--limit", "10")
    snippets = {hit["file_path"]: hit["snippet"] for hit in json.loads(texts.stdout)["results"]}
    assert snippets["whole.py"] == "Get a connection from the [MATCH]pool[/MATCH]."
    assert snippets["quoted.py"] == "(the [MATCH]pool[/MATCH] is closed)"
    assert snippets["long.py"].startswith("…word") and snippets["long.py"].endswith("…")
    docs = run_cli("search-docs", "pool", "--json", "--root", root)
    doc_snippets = {hit["file"]: hit["snippet"] for hit in json.loads(docs.stdout)["results"]}
    assert doc_snippets["docs/guide.md"] == "The [MATCH]pool[/MATCH] keeps connections."
    assert doc_snippets["docs/long.md"].startswith("…word")
    assert doc_snippets["docs/long.md"].endswith("…")


def _on_a_terminal(*args: str | Path) -> str:
    """The CLI's stdout when it is a terminal (a pseudo-terminal, 100 columns)."""
    import os
    import pty
    import subprocess

    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm", "REPOMAP_SEARCH_LOG": "0"}
    env.pop("NO_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "repomap.cli", *map(str, args)], stdout=follower,
                          stderr=subprocess.DEVNULL, env=env, timeout=60)  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: all read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0
    return b"".join(chunks).decode()


@pytest.mark.parametrize("command", ["search-text", "search-docs"])
def test_matches_are_highlighted_on_a_terminal_and_marked_only_when_asked(
    tmp_path: Path, command: str
) -> None:
    root = indexed_tree(tmp_path / "repo", {"a.py": "# the needle here\n", "a.md": "needle here\n"})
    shown = _on_a_terminal(command, "needle", "--root", root)
    assert "\x1b[" in shown and "[MATCH]" not in shown and "needle" in shown
    piped = run_cli(command, "needle", "--root", root).stdout
    assert "needle here" in piped and "[MATCH]" not in piped and "\x1b[" not in piped
    asked = run_cli(command, "needle", "--markers", "--root", root).stdout
    assert "[MATCH]needle[/MATCH] here" in asked and "\x1b[" not in asked
    marked = _on_a_terminal(command, "needle", "--markers", "--root", root)
    assert "[MATCH]needle[/MATCH]" in marked
