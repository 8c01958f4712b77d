"""Where a name is used: the index's references, by file and line, each with the definition
it stands in and its line of code.

The extractors record a reference for every call, type named, field read or written, macro
tested and (C) function named in an initializer: a name, not a resolved target, so a
common name (`len`, `next`) is used in many places that mean other things. The refs table
keeps one row per name and enclosing definition, at its first line: every line of that
definition from there on that names it is a use too (c-ares' `skip_server` three times in
`ares__send_query`, where a rename needs all three). Lines come from the file as it is on disk
when asked (the indexed line numbers, the current text). A name with no indexed use (a
constant, a global variable: values are not references) is looked for in the indexed code
files' text instead, and the answer says so. `refs` has no index by name (it would add to the
kernel's database for a question the ranking never asks), so a lookup reads the table:
0.08-0.09 s a command on Django (339k references), 0.11-0.16 s on a kernel subset (1.07M),
measured with `/usr/bin/time repomap refs NAME --db DB --no-refresh`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from repomap.errors import BadQuery
from repomap.search.match_lines import read_lines
from repomap.search.symbols import file_clauses
from repomap.store import Store

# `RE2::Set::Match`, `self.parse`, `p->len`, `Match()`: the index holds a use by its last part
# alone. Identifiers as Python reads them (`größe`); any other separator is no name.
_SEPARATOR = re.compile(r"::|\.|->")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_CALL = re.compile(r"\s*\(\s*\)\s*$")
LINE_CHARS = 200  # of a reference's line shown


@dataclass(frozen=True, slots=True)
class Reference:
    file_path: str
    line_number: int
    in_symbol: str | None  # the enclosing definition's qualified name; None at file level
    in_kind: str | None
    language: str
    text: str  # the line as it is on disk now, stripped, at most LINE_CHARS


@dataclass(frozen=True, slots=True)
class References:
    name: str  # the name looked up (the last part of what was asked)
    results: list[Reference]
    truncated: bool
    notes: list[str] = field(default_factory=list)  # how the answer was found, what it ignored


_SQL = """
SELECT f.path, f.id, r.line, r.symbol_id, f.language FROM refs r
JOIN files f ON f.id = r.file_id
WHERE r.name = :name{filters}
ORDER BY f.path, r.line"""

# The indexed code files that may name it (the text scan's, when no use is indexed).
_FILES_SQL = "SELECT f.id, f.path, f.language FROM files f WHERE 1{filters} ORDER BY f.path"

# A file's definitions, outer before inner; fields are no enclosing definition (a use in a
# struct's field list stands in the struct).
_SYMBOLS_SQL = """
SELECT s.id, s.qualified_name, s.kind, s.name, s.start_line, s.end_line FROM symbols s
WHERE s.file_id = ? AND s.kind != 'field'
ORDER BY s.start_line, s.end_line DESC"""
# Where a file's definitions of the name start: the first line from there that names it is
# its own header (`static int\nwalk(int n)`), no use of it (a recursive function's was one).
_STARTS_SQL = "SELECT start_line FROM symbols WHERE file_id = ? AND name = ?"
HEADER_LINES = 8  # a definition's lines read for its name at most
# A file's comments and strings over several lines (a docstring's middle lines are no code,
# though a line alone cannot tell).
_TEXT_SQL = """SELECT line_number, end_line, element_type = 1 FROM code_text
    WHERE file_id = ? AND end_line > line_number"""
# `COLLATE NOCASE` first, so symbols_name (by name, folded) finds the rows: the binary `=`
# alone read the whole table (22 ms on 450k symbols, ~0.25 s on the kernel's 4.8M).
_DEFINED_SQL = "SELECT 1 FROM symbols WHERE name = ?1 COLLATE NOCASE AND name = ?1 LIMIT 1"
# Kinds whose uses are values, which no reference records (a macro's are only where an `#if`
# tests it or another `#define` names it): their uses are read from the text as well. So are a
# C++ member's: inside its class's methods it is named alone (`count_ += 1`), and only its
# uses through `->` or `.` are recorded (CLI11's `subcommands_`: 1 of 42 lines).
_VALUE_KINDS = ("macro", "constant", "variable")
_VALUE_SQL = f"""SELECT s.kind FROM symbols s WHERE s.name = ?1 COLLATE NOCASE AND s.name = ?1
    AND (s.kind IN ({", ".join(repr(kind) for kind in _VALUE_KINDS)}) OR s.kind = 'field'
        AND EXISTS (SELECT 1 FROM files f WHERE f.id = s.file_id AND f.language = 'cpp'))
    ORDER BY s.kind = 'field' LIMIT 1"""
# The text read beside a value's indexed uses stops after this long (the kernel's 60,000 files
# take ~2 s for a name used in few), and the answer says how far it read.
VALUE_SCAN_SECONDS = 0.5


def _unread_note(unread: int) -> str:
    """What a text read cut by VALUE_SCAN_SECONDS left out."""
    return (
        f"the text was read for {VALUE_SCAN_SECONDS:g} s: its last {unread} files (in path"
        " order) were not; a path filter narrows what is read"
    )


def name_of(query: str) -> str:
    """The name a query asks about: its last part (`RE2::Set::Match` -> `Match`)."""
    return _parts(query)[1][-1]


def _parts(query: str) -> tuple[str, list[str]]:
    """The query as a name is written (`Set::Match()` -> `Set::Match`) and its parts."""
    written = _CALL.sub("", query.strip()).removeprefix("::")  # `::parse`: the global one
    parts = [part.strip() for part in _SEPARATOR.split(written)]
    if not all(_IDENTIFIER.fullmatch(part) for part in parts):
        raise BadQuery(f"not a name: {query!r}; give an identifier (`parse`, `Set::Match`)")
    return written, parts


def find_references(
    db: Store,
    root: Path,
    query: str,
    path: str | None = None,
    language: str | None = None,
    limit: int = 50,
) -> References:
    """The first `limit` uses of the name `query` ends with, in path then line order."""
    written, parts = _parts(query)
    name = parts[-1]
    notes = []
    if len(parts) > 1:
        qualifier = written[: -len(name)].rstrip()
        notes.append(
            f"uses are found by name: {qualifier!r} is not checked, every {name!r} is listed"
        )
    params: dict[str, Any] = {"name": name}
    filters = "".join(f" AND {clause}" for clause in file_clauses(db, language, path, params))
    rows = db.conn.execute(_SQL.format(filters=filters), params)
    naming = _naming(name)
    results: list[Reference] = []
    for (file_path, file_id, file_language), uses in groupby(rows, key=itemgetter(0, 1, 4)):
        # The table holds a name once per definition, at its first use there; the definition's
        # other lines that name it are uses too, unless a definition inside it holds them (that
        # one has its row, or does not use it: a method's lines are not its class's).
        first_lines: dict[int, int | None] = {}
        for _path, _id, line, symbol_id, _language in uses:
            first_lines.setdefault(line, symbol_id)
        using = set(first_lines.values())
        lines = read_lines(root / file_path, None) or []  # as on disk now; gone: no text
        symbols = db.conn.execute(_SYMBOLS_SQL, (file_id,)).fetchall()
        code = _CodeLines(db, file_id, name, file_language, lines, naming)
        if lines:  # rows whose line no longer names it: the file edited since indexing
            first_lines = _moved(first_lines, lines, name, code.names)
        numbers = set(first_lines)
        for number, text in enumerate(lines, 1):
            if (
                number not in numbers
                and name in text
                and code.names(number, text)
                and _innermost(symbols, number)[0] in using
            ):
                numbers.add(number)
        described = {row[0]: (row[1], row[2]) for row in symbols}
        for number in sorted(numbers):
            if number in first_lines:  # the index's own row says who uses it there
                in_symbol, in_kind = described.get(first_lines[number], (None, None))
            else:
                _id, in_symbol, in_kind = _innermost(symbols, number)
            text = lines[number - 1] if number <= len(lines) else ""
            results.append(
                Reference(file_path, number, in_symbol, in_kind, file_language,
                          text.strip()[:LINE_CHARS])
            )  # fmt: skip
        if len(results) > limit:
            break
    if not results and db.conn.execute(_DEFINED_SQL, (name,)).fetchone() is not None:
        # A name the index defines but records no use of: a constant's or a global's uses are
        # values, which no reference records. Read whole, where a name defined nowhere (below)
        # is read for a bounded time: a typo's read finds nothing in every file.
        results, _unread = _named_in_text(db, root, name, naming, filters, params, limit)
        if results:
            notes.append(
                f"no use of {name!r} is indexed (calls, types named, field uses and `#if` tests"
                " are; values are not): these are the lines of code files that name it"
            )
    elif not results:
        # Defined nowhere in the index: a local variable or a parameter (nghttp2's `rv`, named
        # on 821 lines, answered nothing, as a typo does), or a name from outside the indexed
        # code. Its lines are read from the text, for at most VALUE_SCAN_SECONDS (a typo's
        # read finds nothing in every file).
        results, unread = _named_in_text(
            db, root, name, naming, filters, params, limit, VALUE_SCAN_SECONDS
        )
        if results:
            notes.append(
                f"{name!r} is defined nowhere in the index (a local variable, a parameter, or a"
                " name from outside it): these are the lines of code files that name it"
            )
        if unread:
            notes.append(_unread_note(unread))
    elif results and (value := db.conn.execute(_VALUE_SQL, (name,)).fetchone()) is not None:
        # Some uses indexed (sqlite's SQLITE_BUSY: 4 inside other `#define`s) and the values
        # not (222 lines name it): one indexed use hid every other. Both, merged; each list is
        # complete in path order up to its cut, so the first `limit` of the merge are right.
        indexed = {(use.file_path, use.line_number) for use in results}
        # a member named alone is C++'s: a Python local of its name is no use of it
        in_files = filters + (" AND f.language = 'cpp'" if value[0] == "field" else "")
        read, unread = _named_in_text(
            db, root, name, naming, in_files, params, limit, VALUE_SCAN_SECONDS
        )
        added = [use for use in read if (use.file_path, use.line_number) not in indexed]
        if added:
            results = sorted([*results, *added], key=lambda use: (use.file_path, use.line_number))
            what = (
                "a C++ member (named alone in its class's methods)"
                if value[0] == "field"
                else "a value (a macro, constant or variable)"
            )
            notes.append(
                f"{name!r} is {what}: the lines of code files that name it are listed beside"
                " its indexed uses"
            )
        if unread:  # the indexed uses are all there; the text's, up to where it stopped
            notes.append(_unread_note(unread))
    return References(name, results[:limit], len(results) > limit, notes)


# How far a row's line is looked around for its name when the file changed since indexing.
MOVED_LINES = 3


def _moved(
    first_lines: dict[int, int | None],
    lines: list[str],
    name: str,
    uses: Callable[[int, str], bool],
) -> dict[int, int | None]:
    """The rows at the nearest line that uses `name` (within MOVED_LINES) where theirs no
    longer names it, left out where none does: an agent's `--no-refresh` call, two lines
    inserted above a use since indexing, listed the old line with its text now (`)`)."""
    moved: dict[int, int | None] = {}
    for number, symbol_id in first_lines.items():
        if name in (lines[number - 1 : number] or [""])[0]:
            moved.setdefault(number, symbol_id)
            continue
        for distance in range(1, MOVED_LINES + 1):
            near = [n for n in (number + distance, number - distance) if 0 < n <= len(lines)]
            found = [
                n for n in near if name in lines[n - 1] and n not in first_lines
                and uses(n, lines[n - 1])
            ]  # fmt: skip
            if found:
                moved.setdefault(found[0], symbol_id)
                break
    return moved


_Symbol = tuple[int, str, str, str, int, int]  # _SYMBOLS_SQL's row


def _innermost(symbols: list[_Symbol], number: int) -> tuple[int | None, str | None, str | None]:
    """(id, qualified name, kind) of the innermost definition holding line `number`; Nones at
    file level. `symbols` are outer before inner (_SYMBOLS_SQL's order)."""
    found: tuple[int | None, str | None, str | None] = (None, None, None)
    for symbol_id, qualified_name, kind, _name, start, end in symbols:
        if start > number:
            break
        if number <= end:
            found = (symbol_id, qualified_name, kind)
    return found


# What a line holds that is no code: string literals, then comments. A heuristic per line (a
# block comment's middle lines that do not start with `*` read as code), which is what a
# search by name over the text needs: `refs` listed `// then skip_server again` as a use.
_DOUBLE_QUOTED = re.compile(r'"(?:\\.|[^"\\])*"')
_SINGLE_QUOTED = re.compile(r"'(?:\\.|[^'\\])*'")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/")
_COMMENT_MIDDLE = re.compile(r"\s*\*(?:[\s/]|$)")


def _code_part(line: str, language: str) -> str:
    """The line without its strings and comments (as far as one line tells)."""
    if language == "python":
        line = _SINGLE_QUOTED.sub("''", _DOUBLE_QUOTED.sub('""', line))
        return line.split("#", 1)[0]
    if _COMMENT_MIDDLE.match(line):
        return ""  # ` * the middle of a block comment`
    line = _BLOCK_COMMENT.sub(" ", _DOUBLE_QUOTED.sub('""', line))
    return line.split("//", 1)[0].split("/*", 1)[0]


class _CodeLines:
    """Which lines of one file name a name in their code, beyond what one line tells: not a
    definition's own header, nor a comment's or string's lines (a docstring's middle lines:
    `refs tag` listed flask's), nor its first line after the opening quote or last line before
    the closing one."""

    def __init__(
        self,
        db: Store,
        file_id: int,
        name: str,
        language: str,
        lines: list[str],
        naming: Callable[[str, str], bool],
    ) -> None:
        self.language, self.naming = language, naming
        self.inside: set[int] = set()
        # the first and last lines of comments (True) and strings (False) over several lines
        self.firsts: dict[int, bool] = {}
        self.lasts: dict[int, bool] = {}
        for start, end, comment in db.conn.execute(_TEXT_SQL, (file_id,)):
            self.firsts[start] = bool(comment)
            self.lasts[end] = bool(comment)
            self.inside.update(range(start + 1, end))
        self.headers: set[int] = set()
        for (start,) in db.conn.execute(_STARTS_SQL, (file_id, name)):
            for number in range(start, min(start + HEADER_LINES, len(lines) + 1)):
                if self._names_in_code(number, lines[number - 1]):
                    self.headers.add(number)
                    break

    def names(self, number: int, line: str) -> bool:
        """Whether line `number`, `line`, names the name in its code as a use."""
        return number not in self.headers and self._names_in_code(number, line)

    def _names_in_code(self, number: int, line: str) -> bool:
        if number in self.inside:
            return False
        if number in self.lasts:
            line = _after_closing(line, self.lasts[number])
        if number in self.firsts:
            line = _before_opening(line, self.firsts[number])
        return self.naming(line, self.language)


_QUOTES = ('"""', "'''", '"', "'")  # a string's delimiters, the longest first


def _after_closing(line: str, comment: bool) -> str:
    """A comment's or string's last line from where it ends: after its first `*/` or closing
    quote (`   end */ return walk(n);`, a docstring's closing quotes then `+ walk()`)."""
    if comment:
        end = line.find("*/")
        return line[end + 2 :] if end >= 0 else line  # a `//` or `#` run: _code_part's
    ends = [(line.find(quote), -len(quote)) for quote in _QUOTES if quote in line]
    if not ends:
        return line
    at, width = min(ends)
    return line[at - width :]


def _before_opening(line: str, comment: bool) -> str:
    """A comment's or string's first line up to where it starts: before its last `/*` or
    opening quote (`puts("x"); walk(n); /* start`)."""
    if comment:
        start = line.rfind("/*")
        return line[:start] if start >= 0 else line
    start = max(line.rfind('"'), line.rfind("'"))  # of `"""`, its last quote: `""` is no name
    return line[:start] if start >= 0 else line


def _naming(name: str) -> Callable[[str, str], bool]:
    """Whether a line of a file in a language names `name` as a word in its code."""
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")

    def names(line: str, language: str) -> bool:
        return word.search(_code_part(line, language)) is not None

    return names


def _named_in_text(
    db: Store,
    root: Path,
    name: str,
    naming: Callable[[str, str], bool],
    filters: str,
    params: dict[str, Any],
    limit: int,
    seconds: float | None = None,
) -> tuple[list[Reference], int]:
    """The lines of the indexed code files that name `name`, but not in its own definitions (a
    global's type on the line above its name too): a constant's or a global's uses, which no
    reference records (c-ares' `ARES_ECONNREFUSED`); and how many files were left unread when
    `seconds` ran out first."""
    wanted = name.encode()
    found: list[Reference] = []
    files = db.conn.execute(_FILES_SQL.format(filters=filters), params).fetchall()
    deadline = None if seconds is None else time.perf_counter() + seconds
    for number, (file_id, file_path, file_language) in enumerate(files):
        if deadline is not None and time.perf_counter() > deadline:
            return found, len(files) - number
        try:
            raw = (root / file_path).read_bytes()
        except OSError:  # gone since indexing
            continue
        if wanted not in raw:
            continue
        lines = read_lines(root / file_path, None) or []
        code = _CodeLines(db, file_id, name, file_language, lines, naming)
        numbers = [n for n, line in enumerate(lines, 1) if name in line and code.names(n, line)]
        if not numbers:
            continue
        symbols = db.conn.execute(_SYMBOLS_SQL, (file_id,)).fetchall()
        own = [
            (start, end) for _i, _q, _k, symbol_name, start, end in symbols if symbol_name == name
        ]
        for number in numbers:
            if any(start <= number <= end for start, end in own):
                continue
            _id, in_symbol, in_kind = _innermost(symbols, number)
            text = lines[number - 1].strip()[:LINE_CHARS]
            found.append(Reference(file_path, number, in_symbol, in_kind, file_language, text))
        if len(found) > limit:
            break
    return found, 0
