"""The docs index: Markdown and `.txt` files by section, beside the code.

Python API (the CLI and the MCP server call these; each returns dataclasses, nothing prints):

- `update_docs(writer, files, max_file_size, force, indexed_at, redact=True)`: bring the
  `doc_files`, `headings` and `sections` tables up to date with the walked files,
  incrementally (a file whose size and mtime are unchanged is not read; one whose bytes hash
  the same is not parsed); credentials are redacted as in code text. Called by
  `repomap index` inside its run.
- `search_docs(db, root, query, limit=20)`: sections matching a query in search_text's query
  language (bare words ANDed, "phrases", prefix*, OR, NOT; querylang.py), best BM25 first, with
  `[MATCH]…[/MATCH]` snippets. The heading counts twice as much as the body. Sections nest (a
  `#` section contains its `##` sections), so a section overlapping a better-ranked hit from
  the same file is left out: each place in a document is reported once, at its best.
- `show_section(db, root, heading, file=None, max_lines=None)`: one section's text, found
  through the `headings` table (never by re-parsing) and read from disk only after checking
  that the file still has the bytes that were indexed (otherwise StaleIndex: never a wrong
  line range). `file` is a file, folder, path tail or glob, as for `repomap show NAME --file`.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repomap import store
from repomap.errors import BadArgument, PathNotFound, RepomapError, StaleIndex
from repomap.gateway.files import resolve_path, truncate
from repomap.index import markdown, secrets
from repomap.search import querylang

if TYPE_CHECKING:
    from repomap.index.discover import FoundFile
    from repomap.store import Store

# Suffix (lower case) -> doc_files.format; every other file is not a doc.
DOC_FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text"}
# Bump when parsing changes what is stored: every doc file is then re-read once.
DOCS_PARSER_VERSION = "2"
BATCH_FILES = 400
MAX_SUGGESTIONS = 5
EM_DASH_SEPARATOR = " \u2014 "  # "Heading — what it is about": the part after it is dropped


def doc_format(rel_path: str) -> str | None:
    """`markdown`, `text`, or None when the file is not indexed as a doc."""
    dot = rel_path.rfind(".")
    return DOC_FORMATS.get(rel_path[dot:].lower()) if dot > rel_path.rfind("/") else None


def _decode(raw: bytes) -> tuple[bytes | None, str | None]:
    """index.decode (BOMs, UTF-16, binary and encoding checks), the same rule as for code."""
    from repomap.index.pipeline import (
        decode,  # imported here: index imports this module, and queries skip it
    )

    return decode(raw)


def content_hash(raw: bytes) -> str:
    """The digest stored in doc_files.hash (the same blake2b-128 as files.hash)."""
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


# --- indexing --------------------------------------------------------------------------------


@dataclass(slots=True)
class DocsSummary:
    scanned: int = 0
    unchanged: int = 0
    added: int = 0
    modified: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, reason)
    files: int = 0  # doc files in the index after the run
    headings: int = 0
    sections: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts, for `repomap index --json` (the skipped files are in its own list)."""
        keys = ("scanned", "unchanged", "added", "modified", "removed", "files", "headings")
        return {key: getattr(self, key) for key in (*keys, "sections")}


def doc_rows(
    rel_path: str, fmt: str, raw: bytes, mtime_ns: int, redact: bool = True
) -> store.DocRows | str:
    """The rows of one doc file, or why it cannot be indexed; credentials redacted."""
    source, problem = _decode(raw)
    if source is None:
        return problem or "not text"
    text = source.decode("utf-8")
    document = markdown.parse(text) if fmt == "markdown" else markdown.plain_text_sections(text)
    clean = secrets.redact if redact else str  # as for code text: keys and PEM blocks go
    sections = []
    ordinal = 0
    for section in document.sections:
        ordinal = ordinal + 1 if section.level else 0
        sections.append(
            (
                ordinal,
                section.name,
                section.level,
                section.start_line,
                section.end_line,
                clean(section.content),
            )
        )
    return store.DocRows(
        rel_path, fmt, len(raw), mtime_ns, content_hash(raw), document.line_count, sections
    )


def update_docs(
    writer: store.Writer,
    files: Iterable[FoundFile],
    max_file_size: int,
    force: bool,
    indexed_at: str,
    redact: bool = True,
) -> DocsSummary:
    """Index new and changed doc files, drop removed ones; one transaction per batch."""
    db = writer.db
    force = force or store.get_meta(db, "docs_parser_version") != DOCS_PARSER_VERSION
    existing = store.indexed_docs(db)
    summary = DocsSummary()
    present: set[str] = set()
    pending: list[tuple[FoundFile, str]] = []
    for found in files:
        fmt = doc_format(found.rel_path)
        if fmt is None:
            continue
        summary.scanned += 1
        present.add(found.rel_path)
        old = existing.get(found.rel_path)
        if found.size > max_file_size:
            summary.skipped.append(
                (found.rel_path, f"larger than the limit ({max_file_size} bytes)")
            )
        elif old and not force and (old.size, old.mtime_ns) == (found.size, found.mtime_ns):
            summary.unchanged += 1
        else:
            pending.append((found, fmt))
    skipped_paths = {path for path, _ in summary.skipped}
    with writer.batch():
        for path, old in existing.items():
            if path not in present or path in skipped_paths:
                writer.delete_doc(old.id)
                summary.removed += path not in present
    for start in range(0, len(pending), BATCH_FILES):
        with writer.batch():
            for found, fmt in pending[start : start + BATCH_FILES]:
                old = existing.get(found.rel_path)
                _update_one(writer, found, fmt, old, force, indexed_at, redact, summary)
    with writer.batch():
        store.set_meta(db, {"docs_parser_version": DOCS_PARSER_VERSION})
    summary.files, summary.headings, summary.sections = _totals(db)
    return summary


def _update_one(
    writer: store.Writer,
    found: FoundFile,
    fmt: str,
    old: store.IndexedFile | None,
    force: bool,
    indexed_at: str,
    redact: bool,
    summary: DocsSummary,
) -> None:
    from repomap.index.discover import (
        read_file,  # here: queries import this module, and skip pathspec
    )

    raw, problem = read_file(found.path)  # never blocks on a FIFO swapped in since the walk
    if raw is None:
        summary.skipped.append((found.rel_path, problem or "unreadable"))
        if old is not None:
            writer.delete_doc(old.id)
        return
    if old is not None and not force and content_hash(raw) == old.hash:
        summary.unchanged += 1
        writer.touch_doc(old.id, len(raw), found.mtime_ns)
        return
    rows = doc_rows(found.rel_path, fmt, raw, found.mtime_ns, redact)
    if isinstance(rows, str):
        summary.skipped.append((found.rel_path, rows))
        if old is not None:
            writer.delete_doc(old.id)
        return
    writer.replace_doc(rows, old.id if old else None, indexed_at)
    if old is None:
        summary.added += 1
    else:
        summary.modified += 1


def _totals(db: Store) -> tuple[int, int, int]:
    conn = db.conn
    return (
        conn.execute("SELECT count(*) FROM doc_files").fetchone()[0],
        conn.execute("SELECT count(*) FROM headings").fetchone()[0],
        conn.execute("SELECT count(*) FROM sections").fetchone()[0],
    )


# --- search ----------------------------------------------------------------------------------


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
DOC_STATE_SQL = "SELECT size, mtime_ns, hash FROM doc_files WHERE path = ?"


def search_docs(db: Store, root: Path, query: str, limit: int = 20) -> DocSearch:
    """Sections matching `query`, best first; overlapping sections of one file reported once."""
    if limit < 1:
        raise BadArgument("--limit must be at least 1")
    parsed = querylang.parse(query)  # raises BadQuery; raw text in MATCH would be FTS5 syntax
    match = querylang.to_match(parsed)  # the one query language, shared with search_text
    if match is None:  # every word was punctuation: nothing a word index can find
        return DocSearch(query, [], [], parsed.ignored)
    hits = _best_places(db, match, limit)
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


def _best_places(db: Store, match: str, limit: int) -> list[tuple]:
    """The best `limit` hits, skipping any section that overlaps a better one of its file."""
    hits: list[tuple] = []
    kept: dict[str, list[tuple[int, int]]] = {}
    for row in db.conn.execute(SEARCH_DOCS_SQL, {"match": match}):
        _, file, _, _, start, end = row
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
        return bool(row) and content_hash(path.read_bytes()) == row[2]
    except OSError:
        return False


# --- show --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeadingMatch:
    file: str
    heading: str
    level: int
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class SectionView:
    query: str  # the heading asked for, after trimming and dropping " — …"
    file: str
    heading: str
    level: int
    start_line: int
    end_line: int
    content: str  # the section's lines as in the file, cut to max_lines with a marker
    more_lines: int  # lines left out by max_lines
    matches: list[HeadingMatch]  # every heading that matched; the first is shown

    @property
    def ambiguous(self) -> bool:
        return len(self.matches) > 1


class HeadingNotFound(RepomapError):
    pass


def headings_sql(condition: str, file_filter: str) -> str:
    """Headings meeting `condition` in files meeting `file_filter`, in path then line order."""
    return f"""SELECT file, text, level, start_line, end_line FROM headings
        WHERE {condition} AND {file_filter} ORDER BY file, start_line"""


BY_TEXT = "text = :text COLLATE NOCASE"  # uses the headings_text index
# "Install — from source" is found by "Install" too, as the query's own " — …" is dropped.
BY_DASHED_TEXT = "text LIKE :pattern ESCAPE '\\'"
ANY_FILE = ("1", {})


def normalize_heading(query: str) -> str:
    """Trim, drop everything from " — " (em dash between spaces) on, and leading `#` marks."""
    text = query.split(EM_DASH_SEPARATOR, 1)[0].strip()  # "Install — " loses its dash too
    return re.sub(r"^#{1,6}\s+", "", text)


def show_section(
    db: Store, root: Path, heading: str, file: str | None = None, max_lines: int | None = None
) -> SectionView:
    """The section under `heading` (case-insensitive; the first of several, in path order).

    `file` narrows the search as `repomap show NAME --file` does: a file, a folder, a path tail
    (`guide.md`) or a glob (`docs/*.md`); a path leading outside ROOT is refused.
    """
    query = normalize_heading(heading)
    if not query:
        raise BadArgument("the heading is empty; `repomap outline` lists the headings")
    files = doc_file_filter(db, root, file) if file is not None else ANY_FILE
    matches = find_headings(db, query, files)
    if not matches:
        raise HeadingNotFound(_not_found_message(db, query, file, files))
    chosen = matches[0]
    lines = _current_lines(db, root, chosen.file)
    content = "".join(line + "\n" for line in lines[chosen.start_line - 1 : chosen.end_line])
    cut = truncate(content, max_lines)
    return SectionView(
        query,
        chosen.file,
        chosen.heading,
        chosen.level,
        chosen.start_line,
        chosen.end_line,
        cut.text,
        cut.more_lines,
        matches,
    )


def find_headings(
    db: Store, query: str, files: tuple[str, dict] = ANY_FILE
) -> list[HeadingMatch]:
    """Headings equal to `query` ignoring case, in path order then line order."""
    file_filter, params = files
    rows = db.conn.execute(headings_sql(BY_TEXT, file_filter), {**params, "text": query}).fetchall()
    if not rows:
        pattern = re.sub(r"([\\%_])", r"\\\1", query) + EM_DASH_SEPARATOR + "%"
        sql = headings_sql(BY_DASHED_TEXT, file_filter)
        rows = db.conn.execute(sql, {**params, "pattern": pattern}).fetchall()
    if not rows and not query.isascii():  # NOCASE folds ASCII only
        folded = query.casefold()
        rows = [row for row in _all_headings(db, files) if _heading_key(row[1]) == folded]
    return [HeadingMatch(*row) for row in rows]


def _heading_key(text: str) -> str:
    return text.split(EM_DASH_SEPARATOR, 1)[0].strip().casefold()


def _all_headings(db: Store, files: tuple[str, dict]) -> list[tuple]:
    return db.conn.execute(headings_sql("1", files[0]), files[1]).fetchall()


def doc_file_filter(db: Store, root: Path, file: str) -> tuple[str, dict]:
    """SQL condition on headings.file (and params) for --file, checked against the index."""
    # symbols.py imports sqlite_utils (~150 ms of a CLI query): only --file needs its helpers.
    from repomap.search.symbols import path_filter_params, path_filter_sql

    inside = resolve_path(root, file)  # an escape is refused, not silently left unmatched
    if not inside.rel_path:
        return ANY_FILE
    params = path_filter_params(inside.rel_path)
    if db.conn.execute(DOC_FILTER_SQL.format(path_filter_sql("path")), params).fetchone():
        return path_filter_sql("file"), params
    if inside.path.is_file() and doc_format(inside.rel_path) is None:
        raise BadArgument(f"{file} is not a Markdown or text file; `repomap open {file}` shows it")
    if inside.path.is_file():
        raise StaleIndex(f"{file} is not in the index yet; run `repomap index` to add it")
    raise PathNotFound(
        f"no indexed Markdown or text file matches {file} (a file, a folder, a path tail or a "
        "glob); `repomap sources --pattern '*.md'` lists them"
    )


DOC_FILTER_SQL = "SELECT 1 FROM doc_files WHERE {} LIMIT 1"


def _not_found_message(db: Store, query: str, file: str | None, files: tuple) -> str:
    where = f" in {file}" if file else ""
    headings = _all_headings(db, files)
    if not headings and not db.conn.execute("SELECT 1 FROM doc_files LIMIT 1").fetchone():
        return f'no heading "{query}"{where}: the index has no Markdown files; run `repomap index`'
    similar = similar_headings(query, headings)
    if not similar:
        return f'no heading "{query}"{where}; `repomap outline` lists the headings'
    listed = ", ".join(f'"{text}" ({path}:{line})' for path, text, line in similar)
    return f'no heading "{query}"{where}; similar: {listed}'


def similar_headings(query: str, headings: list[tuple]) -> list[tuple[str, str, int]]:
    """Up to five (file, heading, line): prefix matches, then substrings, then close spellings."""
    folded = query.casefold()
    ranked: list[tuple[int, int, tuple]] = []
    for position, (path, text, _level, start, _end) in enumerate(headings):
        key = text.casefold()
        if key.startswith(folded):
            ranked.append((0, position, (path, text, start)))
        elif folded in key or (len(key) >= 3 and key in folded):  # "Install" for "Install guide"
            ranked.append((1, position, (path, text, start)))
    if not ranked:  # a typo: "instalation"
        keys = {row[1].casefold() for row in headings}
        close = set(difflib.get_close_matches(folded, keys, n=MAX_SUGGESTIONS, cutoff=0.75))
        ranked = [
            (2, position, (row[0], row[1], row[3]))
            for position, row in enumerate(headings)
            if row[1].casefold() in close
        ]
    return [entry for _, _, entry in sorted(ranked)[:MAX_SUGGESTIONS]]


def _current_lines(db: Store, root: Path, rel_path: str) -> list[str]:
    """The file's lines, after checking its bytes are the ones that were indexed."""
    row = db.conn.execute(DOC_STATE_SQL, (rel_path,)).fetchone()
    try:
        raw = (root / rel_path).read_bytes()
    except OSError:
        raise StaleIndex(
            f"{rel_path} was removed since it was indexed; run `repomap index` to update the index"
        ) from None
    if row is None or content_hash(raw) != row[2]:
        raise StaleIndex(
            f"{rel_path} changed since it was indexed, so its section lines are out of date; "
            "run `repomap index` and try again"
        )
    source, _ = _decode(raw)
    return markdown.split_lines((source or b"").decode("utf-8"))
