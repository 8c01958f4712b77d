"""The record tables (schema v15): data files and their values, commits and their paths.

The only writer of `data_files`, `data_values`, `data_fts`, `commits`, `commit_paths`,
`commits_fts` and `commits_literal`, called inside a `Writer.batch()` (index/records.py and index/history.py make
the rows). The two FTS5 tables are contentless: a row is removed with FTS5's 'delete' command
and the values it was indexed with, read back from its table first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from repomap.store import chunk_texts
from repomap.store.connection import Store
from repomap.store.files import IndexedFile
from repomap.store.writer import ROWS_PER_FILE, ChunkFields, Writer

# record ordinal, key, field, value, line
ValueFields = tuple[int, str, str, str, int | None]
DATA_CHUNK_BASE = 1 << 56  # chunk ids of data files: + data_files.id * ROWS_PER_FILE + ordinal
COMMIT_CHUNK_BASE = 1 << 60  # chunk ids of commits: + commits.id


class DataRows(NamedTuple):
    """One data file's rows (made by index/records.py)."""

    path: str
    format: str
    size: int
    mtime_ns: int
    hash: str
    records: int
    note: str | None
    values: list[ValueFields]
    chunks: Sequence[ChunkFields]  # index/chunks.py data_chunks


class CommitRow(NamedTuple):
    """One commit as `git log` tells it (made by index/history.py)."""

    hash: str
    parents: str
    author_name: str
    author_email: str
    committer_name: str
    committer_email: str
    author_time: str
    commit_time: str
    subject: str
    body: str
    paths: tuple[str, ...]


INSERT_DATA_FILE_SQL = """INSERT INTO data_files (id, path, format, size, mtime_ns, hash, records,
    note, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_VALUE_SQL = """INSERT INTO data_values (id, file_id, record, key, field, value, line)
    VALUES (?, ?, ?, ?, ?, ?, ?)"""
INDEX_VALUES_SQL = """INSERT INTO data_fts (rowid, key, value)
    SELECT id, key, value FROM data_values WHERE id >= ? AND id < ?"""
UNINDEX_VALUES_SQL = """INSERT INTO data_fts (data_fts, rowid, key, value)
    SELECT 'delete', id, key, value FROM data_values WHERE id >= ? AND id < ?"""

INSERT_COMMIT_SQL = """INSERT INTO commits (id, hash, parents, author_name, author_email,
    committer_name, committer_email, author_time, commit_time, subject, body, paths)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INDEX_COMMITS_SQL = """INSERT INTO commits_fts (rowid, author, subject, body, paths)
    SELECT id, author_name || ' <' || author_email || '>', subject, body, paths FROM commits
    WHERE id >= ?"""
LITERAL_TEXT = """subject || char(10) || body || char(10) || author_name || ' <' || author_email
    || '>' || char(10) || paths"""
INDEX_LITERAL_SQL = f"""INSERT INTO commits_literal (rowid, text)
    SELECT id, {LITERAL_TEXT} FROM commits WHERE id >= ?"""
UNINDEX_LITERAL_SQL = f"""INSERT INTO commits_literal (commits_literal, rowid, text)
    SELECT 'delete', id, {LITERAL_TEXT} FROM commits WHERE id IN (SELECT value FROM json_each(?))"""
UNINDEX_COMMITS_SQL = """INSERT INTO commits_fts (commits_fts, rowid, author, subject, body, paths)
    SELECT 'delete', id, author_name || ' <' || author_email || '>', subject, body, paths
    FROM commits WHERE id IN (SELECT value FROM json_each(:ids))"""


INSERT_CHUNK_SQL = """INSERT INTO chunks (id, file_id, doc_id, data_id, commit_id, kind,
    start_line, end_line, is_test) VALUES (?, NULL, NULL, ?, ?, ?, ?, ?, ?)"""


def _chunk_span(file_id: int) -> tuple[int, int]:
    start = DATA_CHUNK_BASE + file_id * ROWS_PER_FILE
    return start, start + ROWS_PER_FILE


def _forget_chunks(writer: Writer, span: tuple[int, int]) -> None:
    chunk_texts.forget(writer.db, *span)
    writer.rewritten_chunks.append(span)  # their vectors may hold an old text
    writer.conn.execute("DELETE FROM chunks WHERE id >= ? AND id < ?", span)


def _insert_chunks(
    writer: Writer,
    ids: Sequence[int],
    owners: Sequence[tuple[int | None, int | None]],
    chunks: Sequence[ChunkFields],
    groups: Sequence[Sequence[int]],
) -> None:
    """Chunk rows (each with its data file or commit), and their words by group (a data file's
    ids, or one commit's)."""
    writer.conn.executemany(
        INSERT_CHUNK_SQL,
        (
            (chunk_id, data_id, commit_id, chunk[0], chunk[2], chunk[3], int(chunk[4]))
            for chunk_id, (data_id, commit_id), chunk in zip(ids, owners, chunks, strict=True)
        ),
    )
    words = dict(zip(ids, ((*chunk[5:9], chunk[1]) for chunk in chunks), strict=True))
    for group in groups:
        chunk_texts.write(writer.db, group, [words[chunk_id] for chunk_id in group])


def indexed_data(db: Store) -> dict[str, IndexedFile]:
    """The data files in the index (schema v15), by path."""
    rows = db.conn.execute("SELECT id, path, size, mtime_ns, hash FROM data_files")
    return {
        path: IndexedFile(file_id, path, size, mtime_ns, file_hash, True)
        for file_id, path, size, mtime_ns, file_hash in rows
    }


def data_totals(db: Store) -> tuple[int, int]:
    """Data files and records in the index."""
    row = db.conn.execute("SELECT count(*), coalesce(sum(records), 0) FROM data_files").fetchone()
    return int(row[0]), int(row[1])


def delete_data_file(writer: Writer, file_id: int) -> None:
    span = (file_id * ROWS_PER_FILE, (file_id + 1) * ROWS_PER_FILE)
    conn = writer.conn
    _forget_chunks(writer, _chunk_span(file_id))
    conn.execute(UNINDEX_VALUES_SQL, span)
    conn.execute("DELETE FROM data_values WHERE id >= ? AND id < ?", span)
    conn.execute("DELETE FROM data_files WHERE id = ?", (file_id,))


def touch_data_file(writer: Writer, file_id: int, size: int, mtime_ns: int) -> None:
    """The bytes are unchanged (same hash): only remember the new stat."""
    writer.conn.execute(
        "UPDATE data_files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id)
    )


def replace_data_file(writer: Writer, rows: DataRows, old_id: int | None, indexed_at: str) -> int:
    """Write one data file's rows in place of its old ones (inside Writer.batch())."""
    conn = writer.conn
    if old_id is not None:
        delete_data_file(writer, old_id)
        file_id = old_id
    else:
        file_id = writer.db.scalar("SELECT coalesce(max(id), 0) + 1 FROM data_files")
    conn.execute(
        INSERT_DATA_FILE_SQL,
        (file_id, rows.path, rows.format, rows.size, rows.mtime_ns, rows.hash, rows.records,
         rows.note, indexed_at),
    )  # fmt: skip
    base = file_id * ROWS_PER_FILE
    conn.executemany(
        INSERT_VALUE_SQL,
        (
            (base + ordinal, file_id, record, key, field, value, line)
            for ordinal, (record, key, field, value, line) in enumerate(
                rows.values[: ROWS_PER_FILE - 1]
            )
        ),
    )
    conn.execute(INDEX_VALUES_SQL, (base, base + ROWS_PER_FILE))
    first, _ = _chunk_span(file_id)
    kept = rows.chunks[: ROWS_PER_FILE - 1]
    ids = range(first, first + len(kept))
    _insert_chunks(writer, ids, [(file_id, None)] * len(kept), kept, [ids])
    return file_id


def indexed_commits(db: Store) -> int:
    return int(db.scalar("SELECT count(*) FROM commits"))


def delete_commits(writer: Writer, hashes: Iterable[str] | None) -> int:
    """Forget these commits (None: every commit); how many were removed."""
    conn = writer.conn
    if hashes is None:
        removed = int(writer.db.scalar("SELECT count(*) FROM commits"))
        _forget_chunks(writer, (COMMIT_CHUNK_BASE, COMMIT_CHUNK_BASE * 2))
        # contentless FTS5 tables take no DELETE: 'delete-all' is how they are emptied
        conn.execute("INSERT INTO commits_fts(commits_fts) VALUES ('delete-all')")
        conn.execute("INSERT INTO commits_literal(commits_literal) VALUES ('delete-all')")
        conn.execute("DELETE FROM commit_paths")
        conn.execute("DELETE FROM commits")
        return removed
    ids = json.dumps([
        row[0]
        for row in conn.execute(
            "SELECT id FROM commits WHERE hash IN (SELECT value FROM json_each(?))",
            (json.dumps(list(hashes)),),
        )
    ])  # fmt: skip
    conn.execute(UNINDEX_COMMITS_SQL, {"ids": ids})
    chunk_ids = json.dumps([COMMIT_CHUNK_BASE + commit_id for commit_id in json.loads(ids)])
    for chunk_id in json.loads(chunk_ids):  # a commit's chunk is a group of its own
        chunk_texts.forget(writer.db, chunk_id, chunk_id + 1)
    conn.execute("DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))", (chunk_ids,))
    conn.execute(UNINDEX_LITERAL_SQL, (ids,))
    conn.execute("DELETE FROM commit_paths WHERE commit_id IN (SELECT value FROM json_each(?))",
                 (ids,))  # fmt: skip
    cursor = conn.execute(
        "DELETE FROM commits WHERE id IN (SELECT value FROM json_each(?))", (ids,)
    )
    return cursor.rowcount


def insert_commits(
    writer: Writer, commits: Iterable[CommitRow], chunks: Iterable[ChunkFields] = ()
) -> int:
    """Add commits (oldest first gives the oldest the lowest id), each with its chunk (in the
    same order); how many were added."""
    conn = writer.conn
    first = writer.db.scalar("SELECT coalesce(max(id), 0) + 1 FROM commits")
    next_id = first
    rows = []
    paths: list[tuple[str, int]] = []
    for commit in commits:
        rows.append((next_id, *commit[:10], "\n".join(commit.paths)))
        paths.extend((path, next_id) for path in dict.fromkeys(commit.paths))
        next_id += 1
    conn.executemany(INSERT_COMMIT_SQL, rows)
    conn.executemany("INSERT OR IGNORE INTO commit_paths (path, commit_id) VALUES (?, ?)", paths)
    conn.execute(INDEX_COMMITS_SQL, (first,))
    conn.execute(INDEX_LITERAL_SQL, (first,))
    made = list(chunks)
    commit_ids = range(first, first + len(made))
    ids = [COMMIT_CHUNK_BASE + commit_id for commit_id in commit_ids]
    owners = [(None, commit_id) for commit_id in commit_ids]
    _insert_chunks(writer, ids, owners, made, [[chunk_id] for chunk_id in ids])
    return len(rows)
