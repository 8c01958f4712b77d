"""Everything an index holds, keyed by what it means rather than by row ids, so two indexes of
the same tree compare equal however their ids were handed out (a resumed run vs a clean one)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from repomap.store import ROWS_PER_FILE

FTS_TABLES = ("code_text_fts", "code_text_literal", "sections")


def connect(db: Path) -> sqlite3.Connection:
    """A plain read connection, as an editor or a script would open the index."""
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=30)


def check_integrity(db: Path) -> None:
    """SQLite's own checks, and FTS5's: each full-text index agrees with its content."""
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        kept = conn.execute("SELECT value FROM meta WHERE key = 'literal_index'").fetchone()
        if kept == ("0",):  # a small tree's index keeps no trigram index: it must be empty
            assert conn.execute("SELECT count(*) FROM code_text_literal_terms").fetchone() == (0,)
            tables.discard("code_text_literal")
        for table in FTS_TABLES:
            if table in tables:  # raises "database disk image is malformed" on a mismatch
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
        conn.rollback()


def file_dumps(conn: sqlite3.Connection) -> dict[str, tuple]:
    """Per code or doc file: its row and every row that belongs to it alone, in one snapshot.

    Cross-file links (C++ declaration_id) are left out: they are set once per run, at its end.
    """
    conn.execute("BEGIN")  # one read transaction: what a reader sees at one instant
    try:
        return {**_code_files(conn), **_doc_files(conn)}
    finally:
        conn.rollback()


def _code_files(conn: sqlite3.Connection) -> dict[str, tuple]:
    symbols: dict[int, list] = {}
    for row in conn.execute(
        """SELECT s.file_id, s.name, s.qualified_name, s.kind, s.start_line, s.end_line,
        s.start_col, s.end_col, s.start_byte, s.end_byte, s.signature, p.qualified_name,
        p.start_line,
        coalesce((SELECT t.content FROM code_text t WHERE t.id = s.doc_text), s.doc),
        s.is_definition FROM symbols s
        LEFT JOIN symbols p ON p.id = s.parent_id"""
    ):
        symbols.setdefault(row[0], []).append(row[1:])
    refs: dict[int, list] = {}
    for row in conn.execute(
        """SELECT r.file_id, r.name, r.line, s.qualified_name FROM refs r
        LEFT JOIN symbols s ON s.id = r.symbol_id"""
    ):
        refs.setdefault(row[0], []).append(row[1:])
    texts: dict[int, list] = {}
    for row in conn.execute(
        """SELECT file_id, id - file_id * ?, line_number, end_line, element_type, symbol_name,
        content, subwords FROM code_text""",
        (ROWS_PER_FILE,),
    ):
        texts.setdefault(row[0], []).append(row[1:])
    return {
        path: (
            ("code", file_hash, language, size, line_count, status, note),
            sorted(symbols.get(file_id, []), key=repr),
            sorted(refs.get(file_id, []), key=repr),
            sorted(texts.get(file_id, [])),
        )
        for file_id, path, file_hash, language, size, line_count, status, note in conn.execute(
            "SELECT id, path, hash, language, size, line_count, status, note FROM files"
        )
    }


def _doc_files(conn: sqlite3.Connection) -> dict[str, tuple]:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'doc_files'").fetchone():
        return {}
    headings: dict[str, list] = {}
    for row in conn.execute("SELECT file, id % ?, text, level, start_line, end_line FROM headings",
                            (ROWS_PER_FILE,)):  # fmt: skip
        headings.setdefault(row[0], []).append(row[1:])
    sections: dict[str, list] = {}
    for row in conn.execute(
        "SELECT file, rowid % ?, section, content, start_line, end_line FROM sections",
        (ROWS_PER_FILE,),
    ):
        sections.setdefault(row[0], []).append(row[1:])
    return {
        path: (
            ("doc", file_hash, fmt, size, line_count),
            sorted(headings.get(path, [])),
            sorted(sections.get(path, [])),
        )
        for path, file_hash, fmt, size, line_count in conn.execute(
            "SELECT path, hash, format, size, line_count FROM doc_files"
        )
    }


def links_and_ranks(conn: sqlite3.Connection) -> dict[str, list]:
    """What a run computes over all files at its end: C++ declaration links, ranks, name stats."""
    return {
        "declarations": sorted(
            conn.execute(
                """SELECT f.path, s.qualified_name, s.start_line, df.path, d.start_line
                FROM symbols s JOIN files f ON f.id = s.file_id
                JOIN symbols d ON d.id = s.declaration_id JOIN files df ON df.id = d.file_id"""
            ).fetchall()
        ),
        "file_ranks": sorted(
            (path, round(rank, 9))
            for path, rank in conn.execute(
                "SELECT f.path, r.rank FROM file_ranks r JOIN files f ON f.id = r.file_id"
            )
        ),
        "symbol_ranks": sorted(
            (path, name, line, round(rank, 9))
            for path, name, line, rank in conn.execute(
                """SELECT f.path, s.qualified_name, s.start_line, r.rank FROM symbol_ranks r
                JOIN symbols s ON s.id = r.symbol_id JOIN files f ON f.id = s.file_id"""
            )
        ),
        "name_stats": sorted(conn.execute("SELECT * FROM name_stats").fetchall()),
    }


def full_dump(db: Path) -> dict:
    with closing(connect(db)) as conn:
        return {"files": file_dumps(conn), **links_and_ranks(conn)}
