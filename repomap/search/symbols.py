"""Symbol lookups and the rankings behind the repo map: all of their SQL lives here.

Python API (each takes an open index, `repomap.db.open_index(path)`):
- `search_symbols(db, query, kind=None, language=None, path=None, limit=20) -> list[SymbolHit]`:
  case-insensitive exact, prefix, substring and fuzzy (subsequence) matches on the name and the
  qualified name (`QuerySet.filter` and `Mutex::lock` match the tail of a qualified name), best
  first by `order_key()`.
- `find_symbol(db, name, file=None) -> SymbolMatch`: the best definition for `name`, the others,
  or `SymbolNotFound` with "did you mean" suggestions; ranked by the same `order_key()`, so
  `show NAME` shows what `symbols NAME` lists first. `repomap.snippets.symbol_content()` turns
  it into source read from disk (`repomap.get_symbol_content()` does both).
- `refresh_ranks(db)`: recompute the stored rankings when the index changed (index.py calls it).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from repomap import store
from repomap.errors import BadQuery, NotFound, RepomapError
from repomap.index.vocabulary import KINDS
from repomap.languages import resolve_language
from repomap.limits import check_limit
from repomap.store import Store

MATCH_TIERS = ("exact", "prefix", "substring", "fuzzy")
FUZZY_CANDIDATES = 2000  # rows a subsequence scan hands to Python for ordering


class SymbolNotFound(NotFound):
    """No symbol has that name; the message carries "did you mean" suggestions."""


class FileChanged(RepomapError):
    """The file changed on disk since it was indexed: its stored lines would be wrong."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


# --- reading --------------------------------------------------------------------------------


# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SymbolHit:
    """One search result; `doc` is the first line of the docstring or doc comment."""

    name: str
    qualified_name: str
    kind: str
    language: str
    file_path: str
    line_number: int
    end_line: int
    signature: str
    doc: str | None
    match: str  # exact | prefix | substring | fuzzy
    ref_files: int  # files that use this name


@dataclass(frozen=True, slots=True)
class SymbolRow:
    """A symbols row with its file, as lookups need it: _COLUMNS, then the symbol's rank."""

    id: int
    file_id: int
    name: str
    qualified_name: str
    kind: str
    language: str
    file_path: str
    start_line: int
    end_line: int
    signature: str
    parent_id: int | None
    doc: str | None
    is_definition: bool
    declaration_id: int | None
    file_hash: str
    rank: float
    ref_files: int  # files that use the name


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    """The best symbol for a name and the other candidates, best first."""

    best: SymbolRow
    others: list[SymbolRow] = field(default_factory=list)


# SymbolRow's columns, in its order, and the tables they come from.
_COLUMNS = """s.id, s.file_id, s.name, s.qualified_name, s.kind, f.language, f.path, s.start_line,
    s.end_line, s.signature, s.parent_id, s.doc, s.is_definition, s.declaration_id, f.hash,
    coalesce(r.rank, 0), coalesce(n.ref_files, 0)"""
_TABLES = """symbols s JOIN files f ON f.id = s.file_id
LEFT JOIN symbol_ranks r ON r.symbol_id = s.id LEFT JOIN name_stats n ON n.name = s.name"""


def _symbol_row(row: tuple[Any, ...]) -> SymbolRow:
    """A row of _COLUMNS as a SymbolRow."""
    (symbol_id, file_id, name, qualified_name, kind, language, file_path, start_line, end_line,
     signature, parent_id, doc, is_definition, declaration_id, file_hash, rank,
     ref_files) = row  # fmt: skip
    return SymbolRow(symbol_id, file_id, name, qualified_name, kind, language, file_path,
                     start_line, end_line, signature, parent_id, doc, bool(is_definition),
                     declaration_id, file_hash, rank, ref_files)  # fmt: skip


# --- the one order: `symbols NAME`, `show NAME` and "did you mean" rank matches alike ----------

# Types first, then callables, then values: `show Meta` means the class, not an attribute.
KIND_ORDER = {
    "class": 0,
    "struct": 0,
    "trait": 0,
    "enum": 0,
    "union": 0,
    "function": 1,
    "method": 1,
    "macro": 2,
    "type": 2,
    "constant": 3,
    "variable": 3,
    "attribute": 3,
    "impl": 4,
    "namespace": 5,
    "module": 5,
}
OTHER_KINDS = len(set(KIND_ORDER.values()))
# KIND_ORDER in SQL, so a capped query keeps the rows the Python order would put first
_KIND_ORDER_SQL = (
    "CASE s.kind "
    + " ".join(f"WHEN '{kind}' THEN {order}" for kind, order in KIND_ORDER.items())
    + f" ELSE {OTHER_KINDS} END"
)


def order_key(
    query: str,
    name: str,
    qualified_name: str,
    kind: str,
    is_definition: bool | int,
    ref_files: int,
    rank: float,
    file_path: str,
    start_line: int,
) -> tuple[int, int, int, int, int, bool, int, float, int, str, int]:
    """Best first: the match tier (exact, prefix, substring, fuzzy) and, for fuzzy, how tight;
    the name as typed (its case); the whole qualified name; names used from more files;
    definitions before declarations; types, callables, values; the symbol's PageRank; the
    shorter qualified name; then path and line, so equal keys keep one order."""
    tier = match_tier(query, name, qualified_name)
    spread = _fuzzy_spread(query, name) if tier == 3 else 0
    exact_case = 0 if query in (name, qualified_name) else 1
    qualified = 0 if _normalize(query) == _normalize(qualified_name) else 1
    return (tier, spread, exact_case, qualified, -ref_files, not is_definition,
            KIND_ORDER.get(kind, OTHER_KINDS), -rank, len(qualified_name), file_path,
            start_line)  # fmt: skip


# --- search_symbols --------------------------------------------------------------------------


class _Candidate(NamedTuple):
    """A SEARCH_SQL row, in its column order."""

    id: int
    name: str
    qualified_name: str
    kind: str
    language: str
    file_path: str
    start_line: int
    end_line: int
    signature: str
    doc: str | None
    is_definition: int
    ref_files: int  # files that use the name
    rank: float


# Ordered as order_key() orders one tier, so the cap keeps the rows it would rank first.
SEARCH_SQL = (
    """SELECT s.id, s.name, s.qualified_name, s.kind, f.language, f.path, s.start_line,
    s.end_line, s.signature, s.doc, s.is_definition, coalesce(n.ref_files, 0) AS ref_files,
    coalesce(r.rank, 0) AS symbol_rank
FROM """
    + _TABLES
    + """
WHERE ({match}) {filters}
ORDER BY (s.name = :q OR s.qualified_name = :q) DESC,
    (s.qualified_name = :q COLLATE NOCASE OR s.qualified_name = :q_alt COLLATE NOCASE) DESC,
    ref_files DESC, s.is_definition DESC, """
    + _KIND_ORDER_SQL.replace("{", "{{").replace("}", "}}")
    + """, symbol_rank DESC,
    length(s.qualified_name), f.path, s.start_line
LIMIT :cap"""
)
MATCH_SQL = {
    "exact": "s.name = :q COLLATE NOCASE OR s.qualified_name = :q COLLATE NOCASE "
    "OR s.qualified_name = :q_alt COLLATE NOCASE",
    # Prefix as a NOCASE range, so the symbols_name index answers it.
    "prefix": "s.name COLLATE NOCASE >= :lo AND s.name COLLATE NOCASE < :hi",
    "tail": "s.name = :last COLLATE NOCASE",
    "tail_prefix": "s.name COLLATE NOCASE >= :last_lo AND s.name COLLATE NOCASE < :last_hi",
    "subsequence": "s.name LIKE :subsequence ESCAPE '\\'",
    "qualified_subsequence": "s.qualified_name LIKE :qualified_subsequence ESCAPE '\\'",
}
_SEPARATOR = re.compile(r"::|\.")


def search_symbols(
    db: Store,
    query: str,
    kind: str | None = None,
    language: str | None = None,
    path: str | None = None,
    limit: int = 20,
) -> list[SymbolHit]:
    """Symbols whose name or qualified name matches `query`: exact > prefix > substring > fuzzy."""
    query = query.strip()
    if not query:
        raise BadQuery(
            "empty query; give a symbol name or part of one (e.g. `QuerySet` or `Mutex::lock`)"
        )
    check_limit(limit)
    params, filters = _filters(db, kind, language, path)
    params.update(match_params(query))
    qualified = bool(_SEPARATOR.search(query))
    sources = (
        ("exact", "tail", "tail_prefix", "qualified_subsequence")
        if qualified
        else ("exact", "prefix", "subsequence")
    )
    found: dict[int, _Candidate] = {}
    for source in sources:
        cap = limit + len(found) if source != sources[-1] else max(FUZZY_CANDIDATES, limit)
        sql = SEARCH_SQL.format(match=MATCH_SQL[source], filters=filters)
        for row in db.conn.execute(sql, {**params, "cap": cap}):
            candidate = _Candidate(*row)
            found.setdefault(candidate.id, candidate)
        exact = sum(match_tier(query, c.name, c.qualified_name) == 0 for c in found.values())
        if exact >= limit:
            break
    ranked = sorted(found.values(), key=lambda candidate: _search_key(query, candidate))
    return [
        _hit(query, candidate)
        for candidate in ranked
        if match_tier(query, candidate.name, candidate.qualified_name) < len(MATCH_TIERS)
    ][:limit]


def _filters(
    db: Store, kind: str | None, language: str | None, path: str | None
) -> tuple[dict[str, str], str]:
    params: dict[str, str] = {}
    clauses = []
    if kind:  # one kind, or several comma-separated (as `repomap search --kind`)
        kinds = [part.strip().lower() for part in kind.split(",") if part.strip()]
        if not kinds or any(k not in KINDS for k in kinds):  # unknown matched nothing, silently
            raise BadQuery(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
        clauses.append("s.kind IN (SELECT value FROM json_each(:kinds))")
        params["kinds"] = json.dumps(kinds)
    if language:
        clauses.append("f.language = :language")
        params["language"] = resolve_language(language)
    file_ids = store.filtered_ids(db, path)
    if file_ids is not None:
        clauses.append("f.id IN (SELECT value FROM json_each(:file_ids))")
        params["file_ids"] = json.dumps(file_ids)
    return params, "".join(f" AND {clause}" for clause in clauses)


def match_params(query: str) -> dict[str, str]:
    parts = [p for p in _SEPARATOR.split(query) if p]
    last = parts[-1] if parts else query
    alt = query.replace("::", "\0").replace(".", "::").replace("\0", ".")
    return {
        "q": query,
        "q_alt": alt,
        "lo": query.lower(),
        "hi": query.lower() + "\U0010ffff",
        "last": last,
        "last_lo": last.lower(),
        "last_hi": last.lower() + "\U0010ffff",
        "subsequence": "%" + "%".join(like_escape(c) for c in query) + "%",
        "qualified_subsequence": "%"
        + "%".join(like_escape(c) for c in _normalize(query) if c != ".")
        + "%",
    }


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _normalize(qualified: str) -> str:
    """`a::b::C` and `a.b.C` compare equal, case-insensitively."""
    return qualified.replace("::", ".").lower()


def match_tier(query: str, name: str, qualified: str) -> int:
    """0 exact, 1 prefix, 2 substring, 3 fuzzy, 4 no match."""
    q = _normalize(query)
    n = name.lower()
    qn = _normalize(qualified)
    if q in (n, qn) or qn.endswith("." + q):
        return 0
    if n.startswith(q) or qn.startswith(q) or ("." + q) in qn:
        return 1
    if q in n or q in qn:
        return 2
    target = qn if "." in q else n
    return 3 if _is_subsequence(q.replace(".", ""), target) else 4


def _is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(c in it for c in needle)


def _fuzzy_spread(query: str, name: str) -> int:
    """How spread out the query's letters are in the name: tighter fuzzy matches first."""
    q, n = query.lower().replace(".", "").replace(":", ""), name.lower()
    start = pos = n.find(q[0]) if q else 0
    for c in q[1:]:
        pos = n.find(c, pos + 1)
    return (pos - start) - len(q) if start >= 0 and pos >= 0 else len(n)


def _search_key(query: str, c: _Candidate) -> tuple[Any, ...]:
    return order_key(query, c.name, c.qualified_name, c.kind, c.is_definition, c.ref_files,
                     c.rank, c.file_path, c.start_line)  # fmt: skip


def _hit(query: str, c: _Candidate) -> SymbolHit:
    doc = c.doc.strip().splitlines()[0] if c.doc and c.doc.strip() else None
    return SymbolHit(
        c.name,
        c.qualified_name,
        c.kind,
        c.language,
        c.file_path,
        c.start_line,
        c.end_line,
        c.signature,
        doc,
        MATCH_TIERS[match_tier(query, c.name, c.qualified_name)],
        c.ref_files,
    )


# --- find_symbol -----------------------------------------------------------------------------

FIND_SQL = f"""SELECT {_COLUMNS} FROM {_TABLES}
WHERE (s.name = :last COLLATE NOCASE OR s.qualified_name = :q COLLATE NOCASE
       OR s.qualified_name = :q_alt COLLATE NOCASE) {{filters}}"""
SYMBOL_BY_ID_SQL = f"SELECT {_COLUMNS} FROM {_TABLES} WHERE s.id = ?"


def find_symbol(db: Store, name: str, file: str | None = None) -> SymbolMatch:
    """The symbol called `name` (or whose qualified name is or ends with it), best first."""
    name = name.strip()
    if not name:
        raise BadQuery("give a symbol name, e.g. `QuerySet.filter`")
    params, filters = _filters(db, None, None, file)
    params.update(match_params(name))
    sql = FIND_SQL.format(filters=filters)
    found = (_symbol_row(row) for row in db.conn.execute(sql, params))
    rows = [row for row in found if match_tier(name, row.name, row.qualified_name) == 0]
    if not rows:
        where = f" in files matching {file!r}" if file else ""
        suggestions = suggest(db, name, file)
        hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
        raise SymbolNotFound(f"no symbol named {name!r}{where}{hint}")
    rows.sort(key=lambda row: _find_key(name, row))
    return SymbolMatch(rows[0], rows[1:])


def symbol_by_id(db: Store, symbol_id: int) -> SymbolRow | None:
    row = db.conn.execute(SYMBOL_BY_ID_SQL, (symbol_id,)).fetchone()
    return _symbol_row(row) if row else None


def ancestors(db: Store, symbol: SymbolRow) -> list[SymbolRow]:
    """The enclosing symbols, outermost first (class of a method, impl of a Rust fn, namespaces)."""
    chain: list[SymbolRow] = []
    parent_id = symbol.parent_id
    while parent_id is not None and len(chain) < 32 and (parent := symbol_by_id(db, parent_id)):
        chain.append(parent)
        parent_id = parent.parent_id
    return chain[::-1]


def _find_key(name: str, row: SymbolRow) -> tuple[Any, ...]:
    return order_key(name, row.name, row.qualified_name, row.kind, row.is_definition,
                     row.ref_files, row.rank, row.file_path, row.start_line)  # fmt: skip


def suggest(db: Store, name: str, file: str | None = None, limit: int = 5) -> list[str]:
    """Up to `limit` qualified names close to `name`: prefix and fuzzy matches, then typos."""
    last = [p for p in _SEPARATOR.split(name) if p][-1:] or [name]
    target = last[0].lower()
    names: dict[str, list[str]] = {}
    for (found,) in db.conn.execute(
        "SELECT DISTINCT name FROM symbols WHERE length(name) BETWEEN ? AND ?",
        (len(target) - 2, len(target) + 2),
    ):
        names.setdefault(found.lower(), []).append(found)
    suggestions = []  # typos first (`QuerySte` -> QuerySet), then prefix and fuzzy matches
    for close in difflib.get_close_matches(target, names, n=limit, cutoff=0.75):
        spellings = sorted(
            names[close], key=lambda n: -difflib.SequenceMatcher(None, last[0], n).ratio()
        )
        for spelling in spellings:
            suggestions.extend(_qualified_for(db, spelling, limit))
    hits = search_symbols(db, name, path=file, limit=limit) if name.strip() else []
    suggestions.extend(hit.qualified_name for hit in hits)
    return list(dict.fromkeys(suggestions))[:limit]


def _qualified_for(db: Store, name: str, limit: int) -> list[str]:
    rows = db.conn.execute(
        """SELECT s.qualified_name FROM symbols s LEFT JOIN name_stats n ON n.name = s.name
        WHERE s.name = ? ORDER BY coalesce(n.ref_files, 0) DESC, s.qualified_name LIMIT ?""",
        (name, limit),
    )
    return [qualified_name for (qualified_name,) in rows]
