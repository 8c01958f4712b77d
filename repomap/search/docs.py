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
from typing import NamedTuple

from repomap import paths, textfile
from repomap.limits import check_limit
from repomap.search import querylang
from repomap.search.text import alone_note
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
    notes: tuple[str, ...] = ()  # with no hit: how many sections hold each word alone


class _Place(NamedTuple):
    """A SEARCH_DOCS_SQL row, in its column order."""

    rowid: int
    file: str
    section: str
    rank: float  # BM25 with FTS5's sign: lower is better
    start_line: int
    end_line: int


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
    check_limit(limit)
    parsed = querylang.parse(query)  # raises BadQuery; raw text in MATCH would be FTS5 syntax
    match = querylang.to_match(parsed)  # the one query language, shared with search_text
    if match is None:  # every word was punctuation: nothing a word index can find
        return DocSearch(query, [], [], parsed.ignored)
    path_filter = paths.parse(path, root)
    wanted = None
    if path_filter is not None:
        wanted = set(path_filter.select(path for (path,) in db.conn.execute(DOC_PATHS_SQL)))
    places = _best_places(db, match, limit, wanted)
    stale = {file for file in {place.file for place in places} if not _unchanged(db, root, file)}
    return DocSearch(
        query,
        [
            DocHit(
                place.file,
                place.section,
                _snippet(db, match, place.rowid),
                round(-place.rank, 6),
                None if place.file in stale else place.start_line,
                None if place.file in stale else place.end_line,
                place.file in stale,
            )
            for place in places
        ],
        sorted(stale),
        parsed.ignored,
        () if places else tuple(_alone(db, parsed)),
    )


def _alone(db: Store, parsed: querylang.Query) -> list[str]:
    # Files, not sections: a section's text holds its subsections', so one word counts twice.
    return alone_note(db.conn, "sections", parsed, "docs section", "files", "count(DISTINCT file)")


def _best_places(db: Store, match: str, limit: int, wanted: set[str] | None) -> list[_Place]:
    """The best `limit` hits, skipping any section that overlaps a better one of its file."""
    places: list[_Place] = []
    kept: dict[str, list[tuple[int, int]]] = {}
    for row in db.conn.execute(SEARCH_DOCS_SQL, {"match": match}):
        _, file, _, _, start, end = row
        if wanted is not None and file not in wanted:
            continue
        ranges = kept.setdefault(file, [])
        if any(start <= other_end and other_start <= end for other_start, other_end in ranges):
            continue
        ranges.append((start, end))
        places.append(_Place(*row))
        if len(places) == limit:
            break
    return places


def _snippet(db: Store, match: str, rowid: int) -> str:
    """The hit's best fragment of body text, on one line (newlines and indentation collapsed)."""
    fragment = db.scalar(SNIPPET_SQL, {"match": match, "rowid": rowid})
    return " ".join((fragment or "").split())


def _unchanged(db: Store, root: Path, rel_path: str) -> bool:
    """The file still has the bytes that were indexed (stat first; hash only if it moved)."""
    row = db.conn.execute(DOC_STATE_SQL, (rel_path,)).fetchone()
    if row is None:
        return False
    size, mtime_ns, indexed_hash = row
    path = root / rel_path
    try:
        stat = path.stat()
        if (stat.st_size, stat.st_mtime_ns) == (size, mtime_ns):
            return True
        return textfile.content_hash(path.read_bytes()) == indexed_hash
    except OSError:
        return False
