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

Speed: a lookup asks SQLite for its exact and prefix matches and then for up to FUZZY_CANDIDATES
subsequence matches (`%q%u%e%`), which reads the whole table. Through a server's KeptReader
(`Store.state` set) the prefix and subsequence sources are answered from a table of every
symbol prepared once per index state (`_Prepared`: SEARCH_SQL's order, folded names, a
character mask per name), with the same rows in the same order. A one-query connection (the
CLI) asks SQLite, since preparing the table (~0.3-0.4 s of CPU on 68,000 symbols, once per
index state) costs more than one query saves.
"""

from __future__ import annotations

import difflib
import functools
import heapq
import json
import re
import sqlite3
import string
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from repomap import paths, store
from repomap.errors import BadArgument, BadQuery, NotFound, RepomapError
from repomap.index.vocabulary import KINDS
from repomap.languages import resolve_language
from repomap.limits import check_limit
from repomap.search import bases, written_paths
from repomap.store import Store

if TYPE_CHECKING:
    import numpy as np

MATCH_TIERS = ("exact", "prefix", "substring", "fuzzy")
FUZZY_CANDIDATES = 2000  # rows a subsequence scan hands to Python for ordering
FUZZY_SUGGESTION_RATIO = 0.5  # difflib's, of a fuzzy match offered as "did you mean"


def wildcard_note(query: str) -> str | None:
    """For a query with `*` or `?` that found nothing: names are no globs here (an MCP agent's
    `Checker.handle*` answered nothing, unsaid), and a prefix already matches."""
    bare = query.replace("*", "").replace("?", "").strip()
    if bare == query.strip() or not bare:
        return None
    return (
        "`*` and `?` are no wildcards here: a name is matched as typed, then as a prefix, a part"
        f" and by spelling; search for {bare!r}"
    )


UNMATCHED_FILES = " (no indexed file matches it)"  # after a filter that names no file
GENERATED_LOOKUP_FILES = 1000  # matches' files looked up for generated ones before the cut
GENERATED_MARGIN = 16  # rows read past the limit, that a generated copy may yield its place to


class SymbolNotFound(NotFound):
    """No symbol has that name; the message carries "did you mean" suggestions."""

    def __init__(
        self, message: str, suggestions: list[str] | None = None, files_unmatched: bool = False
    ) -> None:
        super().__init__(message)
        self.suggestions = suggestions or []  # for a caller that merges several indexes'
        self.files_unmatched = files_unmatched


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
    # False for a declaration (a C prototype, a forward or in-class declaration, an `extern`
    # variable, a Python `@overload` stub): what names the thing, not what does it
    is_definition: bool = True


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


# A symbol's doc: the code_text row it names (schema v16), else its own, else (a C++ method
# or namespaced function defined out of line, a C function a header declares) its linked
# declaration's: re2's and double-conversion's methods are described in the header, above the
# declaration, and `symbols Set::Match` showed the .cc definition without a word. Only a
# qualified name or a header's prototype: the writer links a C name to a declaration of that
# name anywhere, and a `static` function's same-named prototype in another .c is not its own.
DOC_SQL = """coalesce((SELECT t.content FROM code_text t WHERE t.id = s.doc_text), s.doc,
    (SELECT coalesce((SELECT t.content FROM code_text t WHERE t.id = d.doc_text), d.doc)
     FROM symbols d JOIN files df ON df.id = d.file_id
     WHERE d.id = s.declaration_id AND d.qualified_name = s.qualified_name
       AND (s.qualified_name LIKE '%::%' OR df.path LIKE '%.h' OR df.path LIKE '%.hpp'
            OR df.path LIKE '%.hh' OR df.path LIKE '%.hxx')))"""
# A symbol's signature: '' stands for the name alone (schema v18: a C++ enumerator, `Red`).
SIGNATURE_SQL = "CASE s.signature WHEN '' THEN s.name ELSE s.signature END"
# SymbolRow's columns, in its order, and the tables they come from.
_COLUMNS = f"""s.id, s.file_id, s.name, s.qualified_name, s.kind, f.language, f.path, s.start_line,
    s.end_line, {SIGNATURE_SQL}, s.parent_id, {DOC_SQL}, s.is_definition, s.declaration_id, f.hash,
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
    "field": 3,
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
    generated: bool = False,
) -> tuple[int, int, int, int, int, bool, int, bool, float, int, str, int]:
    """Best first: the match tier (exact, prefix, substring, fuzzy) and, for fuzzy, how tight;
    the name as typed (its case); the whole qualified name; names used from more files;
    definitions before declarations; types, callables, values; the symbol's PageRank; the
    shorter qualified name; then path and line, so equal keys keep one order. A type stub's
    (`.pyi`) definition counts as a declaration: it repeats the signature of the code that does
    the work (`show expire` showed cachetools' one-line stub before its method). Among equals a
    test's, an example's or vendored code's comes after the project's own (`show parse` showed
    jinja2's docs/examples/ extension, `show main` c-ares' test runner before its tools'), and
    a file a tool wrote (`generated`) after the one it was made from."""
    tier = match_tier(query, name, qualified_name)
    spread = _fuzzy_spread(query, name) if tier == 3 else 0
    exact_case = 0 if query in (name, qualified_name) else 1
    qualified = 0 if _normalize(query) == _normalize(qualified_name) else 1
    return (tier, spread, exact_case, qualified, -ref_files,
            not is_definition or file_path.endswith(".pyi"), KIND_ORDER.get(kind, OTHER_KINDS),
            demoted(file_path) or generated, -rank, len(qualified_name), file_path,
            start_line)  # fmt: skip


@functools.lru_cache(maxsize=65536)
def demoted(path: str) -> bool:
    """paths.is_demoted_path, once per path: order_key's and SQL's `repomap_demoted(f.path)`."""
    return paths.is_demoted_path(path)


def with_demoted(db: Store) -> sqlite3.Connection:
    """`db`'s connection with `repomap_demoted(path)` defined, for the symbols' SQL order."""
    db.conn.create_function("repomap_demoted", 1, demoted, deterministic=True)
    return db.conn


# --- search_symbols --------------------------------------------------------------------------


class _Candidate(NamedTuple):
    """A DETAILS_SQL row, in its column order: a result's fields."""

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


class _Ranked(NamedTuple):
    """A SEARCH_SQL row (or a prepared table's): what order_key() takes from a match."""

    id: int
    name: str
    qualified_name: str
    kind: str
    is_definition: int
    ref_files: int
    rank: float
    file_path: str
    start_line: int


# Ordered as order_key() orders one tier, so the cap keeps the rows it would rank first; the
# id decides between rows equal on every key. `_Prepared` keeps the same order in memory.
_SEARCH_ORDER = (
    """(s.name = :q OR s.qualified_name = :q) DESC,
    (s.qualified_name = :q COLLATE NOCASE OR s.qualified_name = :q_alt COLLATE NOCASE) DESC, """
    + "ref_files DESC, (s.is_definition AND f.path NOT LIKE '%.pyi') DESC, "
    + _KIND_ORDER_SQL.replace("{", "{{").replace("}", "}}")
    + """, repomap_demoted(f.path), symbol_rank DESC, length(s.qualified_name), f.path,
    s.start_line, s.id"""
)
SEARCH_SQL = (
    """SELECT s.id, s.name, s.qualified_name, s.kind, s.is_definition,
    coalesce(n.ref_files, 0) AS ref_files, coalesce(r.rank, 0) AS symbol_rank, f.path,
    s.start_line
FROM """
    + _TABLES
    + """
WHERE ({match}) {filters}
ORDER BY """
    + _SEARCH_ORDER
    + """
LIMIT :cap"""
)
DETAILS_SQL = (
    f"""SELECT s.id, s.name, s.qualified_name, s.kind, f.language, f.path, s.start_line,
    s.end_line, {SIGNATURE_SQL}, {DOC_SQL}, s.is_definition, coalesce(n.ref_files, 0),
    coalesce(r.rank, 0)
FROM """
    + _TABLES
    + """
WHERE s.id IN (SELECT value FROM json_each(:ids))"""
)
# Schema v18 keeps no index on the whole qualified name. A qualified name is the name or ends
# with `::` or `.` and the name, so the rows whose qualified name is `:q` (or `:q_alt`) are
# named `:q` or a part of it after a separator: `:names` lists those parts (match_params), and
# symbols_name finds the rows. The rows that break the rule (a Rust trait impl,
# `fmt::Display for Pool` named `Pool`) are in the partial index symbols_unsuffixed, which
# SQLite uses only for a query that repeats its condition: UNSUFFIXED_SQL does, word for word.
UNSUFFIXED_SQL = """s.qualified_name <> s.name
      AND substr(s.qualified_name, length(s.qualified_name) - length(s.name) - 1) <> '::' || s.name
      AND substr(s.qualified_name, length(s.qualified_name) - length(s.name)) <> '.' || s.name"""


def qualified_match_sql(condition: str) -> str:
    """`condition` (on the name, and the qualified name `= :q` or `= :q_alt`, NOCASE) so that
    SQLite answers it through the name index and symbols_unsuffixed (match_params' names)."""
    return f"""(s.name COLLATE NOCASE IN (SELECT value FROM json_each(:names)) AND ({condition}))
    OR ({UNSUFFIXED_SQL} AND s.qualified_name COLLATE NOCASE IN (:q, :q_alt))"""


MATCH_SQL = {
    "exact": qualified_match_sql(
        "s.name = :q COLLATE NOCASE OR s.qualified_name = :q COLLATE NOCASE "
        "OR s.qualified_name = :q_alt COLLATE NOCASE"
    ),
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
    written: bool = True,
) -> list[SymbolHit]:
    """Symbols whose name or qualified name matches `query`: exact > prefix > substring > fuzzy;
    `written`: a path as code writes it (written_paths) may name exact matches too."""
    query = spelled_as_indexed(query.strip())
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
    prepared = _prepared(db)
    folded = _Folded(query)
    found: dict[int, _Ranked] = {}
    tiers: dict[int, int] = {}
    lowered: dict[int, str] = {}  # names in lower case, for the fuzzy spread
    normalized: dict[int, str] = {}  # qualified names _normalize()d, for order_key's `qualified`
    exact = 0
    for source in sources:
        # GENERATED_MARGIN more than the limit: the SQL order knows no generated file, and a
        # tool's copy cut first would keep the place its equals should have
        cap = (
            limit + GENERATED_MARGIN + len(found)
            if source != sources[-1]
            else max(FUZZY_CANDIDATES, limit + GENERATED_MARGIN)
        )
        if prepared is not None and source in _Prepared.SCANS:
            rows: Iterable[tuple[_Ranked, str, str]] = prepared.scan(source, params, cap)
        else:
            sql = SEARCH_SQL.format(match=MATCH_SQL[source], filters=filters)
            rows = (
                (row, row.name.lower(), _normalize(row.qualified_name))
                for row in map(_Ranked._make, with_demoted(db).execute(sql, {**params, "cap": cap}))
            )
        new = [item for item in rows if item[0].id not in found]
        for (row, name, qualified_name), tier in zip(
            new, folded.tiers([name for _, name, _ in new], [qn for _, _, qn in new]), strict=True
        ):
            if row.id not in found:  # a row can come twice only if ids repeat: they do not
                found[row.id] = row
                lowered[row.id] = name
                normalized[row.id] = qualified_name
                tiers[row.id] = tier
                exact += tier == 0
        if exact >= limit:
            break
    # The full key only for the tiers the page reaches (the fuzzy spread is the costly part).
    by_tier: list[list[_Ranked]] = [[] for _ in MATCH_TIERS]
    for row in found.values():
        if tiers[row.id] < len(MATCH_TIERS):
            by_tier[tiers[row.id]].append(row)
    matching: list[_Ranked] = []
    for group in by_tier:
        if len(matching) >= limit:
            break
        matching += group
    # Which matches' files a tool wrote, before the cut (a generated copy was first at
    # --limit 1 and second at --limit 3): over every match's file when they are few, else
    # over the best by the other keys (a prefix of thousands of files would cost a query each).
    paths = {row.file_path for row in matching}
    if len(paths) > GENERATED_LOOKUP_FILES:
        paths = {
            row.file_path
            for row in heapq.nsmallest(
                limit, matching,
                key=lambda row: _search_key(
                    folded, tiers[row.id], row, lowered[row.id], normalized[row.id]
                ),
            )
        }  # fmt: skip
    generated = _generated_files(db, sorted(paths))
    best = heapq.nsmallest(
        limit,
        matching,
        key=lambda row: _search_key(
            folded, tiers[row.id], row, lowered[row.id], normalized[row.id],
            row.file_path in generated,
        ),
    )  # fmt: skip
    hits = _hits(db, [(row.id, tiers[row.id]) for row in best])
    if written and qualified and not exact:  # a path as code writes it names them, first
        found_as, named_rows = _written_path(db, query, params, filters)
        generated = _generated_files(db, [row.file_path for row in named_rows])
        named_rows.sort(key=lambda row: _find_key(found_as, row, row.file_path in generated))
        named = {row.id for row in named_rows}
        shown = _hits(db, [(row.id, 0) for row in named_rows])
        hits = shown + [hit for hit, row in zip(hits, best, strict=True) if row.id not in named]
        hits = hits[:limit]
    return hits


def _hits(db: Store, ranked: list[tuple[int, int]]) -> list[SymbolHit]:
    """The results for (symbol id, match tier) pairs, in that order, their details read."""
    ids = json.dumps([symbol_id for symbol_id, _ in ranked])
    details = {row[0]: _Candidate(*row) for row in db.conn.execute(DETAILS_SQL, {"ids": ids})}
    return [_hit(details[symbol_id], tier) for symbol_id, tier in ranked]


# --- the prepared table: a server's prefix and subsequence scans -------------------------------

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)  # LIKE's folding


class _Prepared:
    """Every symbol in SEARCH_SQL's order (but its first key), for the sources SQLite answers
    slowly: a subsequence LIKE reads the whole table, and a common prefix (`opera`, `test_`)
    sorts thousands of rows (together ~20-60 ms on 68,000 symbols). Made once per index state,
    for a server's KeptReader (`Store.state`); a scan returns the rows SEARCH_SQL returns."""

    SCANS = ("prefix", "tail_prefix", "subsequence", "qualified_subsequence")
    # repomap_demoted once per file, not per symbol: a Python call for each of the kernel's
    # 4.8M rows cost ~2 s of every index state a server prepares.
    BUILD_SQL = (
        """WITH d AS MATERIALIZED (SELECT id, repomap_demoted(path) AS demoted FROM files)
    SELECT s.id, s.name, s.qualified_name, s.kind, s.is_definition,
        coalesce(n.ref_files, 0) AS ref_files, coalesce(r.rank, 0) AS symbol_rank, f.path,
        s.start_line, f.language, s.file_id
    FROM """
        + _TABLES
        + """ JOIN d ON d.id = s.file_id
    ORDER BY ref_files DESC, (s.is_definition AND f.path NOT LIKE '%.pyi') DESC, """
        + _KIND_ORDER_SQL
        + """, d.demoted, symbol_rank DESC, length(s.qualified_name), f.path,
        s.start_line, s.id"""
    )

    def __init__(self, db: Store) -> None:
        # One string object per distinct kind, language and path (SQLite returns a new one per
        # row), and a name's folded forms are the name itself when equal: on LLVM's 68,000
        # symbols ~53 MB (~78 MB without), made in ~0.3 s of CPU, ~0.1 s more on first use of
        # the qualified and prefix sources.
        self._strings: dict[str, str] = {}
        one = self._one
        self.rows: list[_Ranked] = []
        self.kinds: list[str] = []
        self.languages: list[str] = []
        self.file_ids: list[int] = []
        for row in with_demoted(db).execute(self.BUILD_SQL):
            symbol_id, name, qualified, kind, is_def, ref_files, rank, path, line = row[:9]
            language, file_id = row[9:]
            kind = one(kind)
            self.rows.append(
                _Ranked(symbol_id, name, qualified, kind, is_def, ref_files, rank, one(path), line)
            )
            self.kinds.append(kind)
            self.languages.append(one(language))
            self.file_ids.append(file_id)
        self.lowered = [_same(row.name, row.name.lower()) for row in self.rows]
        self.normalized = [
            _same(row.qualified_name, _normalize(row.qualified_name)) for row in self.rows
        ]
        self._qualified_nocase: dict[str, list[int]] | None = None  # made on use
        self.equal: dict[str, list[int]] = {}  # name or qualified name (exact case): positions
        for position, row in enumerate(self.rows):
            self.equal.setdefault(row.name, []).append(position)
            if row.qualified_name != row.name:
                self.equal.setdefault(row.qualified_name, []).append(position)
        self._folded: dict[int, tuple[list[str], np.ndarray]] = {}  # by field, made on use
        self._by_name: tuple[list[str], list[int]] | None = None

    def _one(self, text: str) -> str:
        return self._strings.setdefault(text, text)

    def _letters(self, field: int) -> tuple[list[str], np.ndarray]:
        """The names (field 1) or qualified names (2) folded as LIKE and NOCASE fold them, and a
        mask per name of the characters it holds (bit `ord(c) % 64`), so that names lacking one
        of a query's characters are passed over without a look."""
        if field not in self._folded:
            import numpy as np

            values = [
                _same(text, text.translate(_ASCII_LOWER))
                for text in (row.name if field == 1 else row.qualified_name for row in self.rows)
            ]
            # Each name with a "\n" after it: no segment is empty (the bit of "\n" is in all).
            starts = np.cumsum([0] + [len(value) + 1 for value in values[:-1]], dtype=np.int64)
            text = "\n".join(values) + "\n"
            codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
            bits = np.left_shift(np.uint64(1), (codes % 64).astype(np.uint64))
            masks = np.bitwise_or.reduceat(bits, starts) if values else np.zeros(0, np.uint64)
            self._folded[field] = values, masks
        return self._folded[field]

    def _qualified_equal(self, *queries: str) -> set[int]:
        """Positions whose qualified name NOCASE-equals one of `queries`."""
        if self._qualified_nocase is None:
            self._qualified_nocase = {}
            for position, row in enumerate(self.rows):
                folded = row.qualified_name.translate(_ASCII_LOWER)
                self._qualified_nocase.setdefault(folded, []).append(position)
        return {
            position
            for query in queries
            for position in self._qualified_nocase.get(query.translate(_ASCII_LOWER), ())
        }

    def _sorted_names(self) -> tuple[list[str], list[int]]:
        """The folded names in NOCASE order, and the position of each."""
        if self._by_name is None:
            values, _ = self._letters(1)
            order = sorted(range(len(values)), key=values.__getitem__)
            self._by_name = [values[i] for i in order], order
        return self._by_name

    def scan(self, source: str, params: dict[str, str], cap: int) -> list[tuple[_Ranked, str, str]]:
        """SEARCH_SQL's rows for `source` and the filters in `params`, each with its name in
        lower case and its qualified name _normalize()d."""
        rows, lowered, normalized = self.rows, self.lowered, self.normalized
        return [(rows[p], lowered[p], normalized[p]) for p in self._positions(source, params, cap)]

    def _positions(self, source: str, params: dict[str, str], cap: int) -> list[int]:
        query = params["q"]
        if source in ("prefix", "tail_prefix"):
            low, high = (params["lo"], params["hi"]) if source == "prefix" else (
                params["last_lo"], params["last_hi"]
            )  # fmt: skip
            names, positions = self._sorted_names()
            in_range = positions[bisect_left(names, low) : bisect_left(names, high)]
            ordered = sorted(in_range)
            values = self.lowered  # any: every position of `ordered` matches
            is_match: Callable[[str], object] = _anything
        else:
            values, is_match, ordered = self._subsequence(source, query)
        inside = set(ordered)

        def matches(position: int) -> bool:
            return position in inside and bool(is_match(values[position]))

        # _filters' clauses, in memory: `s.kind IN (:kinds)`, `f.language = :language`, file ids
        wanted = set(json.loads(params["kinds"])) if "kinds" in params else None
        language = params.get("language")
        file_ids = set(json.loads(params["file_ids"])) if "file_ids" in params else None
        kinds, languages, files = self.kinds, self.languages, self.file_ids
        # SEARCH_SQL's first keys: `name = :q OR qualified_name = :q`, then the qualified name
        # equal to :q or :q_alt as NOCASE compares; then the stored order.
        equal = set(self.equal.get(query, ()))
        nocase = self._qualified_equal(params["q"], params["q_alt"])
        lead = sorted(equal & nocase) + sorted(equal - nocase) + sorted(nocase - equal)
        found = [position for position in lead if matches(position)]
        skip = equal | nocase
        # In slices, most of which one comprehension settles: far cheaper than a row at a time.
        for start in range(0, len(ordered), CHUNK):
            found += [
                position
                for position in ordered[start : start + CHUNK]
                if position not in skip and is_match(values[position])
            ]
            if wanted is not None or language is not None or file_ids is not None:
                found = [
                    position
                    for position in found
                    if (wanted is None or kinds[position] in wanted)
                    and (language is None or languages[position] == language)
                    and (file_ids is None or files[position] in file_ids)
                ]
            if len(found) >= cap:
                break
        return found[:cap]

    def _subsequence(
        self, source: str, query: str
    ) -> tuple[list[str], Callable[[str], object], list[int]]:
        """The folded names, a test of whether one holds the LIKE pattern's letters in order,
        and the positions (in order) whose names can."""
        import numpy as np

        field = 1 if source == "subsequence" else 2
        letters = [
            c.translate(_ASCII_LOWER)
            for c in (query if field == 1 else _normalize(query))
            if field == 1 or c != "."
        ]
        values, masks = self._letters(field)
        # Each letter, then the next one's first occurrence after it: a subsequence, found
        # without backtracking (possessive).
        is_match = re.compile("".join(f"[^{re.escape(c)}]*+{re.escape(c)}" for c in letters)).match
        wanted = np.uint64(0)
        for c in letters:
            wanted |= np.uint64(1) << np.uint64(ord(c) % 64)
        return values, is_match, np.flatnonzero((masks & wanted) == wanted).tolist()

    @property
    def usable(self) -> bool:
        return bool(self.rows)


def _anything(_: str) -> bool:
    return True


def _same(text: str, changed: str) -> str:
    """`changed`, or `text` itself when equal: one string object instead of two."""
    return text if changed == text else changed


_PREPARED: dict[object, _Prepared | None] = {}  # by Store.state; None: not usable
PREPARED_KEPT = 4  # index states (several roots, or an old one still being read)
CHUNK = 2048  # candidate positions a prepared scan checks at a time


# A reader whose index changed under it makes a table for the new state only once that state
# has lasted this long; before, it asks SQLite. While a re-index runs (`repomap serve --watch`),
# each batch it commits is a new state, a few hundred milliseconds apart: a table per state
# made every lookup cost ~0.3-1 s of CPU (bench/serve_load.py), SQLite's answer 5-40 ms.
SETTLE_SECONDS = 1.0
_SEEN: dict[object, tuple[object, float]] = {}  # reader -> (its newest state, when first seen)


def _prepared(db: Store) -> _Prepared | None:
    """The prepared table of `db`'s state, made on first use; None for a one-query connection,
    which would spend more making it than it saves, and for a state younger than
    SETTLE_SECONDS that replaced one this reader had a table for (the index is changing)."""
    if db.state is None:
        return None
    if db.state not in _PREPARED:
        reader = db.state[0] if isinstance(db.state, tuple) else None
        now = time.monotonic()
        seen, since = _SEEN.get(reader, (db.state, now))
        if seen != db.state:
            since = now
        _SEEN[reader] = (db.state, since)
        had_table = any(isinstance(state, tuple) and state[0] == reader for state in _PREPARED)
        if had_table and now - since < SETTLE_SECONDS:
            return None
        for old in [
            state for state in _PREPARED if isinstance(state, tuple) and state[0] == reader
        ]:
            del _PREPARED[old]  # an older state of the same reader: never asked for again
        while len(_PREPARED) >= PREPARED_KEPT:
            del _PREPARED[next(iter(_PREPARED))]  # the oldest
        prepared = _Prepared(db)
        _PREPARED[db.state] = prepared if prepared.usable else None
    return _PREPARED[db.state]


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
    clauses += file_clauses(db, language, path, params)
    return params, "".join(f" AND {clause}" for clause in clauses)


def file_clauses(
    db: Store, language: str | None, path: str | None, params: dict[str, Any]
) -> list[str]:
    """The SQL conditions on `files f` that --lang and --path ask for, their values added to
    `params` (`:language`, `:file_ids`): symbols' lookups and search/references.py's."""
    clauses = []
    if language:
        clauses.append("f.language = :language")
        params["language"] = resolve_language(language)
    file_ids = store.filtered_ids(db, path)
    if file_ids is not None:
        clauses.append("f.id IN (SELECT value FROM json_each(:file_ids))")
        params["file_ids"] = json.dumps(file_ids)
    return clauses


def match_params(query: str) -> dict[str, str]:
    parts = [p for p in _SEPARATOR.split(query) if p]
    last = parts[-1] if parts else query
    alt = query.replace("::", "\0").replace(".", "::").replace("\0", ".")
    return {
        "q": query,
        "q_alt": alt,
        "names": json.dumps(sorted({query, last, *tails(query), *tails(alt)})),
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


NAME_SEPARATORS = 16  # `::` and `.` inside one name, at most (LLVM's headers: 3, in operators)


def tails(qualified: str) -> list[str]:
    """The parts of `qualified` after a `::` or a `.` (`a::b.c`: `b.c`, `c`): the names a symbol
    with that qualified name can have, if not the whole (docs/schema.md, v18). Only the parts
    after the last NAME_SEPARATORS + 1 separators, so a long query costs linear time."""
    starts = [i + 2 for i in range(len(qualified)) if qualified.startswith("::", i)]
    starts += [i + 1 for i, c in enumerate(qualified) if c == "."]
    return [qualified[start:] for start in sorted(starts)[-(NAME_SEPARATORS + 1) :]]


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_OPERATOR_WORD = re.compile(r"\boperator\b")
_SPACE_BY_PUNCTUATION = re.compile(r"\s+(?=\W)|(?<=\W)\s+")


def spelled_as_indexed(query: str) -> str:
    """An operator's name as the index spells it (extractors/cpp.py `_operator_name`):
    `S::operator <<` asks for `S::operator<<`, `operator new []` for `operator new[]`."""
    found = _OPERATOR_WORD.search(query)
    if found is None:
        return query
    rest = _SPACE_BY_PUNCTUATION.sub("", query[found.end() :].strip())
    gap = " " if rest[:1].isalnum() or rest[:1] == "_" else ""
    return query[: found.end()] + gap + rest


def _normalize(qualified: str) -> str:
    """`a::b::C` and `a.b.C` compare equal, case-insensitively."""
    return qualified.replace("::", ".").lower()


def match_tier(query: str, name: str, qualified: str) -> int:
    """0 exact, 1 prefix, 2 substring, 3 fuzzy, 4 no match."""
    return _Folded(query).tier(name, qualified)


class _Folded:
    """A query normalized once, for the tiers of many names."""

    __slots__ = ("query", "q", "dotted", "dot_q", "letters", "spread_letters")

    def __init__(self, query: str) -> None:
        self.query = query
        self.q = _normalize(query)
        self.dotted = "." in self.q
        self.dot_q = "." + self.q
        self.letters = self.q.replace(".", "")
        self.spread_letters = query.lower().replace(".", "").replace(":", "")

    def tier(self, name: str, qualified: str) -> int:
        return self.tier_of(name.lower(), _normalize(qualified))

    def tiers(self, names: list[str], qualified_names: list[str]) -> list[int]:
        """tier_of() of many (one comprehension: ~3x faster than a call per name)."""
        q, dot_q, dotted = self.q, self.dot_q, self.dotted
        # _is_subsequence as one possessive match: each letter's first occurrence after the last
        subsequence = re.compile(
            "".join(f"[^{re.escape(c)}]*+{re.escape(c)}" for c in self.letters)
        ).match
        return [
            0
            if q in (n, qn) or qn.endswith(dot_q)
            else 1
            if n.startswith(q) or qn.startswith(q) or dot_q in qn
            else 2
            if q in n or q in qn
            else 3
            if subsequence(qn if dotted else n)
            else 4
            for n, qn in zip(names, qualified_names, strict=True)
        ]

    def tier_of(self, n: str, qn: str) -> int:
        """tier() of a name in lower case and a qualified name _normalize()d."""
        q = self.q
        if q in (n, qn) or qn.endswith(self.dot_q):
            return 0
        if n.startswith(q) or qn.startswith(q) or self.dot_q in qn:
            return 1
        if q in n or q in qn:
            return 2
        return 3 if _is_subsequence(self.letters, qn if self.dotted else n) else 4


def _is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(c in it for c in needle)


def _spread(q: str, n: str) -> int:
    """How spread out the query's letters `q` are in the name `n` (both in lower case): tighter
    fuzzy matches first."""
    start = pos = n.find(q[0]) if q else 0
    for c in q[1:]:
        pos = n.find(c, pos + 1)
    return (pos - start) - len(q) if start >= 0 and pos >= 0 else len(n)


def _fuzzy_spread(query: str, name: str) -> int:
    """How spread out the query's letters are in the name: tighter fuzzy matches first."""
    return _spread(query.lower().replace(".", "").replace(":", ""), name.lower())


def _search_key(
    folded: _Folded, tier: int, c: _Ranked, lowered: str, normalized: str, generated: bool = False
) -> tuple[Any, ...]:
    """order_key() of a match whose tier, lower-case name and _normalize()d qualified name
    are known already."""
    spread = _spread(folded.spread_letters, lowered) if tier == 3 else 0
    exact_case = 0 if folded.query in (c.name, c.qualified_name) else 1
    qualified = 0 if folded.q == normalized else 1
    return (tier, spread, exact_case, qualified, -c.ref_files,
            not c.is_definition or c.file_path.endswith(".pyi"),
            KIND_ORDER.get(c.kind, OTHER_KINDS), demoted(c.file_path) or generated, -c.rank,
            len(c.qualified_name), c.file_path, c.start_line)  # fmt: skip


# A doc tool's tag alone on a line (nghttp2's `@function`, `@struct`; Doxygen's `\file`): no
# summary; `@brief`'s text is one.
_TAG_ONLY = re.compile(r"[@\\][A-Za-z_]+:?\s*")
_BRIEF = re.compile(r"[@\\](?:brief|short|summary)\b:?\s*")


def summary_line(doc: str | None) -> str | None:
    """A doc's first line that says something: doc tools' lone tags skipped (every public
    nghttp2 function's `doc` read "@function", an MCP agent saw), `@brief` taken off."""
    for line in (doc or "").splitlines():
        line = line.strip()
        if line and not _TAG_ONLY.fullmatch(line):
            return _BRIEF.sub("", line, count=1) if _BRIEF.match(line) else line
    return None


def _hit(c: _Candidate, tier: int) -> SymbolHit:
    doc = summary_line(c.doc)
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
        MATCH_TIERS[tier],
        c.ref_files,
        bool(c.is_definition),
    )


# --- find_symbol -----------------------------------------------------------------------------

# A name as `show` and the map's --mention look it up: its last part, or the whole qualified name.
FIND_MATCH_SQL = qualified_match_sql(
    "s.name = :last COLLATE NOCASE OR s.qualified_name = :q COLLATE NOCASE "
    "OR s.qualified_name = :q_alt COLLATE NOCASE"
)
FIND_SQL = f"""SELECT {_COLUMNS} FROM {_TABLES}
WHERE ({FIND_MATCH_SQL}) {{filters}}"""
SYMBOL_BY_ID_SQL = f"SELECT {_COLUMNS} FROM {_TABLES} WHERE s.id = ?"


_FILE_NAMED_SQL = """SELECT path FROM (SELECT path FROM files UNION ALL SELECT path FROM doc_files
    UNION ALL SELECT path FROM data_files)
    WHERE path = :name OR substr(path, -length(:name) - 1) = '/' || :name  -- no LIKE: `_`, `%`
    ORDER BY length(path), path LIMIT 1"""


def _file_named(db: Store, name: str) -> str | None:
    """The indexed file that `name` names (its path, or its path's tail), if any: `show
    README.md` said only that no symbol has that name (a search user's report)."""
    if "/" not in name and "." not in name:
        return None  # a symbol's name; and no scan of every path for each typo
    found = db.conn.execute(_FILE_NAMED_SQL, {"name": name}).fetchone()
    return found[0] if found else None


def find_symbol(
    db: Store, name: str, file: str | None = None, nth: int | None = None
) -> SymbolMatch:
    """The symbol called `name` (or whose qualified name is or ends with it), best first;
    `nth`: the Nth of the matches in that order instead (a property's setter after its getter,
    a C++ overload, a Rust cfg variant: one file and one qualified name, so --file cannot)."""
    asked = name.strip()
    name = spelled_as_indexed(asked)
    if not name:
        raise BadQuery("give a symbol name, e.g. `QuerySet.filter`")
    params, filters = _filters(db, None, None, file)
    rows = _named(db, name, params, filters)
    if not rows:  # a path as code writes it: `django.db.models.QuerySet`, `crate::a::B`
        name, rows = _written_path(db, name, params, filters)
    if not rows:  # a member a base class defines: `Group.main` is `Command.main`
        name, rows = _inherited(db, name, params, filters)
    if not rows:
        where = f" in files matching {file!r}" if file else ""
        unmatched = bool(file) and store.names_nothing(db, file or "")
        if unmatched:
            where += UNMATCHED_FILES
        suggestions = suggest(db, asked, file)
        hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
        if not suggestions and (path := _file_named(db, asked)):
            hint = (
                f"; {path} is a file: `repomap open {path}` shows it, `repomap outline {path}`"
                " lists its sections or symbols"
            )
        raise SymbolNotFound(f"no symbol named {asked!r}{where}{hint}", suggestions, unmatched)
    generated = _generated_files(db, [row.file_path for row in rows])
    rows.sort(key=lambda row: _find_key(name, row, row.file_path in generated))
    if _module_line(rows[0]):
        # A Rust `mod NAME;` line says where a module is, not what it does: `show memchr` and
        # `show parse` showed that line over the functions of the name (its file is no symbol).
        # Last, here and in the numbered list --nth picks from.
        rows.sort(key=_module_line)  # stable: the others first, in their order
    if nth is not None:
        if not 1 <= nth <= len(rows):
            raise nth_out_of_range(
                nth, len(rows), asked, f" in files matching {file!r}" if file else ""
            )
        rows.insert(0, rows.pop(nth - 1))
    return SymbolMatch(rows[0], rows[1:])


def _module_line(row: SymbolRow) -> bool:
    """Whether `row` is a Rust module declared on one line (`mod parse;`), its body a file."""
    return row.kind == "module" and row.language == "rust" and row.start_line == row.end_line


def _named(db: Store, name: str, params: dict[str, str], filters: str) -> list[SymbolRow]:
    """The symbols `name` names exactly (match tier 0) that `filters` keep."""
    found = db.conn.execute(FIND_SQL.format(filters=filters), {**params, **match_params(name)})
    rows = (_symbol_row(row) for row in found)
    return [row for row in rows if match_tier(name, row.name, row.qualified_name) == 0]


def _written_path(
    db: Store, name: str, params: dict[str, str], filters: str
) -> tuple[str, list[SymbolRow]]:
    """(the name found, its symbols) for the first of written_paths' alternatives to `name`
    that names symbols `filters` keep; (`name`, []) when none does. A Rust `mod x;` line
    is taken only when no later alternative names more: `rayon_core::spawn` is both the
    private module `spawn` and the function `pub use self::spawn::spawn` makes public."""
    declared: tuple[str, list[SymbolRow]] | None = None
    for alternative in written_paths.alternatives(db, name):
        within = f"{filters} AND f.language = :written_language"
        if alternative.file_ids is not None:
            within += f" AND s.file_id IN ({','.join(map(str, alternative.file_ids))})"
        found = _named(
            db, alternative.name, {**params, "written_language": alternative.language}, within
        )
        if alternative.exact:
            found = [row for row in found if row.qualified_name == alternative.name]
        if found and not all(_is_module_line(row) for row in found):
            return alternative.name, found
        declared = declared or ((alternative.name, found) if found else None)
    return declared or (name, [])


def _is_module_line(row: SymbolRow) -> bool:
    """A Rust `mod x;`: a module whose items are in another file."""
    return row.kind == "module" and row.start_line == row.end_line and row.language == "rust"


MAX_BASES = 32  # classes looked at for one inherited member
_CLASS_KINDS = ("class", "struct")


def _inherited(
    db: Store, name: str, params: dict[str, str], filters: str
) -> tuple[str, list[SymbolRow]]:
    """(the name found, its symbols) when `name` is Class.member (`::` in C++) and a base
    class of Class, or one of theirs (breadth first, as attribute lookup goes), defines the
    member; (`name`, []) otherwise."""
    parts = _SEPARATOR.split(name)
    if len(parts) < 2 or not all(parts):
        return name, []
    separator = "::" if name.endswith(f"::{parts[-1]}") else "."
    container, member = name[: -len(parts[-1]) - len(separator)], parts[-1]
    queue, seen = [container], {container}
    while queue and len(seen) <= MAX_BASES:
        held = queue.pop(0)  # the class, or (the first) a path to it (`click.Group`)
        for row in _named(db, held, params, "") or _written_path(db, held, params, "")[1]:
            if row.kind not in _CLASS_KINDS:
                continue
            for base in bases.base_names(row.signature, row.language):
                short = _SEPARATOR.split(base)[-1]  # `core.Command`: qualified names lack modules
                if short in seen:
                    continue
                seen.add(short)
                candidate = f"{short}{separator}{member}"
                found = _named(db, candidate, params, filters)
                if found:
                    return candidate, found
                queue.append(short)
    return name, []


def nth_out_of_range(nth: int, count: int, name: str, where: str = "") -> BadArgument:
    """The error for an `nth` past the `count` symbols that match `name` (`where`: in what)."""
    many = f"{count} symbols match" if count > 1 else "1 symbol matches"
    return BadArgument(f"nth {nth} is out of range: {many} {name!r}{where}")


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


def _find_key(name: str, row: SymbolRow, generated: bool) -> tuple[Any, ...]:
    return order_key(name, row.name, row.qualified_name, row.kind, row.is_definition,
                     row.ref_files, row.rank, row.file_path, row.start_line,
                     generated)  # fmt: skip


# Files whose every chunk is demoted though their path is not: a tool wrote them (index/chunks.py
# is_generated: tmux's cmd-parse.c, Bison's output of cmd-parse.y, showed its copy of each parser
# function first). Chunk ids are file id x ROWS_PER_FILE + ordinal.
_GENERATED_FILES_SQL = """SELECT f.path FROM files f
WHERE f.path IN (SELECT value FROM json_each(:paths))
  AND EXISTS (SELECT 1 FROM chunks c
              WHERE c.id >= f.id * :per_file AND c.id < (f.id + 1) * :per_file)
  AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id >= f.id * :per_file
                  AND c.id < (f.id + 1) * :per_file AND c.is_test = 0)"""


def _generated_files(db: Store, paths: list[str]) -> frozenset[str]:
    """Of `paths` (files of a lookup's matches), those whose chunks are all demoted while the
    path is not (see above)."""
    asked = sorted({path for path in paths if not demoted(path)})
    if not asked or len(set(paths)) < 2:
        return frozenset()  # one file: nothing to put after another
    found = db.conn.execute(
        _GENERATED_FILES_SQL, {"paths": json.dumps(asked), "per_file": store.ROWS_PER_FILE}
    )
    return frozenset(path for (path,) in found)


def suggest(db: Store, name: str, file: str | None = None, limit: int = 5) -> list[str]:
    """Up to `limit` qualified names close to `name`: prefix and fuzzy matches, then typos."""
    last = [p for p in _SEPARATOR.split(name) if p][-1:] or [name]
    target = last[0].lower()
    names: dict[str, list[str]] = {}
    for (found,) in _typo_candidates(db, target):
        names.setdefault(found.lower(), []).append(found)
    suggestions = []  # typos first (`QuerySte` -> QuerySet), then prefix and fuzzy matches
    for close in difflib.get_close_matches(target, names, n=limit, cutoff=0.75):
        spellings = sorted(
            names[close], key=lambda n: -difflib.SequenceMatcher(None, last[0], n).ratio()
        )
        for spelling in spellings:
            suggestions.extend(_qualified_for(db, spelling, limit))
    hits = search_symbols(db, name, path=file, limit=limit, written=False) if name.strip() else []
    suggestions.extend(
        hit.qualified_name
        for hit in hits
        if hit.match != "fuzzy" or _alike(target, hit.name.lower())
    )
    return list(dict.fromkeys(suggestions))[:limit]


def _alike(typed: str, name: str) -> bool:
    """Whether a fuzzy match reads like what was typed: its letters in order are not enough
    (`list_add_tial` is spread through the kernel's 70-letter
    `MILLISECOND_TIME_BASE_DIV__MILLISECOND_TIME_BASE_CLOCK_SOURCE_SEL_MASK`)."""
    return difflib.SequenceMatcher(None, typed, name).ratio() >= FUZZY_SUGGESTION_RATIO


# Past this many symbols, a typo's candidates share its first letter: difflib over every name
# of a similar length took the Linux kernel's index (4 million symbols, 488,000 such names)
# 3-9 s per misspelt `show`, where a correct name takes 0.1 s.
TYPO_SCAN_SYMBOLS = 300_000
_TYPO_ALL_SQL = "SELECT DISTINCT name FROM symbols WHERE length(name) BETWEEN ? AND ?"
_TYPO_INITIAL_SQL = """SELECT DISTINCT name FROM symbols
WHERE name >= ? COLLATE NOCASE AND name < ? COLLATE NOCASE AND length(name) BETWEEN ? AND ?"""


def _typo_candidates(db: Store, target: str) -> Iterable[tuple[str]]:
    """The names a misspelling of `target` (lower case) may stand for: every name of about its
    length, or in a large index those that also start with its first letter (the name index's
    range)."""
    lengths = (len(target) - 2, len(target) + 2)
    if not target or (db.scalar("SELECT max(id) FROM symbols") or 0) <= TYPO_SCAN_SYMBOLS:
        return db.conn.execute(_TYPO_ALL_SQL, lengths)
    initial = target[0]
    return db.conn.execute(_TYPO_INITIAL_SQL, (initial, chr(ord(initial) + 1), *lengths))


def _qualified_for(db: Store, name: str, limit: int) -> list[str]:
    rows = db.conn.execute(
        """SELECT s.qualified_name FROM symbols s LEFT JOIN name_stats n ON n.name = s.name
        WHERE s.name = ? COLLATE NOCASE AND s.name = ?
        ORDER BY coalesce(n.ref_files, 0) DESC, s.qualified_name LIMIT ?""",
        (name, name, limit),  # NOCASE first: the name index answers it, not a scan
    )
    return [qualified_name for (qualified_name,) in rows]
