"""What `repomap status` and `repomap doctor` read about an index file: its size per table,
SQLite's quick integrity check, the FTS5 indexes' own consistency check, and copying an index
into a new file (a new branch scope starts from the nearest one). Read-only except for the
FTS5 check, which SQLite runs as an INSERT and is rolled back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from repomap.errors import CorruptIndex
from repomap.store.connection import Store, _connect, has_sqlite_header
from repomap.store.literal import LITERAL_INDEX_META, kept

# The FTS5 tables whose index must agree with their content (`rank = 1`: compare them too).
FTS_TABLES = ("code_text_fts", "code_text_literal", "chunks_fts", "sections")

TABLE_SIZES_SQL = """SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC, name"""


def table_sizes(db: Store) -> dict[str, int]:
    """Bytes on disk per table and index (SQLite's dbstat), largest first."""
    return {name: int(size) for name, size in db.conn.execute(TABLE_SIZES_SQL)}


def quick_check(path: Path) -> list[str]:
    """SQLite's `PRAGMA quick_check` on the file: [] when it passes, else its findings (or why
    the file could not be read). Opens the file read-only; never migrates it."""
    if not has_sqlite_header(path):
        return [f"{path} is not a SQLite database"]
    try:
        conn = _connect(path, readonly=True)
    except sqlite3.Error as error:
        return [f"cannot open: {error}"]
    try:
        rows = [row[0] for row in conn.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as error:
        return [str(error)]
    finally:
        conn.close()
    return [] if rows == ["ok"] else rows


def fts_problems(path: Path) -> list[str] | None:
    """FTS5's `integrity-check` (index against content) of each text index: [] when all agree,
    else one line per table that does not; None when the file cannot be opened for writing
    (SQLite runs the check as an INSERT, rolled back here, so it needs a writable file)."""
    try:
        conn = _connect(path, readonly=False)
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return None
    except sqlite3.DatabaseError as error:
        return [str(error)]
    problems = []
    try:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        for table in FTS_TABLES:
            if table not in tables or (table == "code_text_literal" and not _literal_kept(conn)):
                continue
            try:
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.OperationalError as error:
                if "readonly" in str(error):  # SQLite opened it read-only after all
                    return None
                problems.append(f"{table}: {error}")
            except sqlite3.DatabaseError as error:
                problems.append(f"{table}: {error}")
        if "chunk_texts" in tables:  # v16: chunks_fts is contentless, its check sees no rows
            problems += _chunk_problems(conn)
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
    return problems


def _literal_kept(conn: sqlite3.Connection) -> bool:
    """Whether code_text_literal holds the text (v19: a small tree's index keeps it empty, and
    FTS5's check would find every row missing)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (LITERAL_INDEX_META,)).fetchone()
    return kept(row[0] if row else None)


# Since v16 chunks_fts keeps no content, so FTS5's check cannot compare it with `chunks`: the
# rows it indexed (its docsize table, one row each) must be the chunks, no more, no fewer.
CHUNKS_NOT_INDEXED_SQL = """SELECT count(*) FROM chunks c
    WHERE NOT EXISTS (SELECT 1 FROM chunks_fts_docsize d WHERE d.id = c.id)"""
INDEXED_NOT_CHUNKS_SQL = """SELECT count(*) FROM chunks_fts_docsize d
    WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = d.id)"""


def _chunk_problems(conn: sqlite3.Connection) -> list[str]:
    try:
        missing = conn.execute(CHUNKS_NOT_INDEXED_SQL).fetchone()[0]
        extra = conn.execute(INDEXED_NOT_CHUNKS_SQL).fetchone()[0]
    except sqlite3.DatabaseError as error:
        return [f"chunks_fts: {error}"]
    if missing or extra:
        return [f"chunks_fts: {extra} indexed rows are not chunks, {missing} chunks not indexed"]
    return []


def copy_index(source: Path, target: Path) -> None:
    """A consistent copy of the index at `source` (SQLite's online backup: a writer may run) in
    a new file `target`; CorruptIndex when `source` cannot be read."""
    partial = target.with_name(target.name + ".partial")
    try:
        reader = _connect(source, readonly=True)
        writer = sqlite3.connect(partial)
        try:
            reader.backup(writer)
        finally:
            writer.close()
            reader.close()
    except sqlite3.DatabaseError as error:
        partial.unlink(missing_ok=True)
        raise CorruptIndex(f"cannot copy the index at {source} ({error})") from None
    partial.replace(target)
