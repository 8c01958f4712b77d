"""Data files and commit history as records: real parsers, a real git repository built here,
the real CLI in a subprocess and the real MCP server through the SDK's client."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import run_cli, write_tree
from mcp.client import Client

from repomap import config, store
from repomap.errors import BadArgument, BadQuery
from repomap.index import pipeline
from repomap.index.records import MAX_RECORDS, DataError, parse
from repomap.search.records import search_commits, search_data, snippet
from repomap.serve.mcp_server import build_server

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

DATA_FILES: dict[str, str | bytes] = {
    "pyproject.toml": """
        [project]
        name = "demo"
        [tool.ruff.lint]
        select = ["E", "F"]
        [tool."odd.key"]
        x = 1
        """,
    ".github/workflows/ci.yml": """
        jobs:
          test:
            steps:
              - uses: actions/checkout@v4
              - name: Tests
                run: pytest -x
              - run: ruff check .
        """,
    "settings.json": '{"DEFAULT_AUTO_FIELD": "django.db.models.BigAutoField", "retries": 3}',
    "fixtures/users.csv": 'id,name,city\n7,Bob,Oslo\n42,Zoë,"Paris\nrive gauche"\n',
    "fixtures/users.tsv": "id\tname\n42\tAlice\n",
    "events.jsonl": '{"user": {"id": 42}, "ok": true}\n\n{"user": {"id": 7}}\n',
    "app.py": "def main():\n    return 1\n",
}


def git(root: Path, *args: str, when: int = 1_700_000_000, author: str = "Zoë Lefèvre") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": "zoe@example.org",
        "GIT_COMMITTER_NAME": "CI Bot",
        "GIT_COMMITTER_EMAIL": "ci@example.org",
        "GIT_AUTHOR_DATE": f"@{when} +0200",
        "GIT_COMMITTER_DATE": f"@{when} +0200",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-C", str(root), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(root: Path, message: str, when: int, author: str = "Zoë Lefèvre") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message, when=when, author=author)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with data files and a history: an empty body, a multi-paragraph body,
    a non-ASCII author, a rename, a merge of a side branch."""
    root = write_tree(tmp_path / "repo", DATA_FILES)
    git(root, "init", "-q", "-b", "main")
    commit(root, "Initial import", 1_700_000_000)
    (root / "client.py").write_text(
        "def fetch(url):\n    timeout = 10\n    return url, timeout\n", encoding="utf-8"
    )
    commit(root, "client: fetch with a timeout\n\nThe default timeout is 10 seconds.",
           1_700_000_100, author="Ada Lovelace")  # fmt: skip
    git(root, "mv", "app.py", "main_app.py")
    commit(root, "Rename app.py", 1_700_000_200)
    git(root, "checkout", "-q", "-b", "side")
    (root / "side.txt").write_text("side\n", encoding="utf-8")
    commit(root, "side work", 1_700_000_300)
    git(root, "checkout", "-q", "main")
    (root / "client.py").write_text(
        "def fetch(url):\n    timeout = 30\n    return url, timeout\n", encoding="utf-8"
    )
    commit(root, "client: raise the timeout to 30\n\nSlow mirrors took 12 s.", 1_700_000_400)
    git(root, "merge", "-q", "--no-ff", "-m", "Merge side", "side", when=1_700_000_500)
    return root


def index(root: Path, **kwargs: Any) -> pipeline.Summary:
    return pipeline.run(config.resolve(root, workers=1, **kwargs))


def reading(root: Path) -> Any:
    return store.reading(config.default_db_path(root))


# --- data files ----------------------------------------------------------------------------------


def test_each_format_becomes_records_keyed_by_path_row_or_line(repo: Path) -> None:
    summary = index(repo)
    assert summary.data["files"] == 6 and summary.data["added"] == 6
    with reading(repo) as db:
        toml = search_data(db, "E", path="pyproject.toml", field="value")
        yaml = search_data(db, "pytest", path="*.yml")
        csv = search_data(db, "Paris", path="fixtures/")
        jsonl = search_data(db, "42", path="events.jsonl")
        odd = search_data(db, "odd", field="key")
    assert [(h.key, h.fields) for h in toml.results] == [
        ("tool.ruff.lint.select[0]", {"value": "E"})
    ]
    assert [(h.key, h.line, h.match_field) for h in yaml.results] == [
        ("jobs.test.steps[1].run", 6, "value")
    ]
    (row,) = csv.results
    assert row.id == "fixtures/users.csv#2" and row.line == 3
    assert row.fields == {"id": "42", "name": "Zoë", "city": "Paris\nrive gauche"}
    assert (row.match_field, row.match_snippet) == ("city", "Paris\nrive gauche")
    assert [(h.key, h.fields) for h in jsonl.results] == [("1", {"user.id": "42", "ok": "true"})]
    assert [h.key for h in odd.results] == ['tool["odd.key"].x']


def test_search_data_is_literal_case_sensitive_and_sorted_by_key(repo: Path) -> None:
    index(repo)
    with reading(repo) as db:
        found = search_data(db, "42")
        folded = search_data(db, "zoë")
        empty = search_data(db, "no such text")
        trimmed = search_data(db, "  DEFAULT_AUTO_FIELD  ")
    assert [h.id for h in found.results] == [
        "events.jsonl#1", "fixtures/users.csv#2", "fixtures/users.tsv#1",
    ]  # fmt: skip
    assert folded.results == [] and empty.as_dict() == {
        "results": [], "count": 0, "truncated": False, "query": "no such text", "mode": "literal",
    }  # fmt: skip
    (hit,) = trimmed.results
    assert (hit.key, hit.match_field, hit.match_snippet) == (
        "DEFAULT_AUTO_FIELD", "key", "DEFAULT_AUTO_FIELD",
    )  # fmt: skip


def test_key_glob_limit_and_truncation(repo: Path) -> None:
    index(repo)
    with reading(repo) as db:
        steps = search_data(db, "c", key="jobs.test.steps*")
        first = search_data(db, "c", key="jobs.test.steps*", limit=1)
        indexed = search_data(db, "r", key="jobs.*.steps[2].run")
        ranked = search_data(db, "checkout", ranked=True)
    assert [h.key for h in steps.results] == ["jobs.test.steps[0].uses", "jobs.test.steps[2].run"]
    assert [h.key for h in first.results] == ["jobs.test.steps[0].uses"] and first.truncated
    assert [h.key for h in indexed.results] == ["jobs.test.steps[2].run"]
    assert [h.key for h in ranked.results] == ["jobs.test.steps[0].uses"]
    assert ranked.results[0].score is not None and ranked.results[0].score > 0


def test_bad_data_files_are_skipped_and_named_and_nothing_else_is_lost(tmp_path: Path) -> None:
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    root = write_tree(
        tmp_path / "bad",
        {
            "bad.csv": 'a,b\n"x"y,1\n',
            "bad.json": "{not json",
            "bad.toml": "a = ",
            "bad.yaml": "a: [",
            "binary.json": b"\x00\x01\x02\xff\xfe" * 100,
            "deep.json": "[" * 50_000 + "]" * 50_000,
            "bomb.yaml": bomb,
            "good.toml": 'name = "kept"\n',
            "code.py": "# a comment that stays\n",
        },
    )
    with open(root / "huge.csv", "wb") as huge:  # 100 MB, sparse: never read
        huge.truncate(100 * 1024 * 1024)
    summary = index(root)
    reasons = dict(summary.skipped)
    assert reasons["bad.csv"].startswith("not valid CSV")
    assert reasons["bad.json"].startswith("not valid JSON")
    assert reasons["bad.toml"].startswith("not valid TOML")
    assert reasons["bad.yaml"].startswith("not valid YAML")
    assert reasons["deep.json"] == "nested too deeply to parse"
    assert "binary.json" in reasons and reasons["huge.csv"].startswith("larger than the limit")
    (bomb_note,) = [p["note"] for p in summary.data["partial_files"] if p["path"] == "bomb.yaml"]
    assert f"first {MAX_RECORDS} records" in bomb_note
    with reading(root) as db:
        assert [h.key for h in search_data(db, "kept").results] == ["name"]
        assert db.scalar("SELECT records FROM data_files WHERE path = 'bomb.yaml'") == MAX_RECORDS
        assert db.scalar("SELECT count(*) FROM code_text") == 1


def test_a_lone_surrogate_escape_in_json_is_read_as_u_fffd(tmp_path: Path) -> None:
    # JSON's "\\ud800" is a str Python holds and SQLite cannot store: httpx's whatwg.json
    # stopped the whole run with a traceback. A pair is one character and stays one.
    root = write_tree(
        tmp_path / "s",
        {
            "cases.json": '{"a": "x\\ud800y", "\\udc80k": ["\\uD83D\\uDE00 ok", "\\udfff"]}',
            "lines.jsonl": '{"k": "\\ud800"}\n',
            "code.py": "def kept():\n    return 1\n",
        },
    )
    done = run_cli("index", root)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    with reading(root) as db:
        values = sorted(db.conn.execute("SELECT key, field, value FROM data_values"))
        assert db.scalar("SELECT count(*) FROM symbols WHERE name = 'kept'") == 1
    assert values == [
        ("1", "k", "\ufffd"),  # lines.jsonl's first line: its field k
        ('["\ufffdk"][0]', "value", "\U0001f600 ok"),
        ('["\ufffdk"][1]', "value", "\ufffd"),
        ("a", "value", "x\ufffdy"),
    ]


def test_a_recursive_yaml_alias_and_deep_nesting_stay_bounded() -> None:
    cycle = parse("yaml", "a: &a [*a]\n")
    assert len(cycle.records) == 1 and cycle.records[0].key.startswith("a[0][0]")
    with pytest.raises(DataError, match="not valid JSON"):
        parse("json", '{"a": }')


def test_credentials_in_data_files_are_redacted(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "s",
        {
            "config.yaml": "db:\n  password: hX9kq2Lr0pZaQw\n  host: db.local\n",
            "keys.json": '{"aws": "AKIAIOSFODNN7EXAMPLE"}',
        },
    )
    index(root)
    with reading(root) as db:
        values = dict(db.conn.execute("SELECT key, value FROM data_values"))
        assert search_data(db, "hX9kq2").results == []
    assert values == {"db.password": "[REDACTED]", "db.host": "db.local", "aws": "[REDACTED]"}


def test_data_files_are_incremental_by_content_hash(repo: Path) -> None:
    index(repo)
    settings_json = repo / "settings.json"
    os.utime(settings_json, ns=(1, 1))  # touched: same bytes
    touched = index(repo)
    assert (touched.data["unchanged"], touched.data["modified"]) == (6, 0)
    settings_json.write_text('{"DEFAULT_AUTO_FIELD": "AutoField"}', encoding="utf-8")
    (repo / "events.jsonl").unlink()
    changed = index(repo)
    assert (changed.data["modified"], changed.data["removed"], changed.data["files"]) == (1, 1, 5)
    with reading(repo) as db:
        assert [h.fields for h in search_data(db, "AutoField").results] == [{"value": "AutoField"}]
        assert search_data(db, "42", path="events.jsonl").results == []
        # The FTS rows went with them: a ranked search finds only what is there.
        assert search_data(db, "BigAutoField", ranked=True).results == []


def test_query_bounds() -> None:
    db_less = None
    with pytest.raises(BadQuery, match="longer than 4096"):
        search_data(db_less, "a" * 4097)  # type: ignore[arg-type]
    with pytest.raises(BadQuery, match="empty"):
        search_commits(db_less, "   ")  # type: ignore[arg-type]
    assert snippet("x" * 300 + "MATCH" + "y" * 300, 300, 305) == "x" * 97 + "MATCH" + "y" * 98
    assert len(snippet("z" * 1000, 0, 1000)) == 200


# --- commits -------------------------------------------------------------------------------------


def test_commits_are_read_with_their_fields(repo: Path) -> None:
    summary = index(repo)
    assert summary.history["status"] == "indexed" and summary.history["commits"] == 6
    with reading(repo) as db:
        everything = search_commits(db, "e", limit=100)
        renamed = search_commits(db, "main_app.py", field="paths").results
        merge = search_commits(db, "Merge side").results
        ada = search_commits(db, "Ada", field="author").results
    times = [hit.commit_time for hit in everything.results]
    assert times == sorted(times, reverse=True) and times[0] == "2023-11-14T22:21:40.000Z"
    (rename,) = renamed
    assert rename.paths == ["app.py", "main_app.py"] and rename.body == ""
    assert rename.author_name == "Zoë Lefèvre" and rename.committer_name == "CI Bot"
    (merged,) = merge
    assert len(merged.parents) == 2 and merged.paths == []
    (first,) = ada
    assert first.subject == "client: fetch with a timeout"
    assert first.body == "The default timeout is 10 seconds."
    assert (first.match_field, first.match_snippet) == ("author", "Ada Lovelace <zoe@example.org>")


def test_search_commits_filters_and_orders(repo: Path) -> None:
    index(repo)
    with reading(repo) as db:
        newest = search_commits(db, "timeout")
        oldest = search_commits(db, "timeout", oldest_first=True)
        body = search_commits(db, "12 s", field="body")
        by_path = search_commits(db, "client", path="client.py")
        window = search_commits(db, "timeout", since="2023-11-14T22:14Z", until="2023-11-14T22:16Z")
        whole_day = search_commits(db, "timeout", since="2023-11-14", until="2023-11-14")
        day_before = search_commits(db, "timeout", until="2023-11-13")
        by_author = search_commits(db, "timeout", author="ada")
        ranked = search_commits(db, "timeouts seconds", ranked=True)
        with pytest.raises(BadArgument, match="not a date"):
            search_commits(db, "x", since="yesterday")
    subjects = [hit.subject for hit in newest.results]
    assert subjects == ["client: raise the timeout to 30", "client: fetch with a timeout"]
    assert [hit.subject for hit in oldest.results] == subjects[::-1]
    assert [(h.match_field, h.match_snippet) for h in body.results] == [
        ("body", "Slow mirrors took 12 s.")
    ]
    assert len(by_path.results) == 2
    assert [h.subject for h in window.results] == ["client: fetch with a timeout"]
    assert len(whole_day.results) == 2 and day_before.results == []
    assert [h.author_name for h in by_author.results] == ["Ada Lovelace"]
    assert ranked.results == []  # words are ANDed: no commit has both "timeouts" and "seconds"


def test_history_is_incremental_and_a_rewrite_is_detected(repo: Path) -> None:
    index(repo)
    (repo / "notes.md").write_text("new\n", encoding="utf-8")
    commit(repo, "docs: notes", 1_700_000_600)
    one = index(repo).history
    assert (one["added"], one["removed"], one["rewritten"], one["commits"]) == (1, 0, False, 7)
    git(repo, "commit", "-q", "--amend", "-m", "docs: the notes, reworded", when=1_700_000_700)
    amended = index(repo).history
    assert (amended["added"], amended["removed"], amended["rewritten"]) == (1, 1, True)
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    reset = index(repo).history
    assert (reset["added"], reset["removed"], reset["commits"]) == (0, 1, 6)
    assert index(repo).history["status"] == "unchanged"
    with reading(repo) as db:
        assert search_commits(db, "notes").results == []
        assert db.scalar("SELECT count(*) FROM commit_paths WHERE path = 'notes.md'") == 0


def test_a_shallow_clone_a_folder_without_git_and_no_git_are_skipped_with_a_note(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow)], check=True)
    noted = index(shallow).history
    assert noted["status"] == "skipped" and "shallow clone" in noted["note"]
    plain = write_tree(tmp_path / "plain", {"a.toml": "x = 1\n"})
    assert "not a git repository" in index(plain).history["note"]
    index(repo)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # git is not installed
    (repo / "settings.json").write_text('{"retries": 4}', encoding="utf-8")
    no_git = index(repo)  # indexed all the same: the note is no error
    assert "git is not installed" in no_git.history["note"] and no_git.data["modified"] == 1
    assert no_git.history["commits"] == 6  # what was read before is kept


def test_new_commits_are_read_before_search_commits_answers(repo: Path) -> None:
    index(repo)
    commit(repo, "chore: bump the retry limit", 1_700_000_800)
    done = run_cli("search-commits", "retry limit", "--root", repo, "--json")
    assert done.returncode == 0, done.stderr
    assert "read 1 new commits first" in done.stderr
    assert json.loads(done.stdout)["results"][0]["subject"] == "chore: bump the retry limit"


def test_the_history_can_be_turned_off_and_its_commits_are_dropped(repo: Path) -> None:
    """index.history = false: a history too long to read on every run is not read, and what
    an earlier run read is dropped rather than left to go stale."""
    index(repo)
    with reading(repo) as db:
        assert db.scalar("SELECT count(*) FROM commits") > 0
    off = {"REPOMAP_HISTORY": "false"}
    done = run_cli("index", repo, "--json", env=off)
    assert done.returncode == 0, done.stderr
    history = json.loads(done.stdout)["results"][0]["history"]
    assert history["note"].startswith("not read: index.history is false") and history["removed"] > 0
    with reading(repo) as db:
        assert db.scalar("SELECT count(*) FROM commits") == 0
        assert db.scalar("SELECT count(*) FROM chunks WHERE commit_id IS NOT NULL") == 0
    commit(repo, "chore: bump the retry limit", 1_700_000_800)
    quiet = run_cli("search-commits", "retry", "--root", repo, "--json", env=off)
    assert quiet.returncode == 1 and "new commits" not in quiet.stderr  # nothing read first
    again = run_cli("index", repo, "--json")  # on again: the whole history is read
    assert json.loads(again.stdout)["results"][0]["history"]["status"] == "indexed"
    found = run_cli("search-commits", "retry limit", "--root", repo, "--json")
    assert found.returncode == 0, found.stderr


# --- the CLI and MCP -----------------------------------------------------------------------------


def test_cli_exit_statuses_and_byte_identical_answers(repo: Path) -> None:
    index(repo)
    first = run_cli("search-data", "42", "--root", repo, "--json", "--no-refresh")
    again = run_cli("search-data", "42", "--root", repo, "--json", "--no-refresh")
    assert first.returncode == 0 and first.stdout == again.stdout
    commits = [run_cli("search-commits", "timeout", "--root", repo, "--json") for _ in range(2)]
    assert commits[0].returncode == 0 and commits[0].stdout == commits[1].stdout
    none = run_cli("search-data", "nothing like this", "--root", repo, "--json")
    assert none.returncode == 1 and json.loads(none.stdout)["results"] == []
    too_long = run_cli("search-commits", "a" * 4097, "--root", repo)
    assert too_long.returncode == 2 and "longer than 4096" in too_long.stderr
    assert "Traceback" not in too_long.stderr and too_long.stderr.count("\n") == 1


def test_the_outline_of_a_data_file_is_its_key_paths(repo: Path) -> None:
    """`repomap outline FILE` on a data file shows its shape: key paths nested, positions in
    arrays folded, quoted keys kept, a CSV's columns, lines (JSON's and TOML's found in the text); an
    outline of a folder stays one of code and docs."""
    index(repo)

    def outline(path: str, *args: str) -> str:
        done = run_cli("outline", path, "--root", repo, "--no-refresh", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert outline(".github/workflows/ci.yml") == (
        ".github/workflows/ci.yml\n"
        "  object jobs  L4-7\n"
        "    object test  L4-7\n"
        "      array steps[]  L4-7\n"
        "        key uses  L4-4\n"
        "        key name  L5-5\n"
        "        key run  L6-7\n"
    )
    toml = outline("pyproject.toml", "--level", "2")
    assert toml.splitlines() == [  # lines found in the text: tomllib gives none
        "pyproject.toml", "  object project  L2-2", "    key name  L2-2", "  object tool  L4-6",
        "    object ruff  L4-4", '    object ["odd.key"]  L6-6',
    ]  # fmt: skip
    assert outline("fixtures/users.csv").splitlines()[1:] == [
        "  column id  L2-3", "  column name  L2-3", "  column city  L2-3",
    ]  # fmt: skip
    data = json.loads(run_cli("outline", "events.jsonl", "--root", repo, "--json").stdout)
    (events,) = data["results"]
    assert events["language"] == "jsonl"
    assert [(e["depth"], e["kind"], e["name"]) for e in events["entries"]] == [
        (1, "object", "user"), (2, "key", "id"), (1, "key", "ok"),
    ]  # fmt: skip
    assert "settings.json" not in outline(".")  # a folder's outline: code and docs


def test_history_names_the_commits_that_changed_a_function(repo: Path) -> None:
    index(repo)
    done = run_cli("history", "fetch", "--root", repo, "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["name"], answer["file_path"], answer["start_line"]) == ("fetch", "client.py", 1)
    assert [hit["subject"] for hit in answer["results"]] == [
        "client: raise the timeout to 30",
        "client: fetch with a timeout",
    ]
    missing = run_cli("history", "no_such_function", "--root", repo)
    assert missing.returncode == 1


def test_mcp_tools_search_data_and_search_commits(repo: Path) -> None:
    index(repo)
    server = build_server(config.resolve(repo, workers=1))

    async def calls() -> list[Any]:
        async with Client(server) as client:
            return [
                await client.call_tool("search_data", {"query": "DEFAULT_AUTO_FIELD"}),
                await client.call_tool(
                    "search_commits", {"query": "timeout", "field": "subject", "limit": 1}
                ),
                await client.call_tool("search_commits", {"query": "x", "paht": "a"}),
                await client.call_tool("search_data", {"query": "a" * 4097}),
            ]

    data, commits, unknown, too_long = anyio.run(calls)
    assert not data.is_error and data.structured_content["results"][0]["id"] == (
        "settings.json#DEFAULT_AUTO_FIELD"
    )
    assert commits.structured_content["truncated"] is True
    assert commits.structured_content["results"][0]["subject"] == "client: raise the timeout to 30"
    assert unknown.is_error and "does not take paht" in unknown.content[0].text
    assert too_long.is_error


def test_migrating_a_v14_index_keeps_its_rows_and_the_next_run_reads_records(repo: Path) -> None:
    db_path = config.default_db_path(repo)
    db_path.parent.mkdir()
    with sqlite3.connect(db_path) as conn:
        store.migrate(conn, to=14)
        conn.execute("INSERT INTO meta (key, value) VALUES ('kept', 'yes')")
    conn.close()
    summary = index(repo)
    with sqlite3.connect(db_path) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        kept = conn.execute("SELECT value FROM meta WHERE key = 'kept'").fetchone()
    conn.close()
    assert (version, kept) == (store.SCHEMA_VERSION, ("yes",))
    assert summary.data["files"] == 6 and summary.history["commits"] == 6


def test_literal_commit_search_gives_the_same_answer_from_trigrams_or_a_scan(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repomap.search import records

    index(repo)
    queries = ["timeout", "30", "e", "Lefèvre <", "client.py\nmain", "absent text", 'a"b']
    with reading(repo) as db:
        by_trigrams = [search_commits(db, q, limit=100).as_dict() for q in queries]
        monkeypatch.setattr(records, "CANDIDATE_CAP", 0)  # every query scans
        by_scan = [search_commits(db, q, limit=100).as_dict() for q in queries]
    assert by_trigrams == by_scan
    assert [len(answer["results"]) for answer in by_trigrams[:2]] == [2, 1]
    assert by_trigrams[5]["results"] == [] and len(by_trigrams[2]["results"]) == 6


def test_commits_and_data_records_are_chunks_that_search_finds_in_words(repo: Path) -> None:
    index(repo)
    done = run_cli(
        "search", "when did we raise the timeout", "--mode", "lexical", "--root", repo, "--json"
    )
    assert done.returncode == 0, done.stderr
    top = json.loads(done.stdout)["results"][0]
    assert (top["kind"], top["name"], top["language"]) == (
        "commit", "client: raise the timeout to 30", "git",
    )  # fmt: skip
    assert top["path"] == "commit:" + git(repo, "rev-parse", "HEAD^1")
    found = run_cli("search", "ruff lint select", "--mode", "lexical", "--root", repo, "--json")
    assert json.loads(found.stdout)["results"][0]["path"] == "pyproject.toml"

    def chunk_counts() -> tuple[int, int, int, int]:
        with reading(repo) as db:
            return (
                db.scalar("SELECT count(*) FROM chunks WHERE commit_id IS NOT NULL"),
                db.scalar("SELECT count(*) FROM commits"),
                db.scalar("SELECT count(DISTINCT data_id) FROM chunks WHERE data_id IS NOT NULL"),
                db.scalar("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'merge'"),
            )

    assert chunk_counts() == (6, 6, 6, 1)
    git(repo, "commit", "-q", "--amend", "-m", "Bring the side work in", when=1_700_000_900)
    (repo / "events.jsonl").unlink()
    index(repo)
    assert chunk_counts() == (6, 6, 5, 0)  # the amended merge's chunk and words went with it


def test_the_mcp_server_sees_an_edited_data_file_before_it_answers(repo: Path) -> None:
    index(repo)
    server = build_server(config.resolve(repo, workers=1))
    workflow = repo / ".github" / "workflows" / "ci.yml"

    async def calls() -> tuple[Any, Any]:
        async with Client(server) as client:
            before = await client.call_tool("search_data", {"query": "pytest -x"})
            workflow.write_text("jobs:\n  test:\n    steps:\n      - run: tox -e py\n")
            after = await client.call_tool("search_data", {"query": "tox -e"})
            return before, after

    before, after = anyio.run(calls)
    assert [r["key"] for r in before.structured_content["results"]] == ["jobs.test.steps[1].run"]
    assert [r["key"] for r in after.structured_content["results"]] == ["jobs.test.steps[0].run"]


def test_yaml_merge_keys_add_the_keys_a_mapping_does_not_set() -> None:
    text = (
        "x-defaults: &defaults\n  image: app:1\n  restart: always\n"
        "services:\n  web:\n    <<: *defaults\n    restart: never\n"
    )
    keys = {r.key: r.fields[0][1] for r in parse("yaml", text).records}
    assert keys["services.web.image"] == "app:1"
    assert keys["services.web.restart"] == "never"
    assert "services.web.<<" not in keys


def test_commit_and_data_chunks_are_embedded_and_found_by_meaning(repo: Path) -> None:
    settings = config.resolve(repo, workers=1)
    pipeline.run(settings)
    embedded = pipeline.embed(settings)
    assert embedded.coverage == 1.0
    done = run_cli(
        "search", "when was the time limit raised", "--mode", "semantic", "--root", repo, "--json"
    )
    assert done.returncode == 0, done.stderr
    kinds = {(hit["kind"], hit["language"]) for hit in json.loads(done.stdout)["results"]}
    assert ("commit", "git") in kinds
    with reading(repo) as db:
        paths = {row[0] for row in db.conn.execute("SELECT path FROM vector_paths")}
    assert "pyproject.toml" in paths and any(path.startswith("commit:") for path in paths)
