"""The search log beside the index (repomap/searchlog.py) and what search_text writes to it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repomap import config, store
from repomap.errors import BadQuery
from repomap.index import pipeline as indexer
from repomap.search import log as searchlog
from repomap.search.text import search_text


def lines(index: Path) -> list[dict]:
    return [json.loads(line) for line in searchlog.log_path(index).read_text().splitlines()]


def test_log_event_appends_one_json_line_of_any_kind(tmp_path: Path) -> None:
    index = tmp_path / "index.db"
    index.touch()  # a log is kept beside an index only
    searchlog.log_event("mcp_tool", index=index, tool="search_text", ms=1.5)
    searchlog.log_event("search_text", index=index, query="x" * 5000, results=0)
    first, second = lines(index)
    assert first["kind"] == "mcp_tool" and first["tool"] == "search_text" and "time" in first
    assert len(second["query"]) == searchlog.MAX_FIELD
    assert searchlog.log_path(index) == tmp_path / "index-search-log.jsonl"


def test_no_log_is_made_beside_an_index_that_does_not_exist(tmp_path: Path) -> None:
    """`search foo --db nope.db` failed as it should and left `nope-search-log.jsonl`."""
    searchlog.log_event("search_code", index=tmp_path / "nope.db", query="q")
    assert list(tmp_path.iterdir()) == []
    done = subprocess.run(
        [sys.executable, "-m", "repomap", "search", "foo", "--db", str(tmp_path / "nope.db"),
         "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "no index at" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_field_is_logged_as_a_warning_never_raised_nor_hidden(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A field json cannot write (a caller's bug) was dropped without a word."""
    index = tmp_path / "index.db"
    index.touch()  # a log is kept beside an index only
    searchlog.log_event("search_text", index=index, filters={("not", "a str key"): 1})
    assert not searchlog.log_path(index).exists()
    assert "could not record a 'search_text' event" in caplog.text and "TypeError" in caplog.text
    (tmp_path / "a_file").write_text("")
    searchlog.log_event("search_text", index=tmp_path / "a_file" / "index.db", query="q")
    assert caplog.text.count("could not record") == 1  # a place it cannot write: expected


@pytest.mark.parametrize("value", ["0", "false", "OFF", "no"])
def test_the_log_is_off_when_the_environment_says_so(
    tmp_path: Path, monkeypatch, value: str
) -> None:
    monkeypatch.setenv("REPOMAP_SEARCH_LOG", value)
    searchlog.log_event("search_text", index=tmp_path / "index.db", query="q")
    assert not searchlog.log_path(tmp_path / "index.db").exists()
    assert config.resolve(tmp_path).search_log is False


def test_a_full_log_is_rotated_and_both_files_are_summarized(tmp_path: Path, monkeypatch) -> None:
    index = tmp_path / "index.db"
    index.touch()  # a log is kept beside an index only
    monkeypatch.setattr(searchlog, "MAX_BYTES", 2000)
    for number in range(30):
        searchlog.log_event("search_text", index=index, query=f"q{number % 3}", mode="fts",
                            results=number % 2, ms=float(number), error=None)  # fmt: skip
    searchlog.log_event("search_text", index=index, query="last", mode="fts", results=1, ms=1.0)
    rotated = tmp_path / "index-search-log.1.jsonl"
    assert rotated.exists() and searchlog.log_path(index).stat().st_size <= 2000
    assert lines(index)[-1]["query"] == "last"
    summary = searchlog.summarize(index)
    assert summary.log_files == [str(rotated), str(searchlog.log_path(index))]
    assert 1 < summary.searches <= 31


def test_summary_counts_queries_failures_and_latency(tmp_path: Path) -> None:
    index = tmp_path / "index.db"
    index.touch()  # a log is kept beside an index only
    events = [("pool", 3, 1.0, None), ("pool", 5, 2.0, None), ("none", 0, 3.0, None),
              ("a AND", 0, 4.0, "bad query"), ("x", 1, 100.0, None)]  # fmt: skip
    for query, results, ms, error in events:
        searchlog.log_event("search_text", index=index, query=query, mode="fts", results=results,
                            ms=ms, error=error)  # fmt: skip
    searchlog.log_path(index).open("a").write('{"cut short\n')  # a crash mid-line
    summary = searchlog.summarize(index)
    assert (summary.searches, summary.errors) == (5, 1)
    assert summary.top_queries[0] == ("pool", 2)
    assert summary.zero_result_queries == [("none", 1)]
    assert summary.average_results == round((3 + 5 + 0 + 1) / 4, 2)
    assert summary.latency_ms == {"p50": 3.0, "p95": 100.0, "p99": 100.0, "max": 100.0}


def test_search_text_logs_results_and_errors_unless_told_not_to(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("# the pool\n")
    path = Path(indexer.run(config.resolve(root, workers=1)).db_path)
    with store.reading(path) as db:
        search_text(db, "pool")
        with pytest.raises(BadQuery):
            search_text(db, "(pool")
        search_text(db, "pool", log=False)
    found, failed = lines(path)
    assert (found["query"], found["results"], found["total"], found["error"]) == (
        "pool",
        1,
        1,
        None,
    )
    assert found["mode"] == "fts" and found["ms"] >= 0
    assert failed["error"].startswith("bad query at position 1")


def test_repomap_search_is_logged_and_counted_by_stats_beside_text_searches(
    make_repo, tmp_path: Path
) -> None:
    from conftest import run_cli

    root = make_repo({"net/retry.py": "def backoff_delay(attempt):\n    return 2 ** attempt\n"})
    env = {"REPOMAP_SEARCH_LOG": "1"}
    assert run_cli("index", root, env=env).returncode == 0
    assert run_cli("search", "how long is the retry delay", "--root", root, env=env).returncode == 0
    assert run_cli("search", "zzqxv", "--mode", "lexical", "--root", root, env=env).returncode == 1
    assert run_cli("search", "x" * 5000, "--root", root, env=env).returncode == 2
    assert run_cli("search-text", "attempt", "--root", root, env=env).returncode == 1
    done = run_cli("stats", "--json", "--root", root, env=env)
    summary = json.loads(done.stdout)
    assert summary["searches"] == 4 and summary["errors"] == 1
    assert summary["by_mode"]["lexical"] == 2  # no embeddings: lexical, asked or not
    # the search refused before a mode was chosen is an error, no mode named `None`
    assert summary["by_mode"] == {"lexical": 2, "fts": 1}
    queries = {row["query"]: row["count"] for row in summary["top_queries"]}
    assert queries["how long is the retry delay  (search)"] == 1
    empty = {row["query"]: row["count"] for row in summary["zero_result_queries"]}
    assert empty == {"zzqxv  (search)": 1, "attempt": 1}
    events, _ = searchlog.read_events(root / ".repomap" / "index.db", "search_code")
    assert [event["word_matches"] for event in events] == [1, 0, None]
    assert events[2]["error"] and "4096" in events[2]["error"]
