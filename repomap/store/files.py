"""Reads of the `files` and `doc_files` tables (what is indexed, by path) and row counts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from repomap import paths
from repomap.paths import PathFilter
from repomap.store.connection import Store
from repomap.store.meta import get_meta
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
        path: IndexedFile(file_id, path, size, mtime_ns, file_hash, bool(text_indexed))
        for file_id, path, size, mtime_ns, file_hash, text_indexed in rows
    }


def indexed_docs(db: Store) -> dict[str, IndexedFile]:
    """The Markdown and text files in the docs index (schema v8), by path."""
    rows = db.conn.execute("SELECT id, path, size, mtime_ns, hash FROM doc_files")
    return {
        path: IndexedFile(doc_id, path, size, mtime_ns, file_hash, True)
        for doc_id, path, size, mtime_ns, file_hash in rows
    }


INDEXED_STATES_SQL = """SELECT path, size, mtime_ns, hash FROM files
    UNION ALL SELECT path, size, mtime_ns, hash FROM doc_files
    UNION ALL SELECT path, size, mtime_ns, hash FROM data_files"""
HASH_CHECKS = 20  # files whose only change is their mtime read to compare their hash


def changed_since_indexing(db: Store, root: Path) -> tuple[list[str], int]:
    """The indexed files (code, docs and data) that changed or are gone since indexing, and how many
    files the index holds. One stat each (~2.3 µs a file); a file whose size is the same but
    whose mtime moved (touched, or rewritten as it was) is read and hashed, up to HASH_CHECKS
    of them, so only a real change counts."""
    changed, total, checks = [], 0, HASH_CHECKS
    prefix = os.path.join(root, "")
    stat = os.stat
    for rel_path, size, mtime_ns, indexed_hash in db.conn.execute(INDEXED_STATES_SQL):
        total += 1
        try:
            found = stat(prefix + rel_path)
        except OSError:  # gone, or unreadable: either way the index no longer matches it
            changed.append(rel_path)
            continue
        if found.st_size == size and found.st_mtime_ns == mtime_ns:
            continue
        if found.st_size == size and checks > 0:
            checks -= 1
            if _same_bytes(prefix + rel_path, indexed_hash):
                continue
        changed.append(rel_path)
    return changed, total


def _same_bytes(path: str, indexed_hash: str) -> bool:
    from repomap.textfile import content_hash

    try:
        with open(path, "rb") as file:
            return content_hash(file.read()) == indexed_hash
    except OSError:
        return False


def counts(db: Store) -> dict[str, int]:
    """Rows per table and text elements per type, for summaries: as the last run stored them
    (store/writer.py keeps them up to date), else counted."""
    from repomap.store.writer import stored_counts

    if (stored := stored_counts(db)) is not None:
        return {"files": 0, "symbols": 0, "references": 0, **stored}
    result = {
        "files": db.scalar("SELECT count(*) FROM files"),
        "symbols": db.scalar("SELECT count(*) FROM symbols"),
        "references": db.scalar("SELECT count(*) FROM refs"),
    }
    names = {code: name for name, code in ELEMENT_TYPE_CODES.items()}
    result.update(dict.fromkeys(names.values(), 0))
    for code, count in db.conn.execute(
        "SELECT element_type, count(*) FROM code_text GROUP BY element_type"
    ):
        result[names[code]] = count
    return result


PATHS_SQL = "SELECT id, path FROM {table} WHERE path >= :low AND path < :high"


def ids_matching(
    db: Store, path_filter: PathFilter | None, *, table: str = "files", language: str | None = None
) -> list[int]:
    """Ids (ascending) of the rows of `files` or `doc_files` whose path passes the filter (None:
    every path) and, for files, in `language`; scans only the paths under the filter's prefix."""
    assert table in ("files", "doc_files", "data_files")
    sql = PATHS_SQL.format(table=table) + (" AND language = :language" if language else "")

    def read(prefix: str) -> dict[str, int]:
        params = {"low": prefix, "high": prefix + "\U0010ffff", "language": language}
        return {path: file_id for file_id, path in db.conn.execute(sql, params)}

    if path_filter is None:
        return sorted(read("").values())
    if path_filter.glob and "[" in path_filter.text:  # `pages/[slug].py`: that file, if any
        literal_filter = paths.parse_literal(path_filter.text)
        literal = ids_matching(db, literal_filter, table=table, language=language)
        if literal:
            return literal
    found = read(path_filter.prefix)  # what the filter can name from the root
    kept = path_filter.select(found)
    if not kept and path_filter.prefix and path_filter.tails:  # tails can be anywhere
        found = read("")
        kept = path_filter.select(found)
    return sorted(found[path] for path in kept)


def some_paths(db: Store, limit: int = 20) -> list[str]:
    """The first `limit` indexed code files' paths (in id order): enough to tell whether a
    tree is the one the index was read from, or a copy of it."""
    return [
        path for (path,) in db.conn.execute("SELECT path FROM files ORDER BY id LIMIT ?", (limit,))
    ]


def names_nothing(db: Store, raw: str) -> bool:
    """Whether a path filter as the user typed it names no indexed file, doc or data file (a
    typo, a folder outside the index): what an empty answer then says."""
    path_filter = paths.parse(raw, root=get_meta(db, "root"))
    if path_filter is None:
        return False
    return not any(
        ids_matching(db, path_filter, table=table) for table in ("files", "doc_files", "data_files")
    )


def holds_no_language(db: Store, language: str) -> bool:
    """Whether no indexed file is in `language` (code), or of that docs or data format: what
    an empty answer to `--lang` then says (`--lang cpp` on a C project answered nothing)."""
    return not any(
        db.conn.execute(f"SELECT 1 FROM {table} WHERE {column} = ? LIMIT 1", (language,)).fetchone()
        for table, column in (("files", "language"), ("doc_files", "format"), ("data_files", "format"))
    )  # fmt: skip


def filtered_ids(
    db: Store, raw: str | None, *, table: str = "files", language: str | None = None
) -> list[int] | None:
    """ids_matching() for a filter as the user typed it (an absolute path inside the indexed
    root is made relative); None when neither the path nor a language filters anything."""
    path_filter = paths.parse(raw, root=get_meta(db, "root"))
    if path_filter is None and language is None:
        return None
    return ids_matching(db, path_filter, table=table, language=language)
