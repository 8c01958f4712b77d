"""One Markdown section's text: `show_section(db, root, heading, file=None, max_lines=None,
nth=None)`.

Found through the `headings` table (never by re-parsing) and read from disk only after checking
that the file still has the bytes that were indexed (otherwise StaleIndex: never a wrong line
range). `file` is a file, folder, path tail or glob, as for `repomap show NAME --file`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from repomap import paths, textfile
from repomap.errors import BadArgument, NotFound, PathNotFound, StaleIndex
from repomap.gateway.files import resolve_path, truncate
from repomap.languages import doc_format
from repomap.search.docs import DOC_PATHS_SQL
from repomap.store import Store

MAX_SUGGESTIONS = 5
EM_DASH_SEPARATOR = " \u2014 "  # "Heading — what it is about": the part after it is dropped


@dataclass(frozen=True, slots=True)
class HeadingMatch:
    """A headings_sql() row, in its column order."""

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
    matches: list[HeadingMatch]  # every heading that matched, in path then line order
    nth: int = 1  # which of them is shown (1-based)
    chosen: bool = False  # the caller picked it (nth): no warning that others match

    @property
    def ambiguous(self) -> bool:
        """Several headings match and nothing said which one: the first is shown."""
        return len(self.matches) > 1 and not self.chosen


class HeadingNotFound(NotFound):
    pass


def headings_sql(condition: str, file_filter: str) -> str:
    """Headings meeting `condition` in files meeting `file_filter`, in path then line order."""
    return f"""SELECT file, text, level, start_line, end_line FROM headings
        WHERE {condition} AND {file_filter} ORDER BY file, start_line"""


BY_TEXT = "text = :text COLLATE NOCASE"  # uses the headings_text index
# "Install — from source" is found by "Install" too, as the query's own " — …" is dropped.
BY_DASHED_TEXT = "text LIKE :pattern ESCAPE '\\'"
FileFilter = tuple[str, dict[str, str]]  # an SQL condition on headings.file, its parameters
ANY_FILE: FileFilter = ("1", {})
DOC_HASH_SQL = "SELECT hash FROM doc_files WHERE path = ?"


def normalize_heading(query: str) -> str:
    """Trim, drop everything from " — " (em dash between spaces) on, and leading `#` marks."""
    text = query.split(EM_DASH_SEPARATOR, 1)[0].strip()  # "Install — " loses its dash too
    return re.sub(r"^#{1,6}\s+", "", text)


def show_section(
    db: Store,
    root: Path,
    heading: str,
    file: str | None = None,
    max_lines: int | None = None,
    nth: int | None = None,
) -> SectionView:
    """The section under `heading` (case-insensitive): the first of several in path then line
    order, or the `nth` (1-based), so a heading repeated in one file can be chosen too.

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
    if nth is not None and not 1 <= nth <= len(matches):
        where = f" in {file}" if file else ""
        raise BadArgument(
            f'nth is {nth}, but {len(matches)} heading{"s" * (len(matches) > 1)} match "{query}"'
            f"{where}: give 1 to {len(matches)}"
        )
    chosen = matches[(nth or 1) - 1]
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
        nth or 1,
        nth is not None,
    )


def find_headings(db: Store, query: str, files: FileFilter = ANY_FILE) -> list[HeadingMatch]:
    """Headings equal to `query` ignoring case, in path order then line order."""
    file_filter, params = files
    rows = db.conn.execute(headings_sql(BY_TEXT, file_filter), {**params, "text": query}).fetchall()
    if not rows:
        pattern = re.sub(r"([\\%_])", r"\\\1", query) + EM_DASH_SEPARATOR + "%"
        sql = headings_sql(BY_DASHED_TEXT, file_filter)
        rows = db.conn.execute(sql, {**params, "pattern": pattern}).fetchall()
    if not rows and not query.isascii():  # NOCASE folds ASCII only
        folded = query.casefold()
        return [
            match for match in _all_headings(db, files) if _heading_key(match.heading) == folded
        ]
    return [HeadingMatch(*row) for row in rows]


def _heading_key(text: str) -> str:
    return text.split(EM_DASH_SEPARATOR, 1)[0].strip().casefold()


def _all_headings(db: Store, files: FileFilter) -> list[HeadingMatch]:
    file_filter, params = files
    return [HeadingMatch(*row) for row in db.conn.execute(headings_sql("1", file_filter), params)]


def doc_file_filter(db: Store, root: Path, file: str) -> FileFilter:
    """SQL condition on headings.file (and params) for --file, checked against the index."""
    path_filter = paths.parse(file, root)
    if path_filter is None:
        return ANY_FILE
    # An escape (a link out of the root) is refused, not silently left unmatched.
    inside = None if path_filter.glob else resolve_path(root, path_filter.text)
    matched = path_filter.select(path for (path,) in db.conn.execute(DOC_PATHS_SQL))
    if matched:
        return "file IN (SELECT value FROM json_each(:files))", {"files": json.dumps(matched)}
    if inside is not None and inside.path.is_file() and doc_format(inside.rel_path) is None:
        raise BadArgument(f"{file} is not a Markdown or text file; `repomap open {file}` shows it")
    if inside is not None and inside.path.is_file():
        raise StaleIndex(f"{file} is not in the index yet; run `repomap index` to add it")
    raise PathNotFound(
        f"no indexed Markdown or text file matches {file} (a file, a folder, a path tail or a "
        "glob); `repomap sources --pattern '*.md'` lists them"
    )


def _not_found_message(db: Store, query: str, file: str | None, files: FileFilter) -> str:
    where = f" in {file}" if file else ""
    headings = _all_headings(db, files)
    if not headings and not db.conn.execute("SELECT 1 FROM doc_files LIMIT 1").fetchone():
        return f'no heading "{query}"{where}: the index has no Markdown files; run `repomap index`'
    similar = similar_headings(query, headings)
    if not similar:
        return f'no heading "{query}"{where}; `repomap outline` lists the headings'
    listed = ", ".join(f'"{text}" ({path}:{line})' for path, text, line in similar)
    return f'no heading "{query}"{where}; similar: {listed}'


def similar_headings(query: str, headings: list[HeadingMatch]) -> list[tuple[str, str, int]]:
    """Up to five (file, heading, line): prefix matches, then substrings, then close spellings."""
    folded = query.casefold()
    ranked: list[tuple[int, int, tuple[str, str, int]]] = []
    for position, match in enumerate(headings):
        key = match.heading.casefold()
        if key.startswith(folded):
            ranked.append((0, position, (match.file, match.heading, match.start_line)))
        elif folded in key or (len(key) >= 3 and key in folded):  # "Install" for "Install guide"
            ranked.append((1, position, (match.file, match.heading, match.start_line)))
    if not ranked:  # a typo: "instalation"
        keys = {match.heading.casefold() for match in headings}
        close = set(difflib.get_close_matches(folded, keys, n=MAX_SUGGESTIONS, cutoff=0.75))
        ranked = [
            (2, position, (match.file, match.heading, match.start_line))
            for position, match in enumerate(headings)
            if match.heading.casefold() in close
        ]
    return [entry for _, _, entry in sorted(ranked)[:MAX_SUGGESTIONS]]


def _current_lines(db: Store, root: Path, rel_path: str) -> list[str]:
    """The file's lines, after checking its bytes are the ones that were indexed."""
    indexed_hash = db.scalar(DOC_HASH_SQL, (rel_path,))
    try:
        raw = (root / rel_path).read_bytes()
    except OSError:
        raise StaleIndex(
            f"{rel_path} was removed since it was indexed; run `repomap index` to update the index"
        ) from None
    if indexed_hash is None or textfile.content_hash(raw) != indexed_hash:
        raise StaleIndex(
            f"{rel_path} changed since it was indexed, so its section lines are out of date; "
            "run `repomap index` and try again"
        )
    source, _ = textfile.decode(raw)
    return textfile.split_lines((source or b"").decode("utf-8"))
