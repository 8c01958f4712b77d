"""Searching the docs index: `search_docs(db, root, query, limit=20)`.

Sections matching a query in search_text's query language (bare words ANDed, "phrases",
prefix*, OR, NOT; querylang.py), best BM25 first, with `[MATCH]…[/MATCH]` snippets. The heading
counts twice as much as the body. Sections nest (a `#` section contains its `##` sections), so
a section overlapping a better-ranked hit from the same file is left out: each place in a
document is reported once, at its best.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repomap import paths, textfile
from repomap.errors import BadArgument
from repomap.search import querylang
from repomap.store import Store


@dataclass(frozen=True, slots=True)
class DocHit:
    file: str
    section: str  # the heading text; "" for text before the first heading and for .txt files
    snippet: str  # from the body, on one line, with [MATCH]…[/MATCH] around matched terms
    score: float  # BM25, higher is better
    start_line: int | None  # the section's lines; None when the file changed since indexing
    end_line: int | None
    stale: bool  # the file changed or vanished since it was indexed: run `repomap index`


@dataclass(frozen=True, slots=True)
class DocSearch:
    query: str
    hits: list[DocHit]
    stale_files: list[str]  # result files that changed since indexing
    ignored: tuple[str, ...] = ()  # query words without letters or digits, left out


# Ranked by FTS5's own `rank` column (weights per column file, section, content: a heading
# counts twice as much as body text), so rows come out sorted without SQLite computing every
# match's snippet first; snippets are made only for the hits kept (SNIPPET_SQL).
SEARCH_DOCS_SQL = """SELECT rowid, file, section, rank, start_line, end_line FROM sections
    WHERE sections MATCH :match AND rank MATCH 'bm25(0.0, 2.0, 1.0)' ORDER BY rank"""
SNIPPET_SQL = """SELECT snippet(sections, 2, '[MATCH]', '[/MATCH]', '…', 20) FROM sections
    WHERE sections MATCH :match AND rowid = :rowid"""
DOC_PATHS_SQL = "SELECT path FROM doc_files"
DOC_STATE_SQL = "SELECT size, mtime_ns, hash FROM doc_files WHERE path = ?"


def search_docs(
    db: Store, root: Path, query: str, limit: int = 20, path: str | None = None
) -> DocSearch:
    """Sections matching `query`, best first; overlapping sections of one file reported once.
    `path` keeps only the files under a path filter (paths.py)."""
    if limit < 1:
        raise BadArgument("--limit must be at least 1")
    parsed = querylang.parse(query)  # raises BadQuery; raw text in MATCH would be FTS5 syntax
    match = querylang.to_match(parsed)  # the one query language, shared with search_text
    if match is None:  # every word was punctuation: nothing a word index can find
        return DocSearch(query, [], [], parsed.ignored)
    path_filter = paths.parse(path, root)
    wanted = None
    if path_filter is not None:
        wanted = set(path_filter.select(path for (path,) in db.conn.execute(DOC_PATHS_SQL)))
    hits = _best_places(db, match, limit, wanted)
    stale = {file for file in {hit[1] for hit in hits} if not _unchanged(db, root, file)}
    return DocSearch(
        query,
        [
            DocHit(
                file,
                section,
                _snippet(db, match, rowid),
                round(-rank, 6),
                *((None, None) if file in stale else (start, end)),
                file in stale,
            )
            for rowid, file, section, rank, start, end in hits
        ],
        sorted(stale),
        parsed.ignored,
    )


def _best_places(db: Store, match: str, limit: int, wanted: set[str] | None) -> list[tuple]:
    """The best `limit` hits, skipping any section that overlaps a better one of its file."""
    hits: list[tuple] = []
    kept: dict[str, list[tuple[int, int]]] = {}
    for row in db.conn.execute(SEARCH_DOCS_SQL, {"match": match}):
        _, file, _, _, start, end = row
        if wanted is not None and file not in wanted:
            continue
        ranges = kept.setdefault(file, [])
        if any(start <= other_end and other_start <= end for other_start, other_end in ranges):
            continue
        ranges.append((start, end))
        hits.append(row)
        if len(hits) == limit:
            break
    return hits


def _snippet(db: Store, match: str, rowid: int) -> str:
    """The hit's best fragment of body text, on one line (newlines and indentation collapsed)."""
    row = db.conn.execute(SNIPPET_SQL, {"match": match, "rowid": rowid}).fetchone()
    return " ".join((row[0] if row else "").split())


def _unchanged(db: Store, root: Path, rel_path: str) -> bool:
    """The file still has the bytes that were indexed (stat first; hash only if it moved)."""
    row = db.conn.execute(DOC_STATE_SQL, (rel_path,)).fetchone()
    path = root / rel_path
    try:
        stat = path.stat()
        if row and (stat.st_size, stat.st_mtime_ns) == (row[0], row[1]):
            return True
        return bool(row) and textfile.content_hash(path.read_bytes()) == row[2]
    except OSError:
        return False
