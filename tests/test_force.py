"""A run that reads every file again (`repomap index --force`, or a new extractor version) empties
the code files' rows first and writes as a cold run does: the index it leaves is the one a cold
run makes, the docs', data files' and commits' words stay searchable, the files keep their ids
(and the vectors of unchanged chunks), and text indexes out of step with their rows are made
whole again rather than told to forget what they never held."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from conftest import run_cli, write_tree
from index_dump import check_integrity, full_dump
from test_records import commit, git

from repomap import config, store
from repomap.index import pipeline
from repomap.search.code import search_code

TREE = {
    "app/retry.py": (
        "def backoff_delay(attempt):\n"
        '    """How long to wait before the next attempt: doubled each time."""\n'
        "    # capped so a flaky server is not hammered\n"
        "    return min(2 ** attempt, 60)\n"
    ),
    "lib/ring.c": (
        "/* A ring buffer of bytes. */\n"
        "struct ring { int head; int tail; };\n\n"
        "int ring_push(struct ring *r, int byte) { r->head++; return byte; }\n"
    ),
    "src/lib.rs": "/// Parses a quoted string.\npub fn quoted(s: &str) -> &str { s }\n",
    "docs/guide.md": "# Guide\n\nThe zeppelin section explains mooring.\n",
    "config/settings.json": '{"harbour": {"moorings": 12}}\n',
}


def _index(root: Path, db: Path, force: bool = False) -> pipeline.Summary:
    return pipeline.run(config.resolve(root, db, workers=1), force=force)


def _chunk_rows(db: Path, words: str) -> list[int]:
    with closing(sqlite3.connect(db)) as conn:
        return [row for (row,) in conn.execute("SELECT rowid FROM chunks_fts(?)", (words,))]


def _check_chunk_words(db: Path) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")


def _file_ids(db: Path) -> dict[str, int]:
    with closing(sqlite3.connect(db)) as conn:
        return dict(conn.execute("SELECT path, id FROM files"))


def _repo(root: Path) -> Path:
    write_tree(root, TREE)
    git(root, "init", "-q", "-b", "main")
    commit(root, "Teach the lighthouse keeper to count", 1_700_000_000)
    return root


def test_a_forced_run_leaves_the_index_a_cold_run_makes(tmp_path):
    root = _repo(tmp_path / "repo")
    forced, cold = tmp_path / "forced.db", tmp_path / "cold.db"
    _index(root, forced)
    ids = _file_ids(forced)
    (root / "app" / "extra.py").write_text("def added():\n    return 'new'\n", encoding="utf-8")
    (root / "src" / "lib.rs").unlink()
    summary = _index(root, forced, force=True)
    assert (summary.added, summary.modified, summary.removed) == (1, 2, 1)
    _index(root, cold)
    assert full_dump(forced) == full_dump(cold)
    check_integrity(forced)
    _check_chunk_words(forced)
    # the files read again keep their ids; a new one takes a fresh id after them
    after = _file_ids(forced)
    assert {path: after[path] for path in ("app/retry.py", "lib/ring.c")} == {
        path: ids[path] for path in ("app/retry.py", "lib/ring.c")
    }
    assert after["app/extra.py"] > max(ids.values())
    # every kind of chunk is found by its words: code, a docs section, a data file, a commit
    for words in ("backoff", "ring", "zeppelin", "harbour", "lighthouse"):
        assert len(_chunk_rows(forced, words)) == len(_chunk_rows(cold, words)) > 0, words
    with store.reading(forced) as db:
        found = search_code(db, "how long to wait before retrying", mode="lexical", log=False)
    assert found.hits[0].path == "app/retry.py"


def test_a_forced_run_makes_text_indexes_out_of_step_with_their_rows_whole(tmp_path):
    """A text index told to forget values it never held is left corrupt (FTS5 trusts the caller):
    a row changed behind the index's back made every later rewrite of its file corrupt it
    further. A forced run no longer reads the old rows back, so it is the way out."""
    root = write_tree(tmp_path / "repo", TREE)
    db = tmp_path / "index.db"
    _index(root, db)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(
            "UPDATE code_text SET content = 'tampered words' WHERE content LIKE '%capped%'"
        )
        conn.commit()
    result = run_cli("index", root, "--db", db, "--force", "--json")
    assert result.returncode == 0, result.stderr
    check_integrity(db)
    with closing(sqlite3.connect(db)) as conn:
        hits = conn.execute(
            "SELECT count(*) FROM code_text_fts WHERE code_text_fts MATCH 'capped'"
        ).fetchone()
    assert hits == (1,)


def test_a_forced_run_keeps_the_vectors_of_chunks_whose_text_did_not_change(tmp_path):
    root = write_tree(tmp_path / "repo", TREE)
    db = tmp_path / "index.db"
    assert run_cli("index", root, "--db", db, "--embed", "--json").returncode == 0
    with closing(sqlite3.connect(db)) as conn:
        before = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert before > 0
    (root / "app" / "retry.py").write_text(
        TREE["app/retry.py"].replace("doubled each time", "tripled each time"), encoding="utf-8"
    )
    summary = pipeline.run(config.resolve(root, db, workers=1), force=True)  # no embedding
    with closing(sqlite3.connect(db)) as conn:
        after = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert summary.vectors_dropped == 1  # the one chunk whose text changed
    assert after == before - 1
