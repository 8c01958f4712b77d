"""The chunks' words kept compressed (schema v16): every chunk's words read back as written,
chunks_fts fed and emptied through them, a v15 index migrated and filled again."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from index_dump import check_integrity

from repomap import store
from repomap.store import chunk_texts

ROWS = store.ROWS_PER_FILE


@pytest.fixture
def db(tmp_path: Path) -> Iterator[store.Store]:
    with store.writing(tmp_path / "index.db") as opened:
        yield opened


def _words(number: int) -> tuple[str, str, str, str]:
    return (
        f"Thing{number} thing",
        "src lib",
        f"def thing{number}()\nDoes ☃ {number}.",
        "alpha beta",
    )


def _matches(db: store.Store, query: str) -> list[int]:
    rows = db.conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid",
                           (query,))  # fmt: skip
    return [rowid for (rowid,) in rows]


@pytest.mark.parametrize(
    "ids",
    [
        [3 * ROWS + ordinal for ordinal in range(40)],  # a code file: 3 groups of 16
        [-(5 * ROWS + ordinal) for ordinal in range(17)],  # a doc: ids count down
        [chunk_texts.DATA_BASE + 2 * ROWS + ordinal for ordinal in range(16)],  # a data file
        [chunk_texts.COMMIT_BASE + 9],  # a commit's one chunk
    ],
)
def test_each_chunks_words_read_back_and_forgotten_whole(db: store.Store, ids: list[int]) -> None:
    words = [_words(number) for number in range(len(ids))]
    first, end = min(ids), max(ids) + 1
    with db.atomic():
        chunk_texts.write(db, ids, words)
        chunk_texts.index_pending(db)
    assert store.chunk_words(db, ids) == dict(zip(ids, words, strict=True))
    assert store.chunk_words(db, [ids[-1] + (1 if ids[-1] > 0 else -1)]) == {}
    assert _matches(db, "alpha") == sorted(ids)
    assert _matches(db, f"thing{len(ids) - 1}") == [ids[-1]]
    groups = db.scalar("SELECT count(*) FROM chunk_texts")
    assert groups == (len(ids) + 15) // 16
    with db.atomic():
        chunk_texts.forget(db, first, end)
    assert _matches(db, "alpha") == [] and store.chunk_words(db, ids) == {}
    assert db.scalar("SELECT count(*) FROM chunk_texts") == 0
    db.conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")


def test_words_forgotten_in_their_own_batch_never_reach_the_index(db: store.Store) -> None:
    """Queued words (not yet in chunks_fts) are dropped from the queue, not 'deleted' from
    FTS5 (which would corrupt it); a savepoint rolled back takes its queue with it."""
    kept = [ROWS + ordinal for ordinal in range(3)]
    gone = [2 * ROWS + ordinal for ordinal in range(3)]
    with db.atomic():
        chunk_texts.write(db, kept, [_words(1)] * 3)
        chunk_texts.write(db, gone, [_words(2)] * 3)
        chunk_texts.forget(db, 2 * ROWS, 3 * ROWS)
        with pytest.raises(RuntimeError), db.atomic():
            chunk_texts.write(db, [3 * ROWS], [_words(3)])
            raise RuntimeError("this file fails")
        chunk_texts.index_pending(db)
    assert _matches(db, "alpha") == kept
    assert _matches(db, "thing3") == []
    db.conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")


def test_a_v15_index_migrates_and_its_next_run_makes_every_chunk_again(
    make_repo, index, tmp_path: Path
) -> None:
    """An index of schema v15 (chunk words as text beside a content FTS table) is migrated to
    v16: its chunks are dropped, every file read again, and the answers are the same."""
    files = {
        "net/cache.py": '"""A cache."""\n\ndef evict_oldest(entries):\n    """Drop the oldest."""\n'
        "    return entries[1:]\n",
        "docs/guide.md": "# Guide\n\n## Upgrading\n\nRun the migrations first.\n",
    }
    root = make_repo(files)
    index(root)
    db_path = root / ".repomap" / "index.db"
    with closing(sqlite3.connect(db_path)) as conn:
        fresh = conn.execute("SELECT id, kind, start_line FROM chunks ORDER BY id").fetchall()
    old = tmp_path / "v15.db"
    with closing(sqlite3.connect(old)) as conn:
        store.migrate(conn, to=15)
        conn.execute(
            "INSERT INTO files (id, path, language, size, mtime_ns, hash, line_count, status, "
            "indexed_at, text_indexed) VALUES (1, 'net/cache.py', 'python', 1, 1, 'x', 5, 'ok', "
            "'then', 1)"
        )
        conn.execute(
            "INSERT INTO chunks (id, file_id, kind, name, start_line, end_line, is_test, hash, "
            "title, place, head, body) VALUES (?, 1, 'function', 'evict_oldest', 3, 5, 0, ?, "
            "'evict_oldest evict oldest', 'net cache', 'def evict_oldest(entries)', 'entries')",
            (ROWS, "ab" * 32),
        )
        conn.execute("INSERT INTO chunks_fts (rowid, title, place, head, body) "
                     "SELECT id, title, place, head, body FROM chunks")  # fmt: skip
        conn.commit()
    index(root, db=old)
    with closing(sqlite3.connect(old)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
        migrated = conn.execute("SELECT id, kind, start_line FROM chunks ORDER BY id").fetchall()
    check_integrity(old)
    assert migrated == fresh and len(fresh) >= 3
    with store.reading(old) as db:
        words = store.chunk_words(db, [row[0] for row in fresh])
        assert sorted(words) == [row[0] for row in fresh]
        named = [chunk_id for chunk_id, found in words.items() if found[4] == "evict_oldest"]
        assert len(named) == 1 and _matches(db, "evict") == named


def test_a_symbols_doc_is_kept_once_as_its_text_row_and_read_back_whole(make_repo, index) -> None:
    """A docstring is a code_text row and the symbol's doc: kept in code_text, named by
    symbols.doc_text ('' in doc), read back by every symbol lookup."""
    from conftest import run_cli

    root = make_repo({
        "pool.py": 'def drain(pool):\n    """Empty the pool.\n\n    Every idle one is closed."""\n'
                   "    return []\n",
    })  # fmt: skip
    index(root)
    with closing(sqlite3.connect(root / ".repomap" / "index.db")) as conn:
        doc, doc_text, content = conn.execute(
            "SELECT s.doc, s.doc_text, t.content FROM symbols s "
            "JOIN code_text t ON t.id = s.doc_text WHERE s.name = 'drain'"
        ).fetchone()
    assert doc == "" and doc_text is not None
    assert content.startswith("Empty the pool.") and "Every idle one is closed." in content
    done = run_cli("symbols", "drain", "--json", "--root", root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["doc"] == "Empty the pool."
