"""Reads of the `files` and `doc_files` tables (what is indexed, by path) and row counts."""

from __future__ import annotations

from typing import NamedTuple

from repomap.store.connection import Store
from repomap.store.writer import ELEMENT_TYPE_CODES


class IndexedFile(NamedTuple):
    id: int
    path: str
    size: int
    mtime_ns: int
    hash: str
    text_indexed: bool


def indexed_files(db: Store) -> dict[str, IndexedFile]:
    rows = db.conn.execute("SELECT id, path, size, mtime_ns, hash, text_indexed FROM files")
    return {
        row[1]: IndexedFile(row[0], row[1], row[2], row[3], row[4], bool(row[5])) for row in rows
    }


def indexed_docs(db: Store) -> dict[str, IndexedFile]:
    """The Markdown and text files in the docs index (schema v8), by path."""
    rows = db.conn.execute("SELECT id, path, size, mtime_ns, hash FROM doc_files")
    return {row[1]: IndexedFile(row[0], row[1], row[2], row[3], row[4], True) for row in rows}


def counts(db: Store) -> dict[str, int]:
    """Rows per table and text elements per type, for summaries."""
    conn = db.conn
    result = {
        "files": conn.execute("SELECT count(*) FROM files").fetchone()[0],
        "symbols": conn.execute("SELECT count(*) FROM symbols").fetchone()[0],
        "references": conn.execute("SELECT count(*) FROM refs").fetchone()[0],
    }
    names = {code: name for name, code in ELEMENT_TYPE_CODES.items()}
    for code, count in conn.execute(
        "SELECT element_type, count(*) FROM code_text GROUP BY element_type"
    ):
        result[names[code]] = count
    return result
