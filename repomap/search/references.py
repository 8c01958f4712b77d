"""Where a name is used: the index's references, by file and line, each with the definition
it stands in and its line of code.

The extractors record a reference for every call, type named, field read or written, macro
tested and (C) function named in an initializer: a name, not a resolved target, so a
common name (`len`, `next`) is used in many places that mean other things. Lines come from the
file as it is on disk when asked (the indexed line numbers, the current text). `refs` has no
index by name (it would add to the kernel's database for a question the ranking never asks),
so a lookup reads the table: 0.08-0.09 s a command on Django (339k references), 0.11-0.16 s on a
kernel subset (1.07M), measured with `/usr/bin/time repomap refs NAME --db DB --no-refresh`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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


_SQL = """
SELECT f.path, r.line, s.qualified_name, s.kind, f.language FROM refs r
JOIN files f ON f.id = r.file_id
LEFT JOIN symbols s ON s.id = r.symbol_id
WHERE r.name = :name{filters}
ORDER BY f.path, r.line
LIMIT :limit"""


def name_of(query: str) -> str:
    """The name a query asks about: its last part (`RE2::Set::Match` -> `Match`)."""
    written = _CALL.sub("", query.strip()).removeprefix("::")  # `::parse`: the global one
    parts = [part.strip() for part in _SEPARATOR.split(written)]
    if not all(_IDENTIFIER.fullmatch(part) for part in parts):
        raise BadQuery(f"not a name: {query!r}; give an identifier (`parse`, `Set::Match`)")
    return parts[-1]


def find_references(
    db: Store,
    root: Path,
    query: str,
    path: str | None = None,
    language: str | None = None,
    limit: int = 50,
) -> References:
    """The first `limit` uses of the name `query` ends with, in path then line order."""
    name = name_of(query)
    params: dict[str, Any] = {"name": name, "limit": limit + 1}
    filters = "".join(f" AND {clause}" for clause in file_clauses(db, language, path, params))
    rows = db.conn.execute(_SQL.format(filters=filters), params).fetchall()
    lines: dict[str, list[str]] = {}
    results = []
    for file_path, line, in_symbol, in_kind, file_language in rows[:limit]:
        if file_path not in lines:  # as on disk now; none when it is gone (deleted since)
            lines[file_path] = read_lines(root / file_path, None) or []
        text = lines[file_path][line - 1].strip() if 0 < line <= len(lines[file_path]) else ""
        results.append(
            Reference(file_path, line, in_symbol, in_kind, file_language, text[:LINE_CHARS])
        )
    return References(name, results, len(rows) > limit)
