"""Symbol lookups and the rankings behind the repo map: all of their SQL lives here.

Python API (each takes an open index, `repomap.db.open_index(path)`):
- `search_symbols(db, query, kind=None, language=None, path=None, limit=20) -> list[SymbolHit]`:
  case-insensitive exact, prefix, substring and fuzzy (subsequence) matches on the name and the
  qualified name (`QuerySet.filter` and `Mutex::lock` match the tail of a qualified name), best
  first; among equals, names used from more files first.
- `find_symbol(db, name, file=None) -> SymbolMatch`: the best definition for `name`, the others,
  or `SymbolNotFound` with "did you mean" suggestions. `repomap.snippets.symbol_content()` turns
  it into source read from disk (`repomap.get_symbol_content()` does both).
- `refresh_ranks(db)`: recompute the stored rankings when the index changed (index.py calls it).
"""

from __future__ import annotations

import difflib
import hashlib
import re
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from repomap import store
from repomap.errors import BadQuery, RepomapError
from repomap.extractors.model import KINDS
from repomap.store import Store

if TYPE_CHECKING:
    import numpy as np

    from repomap.index import pagerank as rank

RANK_FORMAT = (
    "8"  # bump when rank.py weighs or stores differently: the next `repomap index` re-ranks
)
# 6: rank_arrays blobs are zlib-compressed, int64 arrays stored as int32 when they fit
# 7: definitions cached per file (defs_* rows) beside the uses
# 8: the map's order stored as the map_order row (schema v12 dropped its index)
NOT_RANKED_KINDS = (
    "impl",
    "namespace",
    "module",
)  # containers: shown as headers, not reached by name
MATCH_TIERS = ("exact", "prefix", "substring", "fuzzy")
FUZZY_CANDIDATES = 2000  # rows a subsequence scan hands to Python for ordering
MAX_LIMIT = 1000  # as search_text's and the MCP tools': past SQLite's integers it overflowed
LANGUAGES = ("python", "rust", "cpp")


class SymbolNotFound(RepomapError):
    """No symbol has that name; the message carries "did you mean" suggestions."""


class FileChanged(RepomapError):
    """The file changed on disk since it was indexed: its stored lines would be wrong."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class NoRanking(RepomapError):
    """The index has no ranking yet (made by a repomap without it, or only migrated)."""


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
    """A symbols row with its file, as lookups need it."""

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


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    """The best symbol for a name and the other candidates, best first."""

    best: SymbolRow
    others: list[SymbolRow] = field(default_factory=list)


# --- search_symbols --------------------------------------------------------------------------

_COLUMNS = """s.id, s.file_id, s.name, s.qualified_name, s.kind, f.language, f.path, s.start_line,
    s.end_line, s.signature, s.parent_id, s.doc, s.is_definition, s.declaration_id, f.hash"""
SEARCH_SQL = f"""SELECT {_COLUMNS}, coalesce(n.ref_files, 0) AS ref_files
FROM symbols s JOIN files f ON f.id = s.file_id LEFT JOIN name_stats n ON n.name = s.name
WHERE ({{match}}) {{filters}}
ORDER BY (s.name = :q OR s.qualified_name = :q) DESC, ref_files DESC, s.is_definition DESC,
    length(s.qualified_name), f.path, s.start_line
LIMIT :cap"""
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
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise BadQuery(f"--limit must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}")
    params, filters = _filters(kind, language, path)
    params.update(_match_params(query))
    qualified = bool(_SEPARATOR.search(query))
    sources = (
        ("exact", "tail", "tail_prefix", "qualified_subsequence")
        if qualified
        else ("exact", "prefix", "subsequence")
    )
    found: dict[int, tuple] = {}
    for source in sources:
        cap = limit + len(found) if source != sources[-1] else max(FUZZY_CANDIDATES, limit)
        sql = SEARCH_SQL.format(match=MATCH_SQL[source], filters=filters)
        for row in db.conn.execute(sql, {**params, "cap": cap}):
            found.setdefault(row[0], row)
        if sum(_tier(query, row[2], row[3]) == 0 for row in found.values()) >= limit:
            break
    ranked = sorted(found.values(), key=lambda row: _search_key(query, row))
    return [_hit(query, row) for row in ranked if _tier(query, row[2], row[3]) < len(MATCH_TIERS)][
        :limit
    ]


def _filters(kind: str | None, language: str | None, path: str | None) -> tuple[dict, str]:
    params: dict = {}
    clauses = []
    if kind:
        if kind.lower() not in KINDS:  # an unknown kind matched nothing, silently
            raise BadQuery(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
        clauses.append("s.kind = :kind")
        params["kind"] = kind.lower()
    if language:
        if language.lower() not in LANGUAGES:
            raise BadQuery(f"unknown language {language!r}; use one of {', '.join(LANGUAGES)}")
        clauses.append("f.language = :language")
        params["language"] = language.lower()
    if path:
        clauses.append(path_filter_sql("f.path"))
        params.update(path_filter_params(path))
    return params, "".join(f" AND {clause}" for clause in clauses)


def path_filter_sql(column: str) -> str:
    """A file, a folder (everything under it), a path tail, or a glob when it has * ? or [."""
    return (
        f"({column} = :path OR {column} LIKE :path_under ESCAPE '\\' "
        f"OR {column} LIKE :path_tail ESCAPE '\\' OR {column} GLOB :path_glob)"
    )


def path_filter_params(path: str) -> dict[str, str]:
    path = path.strip().strip("/").removeprefix("./")
    escaped = _like_escape(path)
    glob = path if any(c in path for c in "*?[") else _glob_escape(path)
    return {
        "path": path,
        "path_under": f"{escaped}/%",
        "path_tail": f"%/{escaped}",
        "path_glob": glob,
    }


def _match_params(query: str) -> dict[str, str]:
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
        "subsequence": "%" + "%".join(_like_escape(c) for c in query) + "%",
        "qualified_subsequence": "%"
        + "%".join(_like_escape(c) for c in _normalize(query) if c != ".")
        + "%",
    }


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _normalize(qualified: str) -> str:
    """`a::b::C` and `a.b.C` compare equal, case-insensitively."""
    return qualified.replace("::", ".").lower()


def _tier(query: str, name: str, qualified: str) -> int:
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


def _search_key(query: str, row: tuple) -> tuple:
    tier = _tier(query, row[2], row[3])
    spread = _fuzzy_spread(query, row[2]) if tier == 3 else 0
    exact_case = 0 if query in (row[2], row[3]) else 1
    return (tier, spread, exact_case, -row[-1], -row[12], len(row[3]), row[6], row[7])


def _hit(query: str, row: tuple) -> SymbolHit:
    doc = row[11].strip().splitlines()[0] if row[11] and row[11].strip() else None
    return SymbolHit(
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        doc,
        MATCH_TIERS[_tier(query, row[2], row[3])],
        row[-1],
    )


# --- find_symbol -----------------------------------------------------------------------------

FIND_SQL = f"""SELECT {_COLUMNS}, coalesce(r.rank, 0) FROM symbols s JOIN files f ON f.id = s.file_id
LEFT JOIN symbol_ranks r ON r.symbol_id = s.id
WHERE (s.name = :last COLLATE NOCASE OR s.qualified_name = :q COLLATE NOCASE
       OR s.qualified_name = :q_alt COLLATE NOCASE) {{filters}}"""
SYMBOL_BY_ID_SQL = f"""SELECT {_COLUMNS}, coalesce(r.rank, 0) FROM symbols s
JOIN files f ON f.id = s.file_id LEFT JOIN symbol_ranks r ON r.symbol_id = s.id WHERE s.id = ?"""
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
    "impl": 4,
    "namespace": 5,
    "module": 5,
}


def find_symbol(db: Store, name: str, file: str | None = None) -> SymbolMatch:
    """The symbol called `name` (or whose qualified name is or ends with it), best first."""
    name = name.strip()
    if not name:
        raise BadQuery("give a symbol name, e.g. `QuerySet.filter`")
    params, filters = _filters(None, None, file)
    params.update(_match_params(name))
    sql = FIND_SQL.format(filters=filters)
    rows = [_row(row) for row in db.conn.execute(sql, params) if _tier(name, row[2], row[3]) == 0]
    if not rows:
        where = f" in files matching {file!r}" if file else ""
        suggestions = suggest(db, name, file)
        hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
        raise SymbolNotFound(f"no symbol named {name!r}{where}{hint}")
    rows.sort(key=lambda row: _find_key(name, row))
    return SymbolMatch(rows[0], rows[1:])


def symbol_by_id(db: Store, symbol_id: int) -> SymbolRow | None:
    row = db.conn.execute(SYMBOL_BY_ID_SQL, (symbol_id,)).fetchone()
    return _row(row) if row else None


def ancestors(db: Store, symbol: SymbolRow) -> list[SymbolRow]:
    """The enclosing symbols, outermost first (class of a method, impl of a Rust fn, namespaces)."""
    chain: list[SymbolRow] = []
    parent_id = symbol.parent_id
    while parent_id is not None and len(chain) < 32 and (parent := symbol_by_id(db, parent_id)):
        chain.append(parent)
        parent_id = parent.parent_id
    return chain[::-1]


def _row(row: tuple) -> SymbolRow:
    return SymbolRow(*row[:12], bool(row[12]), row[13], row[14], row[15])


def _find_key(name: str, row: SymbolRow) -> tuple:
    exact_case = 0 if name in (row.name, row.qualified_name) else 1
    qualified = 0 if _normalize(name) == _normalize(row.qualified_name) else 1
    return (
        qualified,
        exact_case,
        not row.is_definition,
        KIND_ORDER.get(row.kind, 6),
        -row.rank,
        row.file_path,
        row.start_line,
    )


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
    return [row[0] for row in rows]


def file_hash(path: Path) -> str:
    """blake2b-128 of a file's bytes, as the indexer stores it in files.hash."""
    return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()


# --- rankings: stored at index time -----------------------------------------------------------

# Every definition the graph can reach, C++ out-of-line definitions linked to a declaration
# included: a link changes without its file, so each run drops the linked ones it finds then.
CANDIDATES_SQL = f"""SELECT s.id, s.file_id, s.name, s.kind, s.doc IS NOT NULL, s.parent_id IS NULL
FROM symbols s WHERE s.kind NOT IN ({", ".join(f"'{k}'" for k in NOT_RANKED_KINDS)})"""
FILE_CANDIDATES_SQL = CANDIDATES_SQL + " AND s.file_id IN ({ids})"
LINKED_SQL = "SELECT id FROM symbols WHERE declaration_id IS NOT NULL"  # schema v11's index
# A file's symbols as one key: any rewrite of its rows gives them new ids.
FILE_SYMBOLS_SQL = "SELECT file_id, min(id), count(*) FROM symbols GROUP BY file_id"
DEFS_CACHE = (
    "defs_symbol",
    "defs_file",
    "defs_name",
    "defs_prior",
    "defs_names",
    "defs_shape",
    "defs_keys",
)
# How often each file uses each identifier. Cached in rank_arrays between runs (uses_* rows),
# so a run that changed a few files reads only their refs: aggregating every file's refs costs
# as much as the rest of the ranking together.
ALL_USES_SQL = "SELECT file_id, name, count(*) FROM refs GROUP BY file_id, name"
FILE_USES_SQL = (
    "SELECT file_id, name, count(*) FROM refs WHERE file_id IN ({ids}) GROUP BY file_id, name"
)
FETCH_ROWS = 50_000  # rows of symbols or refs turned into columns at a time, for ranking
USES_CACHE = ("uses_file", "uses_name", "uses_count", "uses_names", "uses_file_ids", "uses_hashes")


def ranks_fingerprint(db: Store) -> str:
    """Changes whenever any file's rows were rewritten (ids, paths and hashes) or ranking changed.

    The path counts: ids are reused, and the same bytes under a test path weigh less.
    """
    digest = hashlib.blake2b(digest_size=16)
    digest.update(RANK_FORMAT.encode())
    for file_id, path, file_hash_ in db.conn.execute(
        "SELECT id, path, hash FROM files ORDER BY id"
    ):
        digest.update(f"{file_id}:{path}:{file_hash_}\n".encode())
    count, top = db.conn.execute("SELECT count(*), coalesce(max(id), 0) FROM symbols").fetchone()
    digest.update(f"{count}:{top}".encode())
    return digest.hexdigest()


def refresh_ranks(db: Store, force: bool = False) -> bool:
    """Recompute file, symbol and name rankings unless the index is unchanged since the last time."""
    ranking = compute_ranks(db, force)
    if ranking is None:
        return False
    store_ranks(db, ranking)
    return True


@dataclass(frozen=True)
class Ranking:
    """What compute_ranks() found, for store_ranks() to write."""

    fingerprint: str
    file_ids: np.ndarray
    graph: rank.Graph
    definitions: rank.Definitions
    scores: np.ndarray  # one per definition
    stats: list[tuple[str, int, int]]  # name_stats rows
    stats_digest: str
    stats_changed: bool
    arrays: list[tuple[str, str, bytes]]  # rank_arrays rows, packed: the graph and the caches


def compute_ranks(db: Store, force: bool = False) -> Ranking | None:
    """The rankings of the index as it is, or None when they are stored already. Only reads, so
    it can run on a reader connection while a writer merges the text indexes."""
    fingerprint = ranks_fingerprint(db)
    if not force and store.get_meta(db, "rank_fingerprint") == fingerprint:
        return None
    import numpy as np

    from repomap.index import pagerank as rank  # numpy: only when ranking

    files = db.conn.execute("SELECT id, path, hash FROM files ORDER BY id").fetchall()
    file_ids = np.array([file_id for file_id, _, _ in files], dtype=np.int64)
    share = np.array([rank.TEST_SHARE if rank.is_test_path(path) else 1.0 for _, path, _ in files])
    defs = _file_definitions(db, files)
    linked = np.array([symbol_id for (symbol_id,) in db.conn.execute(LINKED_SQL)], dtype=np.int64)
    ranked = ~np.isin(defs["defs_symbol"], linked)
    # defs_names is sorted and np.unique keeps that order: the names are in canonical order.
    alive, name_indices = np.unique(defs["defs_name"][ranked], return_inverse=True)
    names = [defs["defs_names"][i] for i in alive.tolist()]
    file_indices = np.searchsorted(file_ids, defs["defs_file"][ranked])
    definitions = rank.Definitions(
        defs["defs_symbol"][ranked],
        file_indices,
        name_indices.reshape(-1),
        defs["defs_prior"][ranked],
        share[file_indices],
    )
    cache = _file_uses(db, files)
    defined = {name: i for i, name in enumerate(names)}
    to_defined = np.array([defined.get(name, -1) for name in cache["uses_names"]], dtype=np.int64)
    name_of_use = to_defined[cache["uses_name"]] if len(to_defined) else np.zeros(0, np.int64)
    kept = name_of_use >= 0
    uses = (
        np.stack(
            [
                np.searchsorted(file_ids, cache["uses_file"][kept]),
                name_of_use[kept],
                cache["uses_count"][kept].astype(np.int64),
            ],
            axis=1,
        )
        if kept.any()
        else np.zeros((0, 3), dtype=np.int64)
    )
    # Canonical order, whatever the cache's history: the same index gives bit-identical ranks.
    uses = uses[np.lexsort((uses[:, 1], uses[:, 0]))]
    graph = rank.build(file_ids, defs["defs_shape"][alive], definitions, uses)
    scores = rank.map_order(graph, graph.rank, rank.definition_scores(graph, graph.rank))
    ref_files = np.bincount(graph.c_name, minlength=len(names)).tolist()
    defining = np.unique(definitions.name_indices * len(file_ids) + definitions.file_indices)
    def_files = np.bincount(defining // max(len(file_ids), 1), minlength=len(names)).tolist()
    stats = [(name, ref_files[i], def_files[i]) for i, name in enumerate(names) if ref_files[i]]
    # Most runs leave every name's counts as they were: rewriting 30k rows cost ~40 ms of each.
    stats_digest = hashlib.blake2b(repr(stats).encode(), digest_size=16).hexdigest()
    stats_changed = force or store.get_meta(db, "name_stats_digest") != stats_digest
    return Ranking(
        fingerprint,
        file_ids,
        graph,
        definitions,
        scores,
        stats,
        stats_digest,
        stats_changed,
        [
            (name, *_pack(value))
            for name, value in {
                **graph.to_arrays(),
                **cache,
                **defs,
                "map_order": _map_order(definitions, file_ids, scores),
            }.items()
        ],
    )


def _map_order(definitions: rank.Definitions, file_ids: np.ndarray, scores: np.ndarray):
    """Symbol ids by rank, best first; ties by file id, then symbol id (the map's pages)."""
    import numpy as np

    ids = np.asarray(definitions.symbol_ids, dtype=np.int64)
    order = np.lexsort((ids, file_ids[definitions.file_indices], -scores))
    return ids[order]


def store_ranks(db: Store, ranking: Ranking) -> None:
    """Replace the stored rankings with `ranking`, in one transaction."""
    graph, definitions, file_ids = ranking.graph, ranking.definitions, ranking.file_ids
    with db.atomic():
        for table in ("file_ranks", "symbol_ranks", "rank_arrays"):
            db.conn.execute(f"DELETE FROM {table}")
        if ranking.stats_changed:
            db.conn.execute("DELETE FROM name_stats")
            db.conn.executemany(
                "INSERT INTO name_stats (name, ref_files, def_files) VALUES (?, ?, ?)",
                ranking.stats,
            )
        db.conn.executemany(
            "INSERT INTO file_ranks (file_id, rank) VALUES (?, ?)",
            zip(file_ids.tolist(), graph.rank.tolist(), strict=True),
        )
        db.conn.executemany(
            "INSERT INTO symbol_ranks (symbol_id, file_id, rank) VALUES (?, ?, ?)",
            zip(
                definitions.symbol_ids.tolist(),
                file_ids[definitions.file_indices].tolist(),
                ranking.scores.tolist(),
                strict=True,
            ),
        )
        db.conn.executemany(
            "INSERT INTO rank_arrays (name, dtype, data) VALUES (?, ?, ?)", ranking.arrays
        )
        store.set_meta(
            db,
            {
                "rank_fingerprint": ranking.fingerprint,
                "rank_format": RANK_FORMAT,
                "name_stats_digest": ranking.stats_digest,
            },
        )


def _file_definitions(db: Store, files: list[tuple[int, str, str]]) -> dict:
    """Every definition the graph can reach (linked ones too) as arrays, read from symbols only
    for the files whose rows were rewritten since the cached copy in rank_arrays was made:
    reading all of them (a scan of the whole table) took ~120 ms of a one-file run on LLVM."""
    import numpy as np

    from repomap.index import pagerank as rank

    cache = (
        _load_arrays(db, DEFS_CACHE) if store.get_meta(db, "rank_format") == RANK_FORMAT else {}
    )
    hashes = {file_id: file_hash_ for file_id, _, file_hash_ in files}
    keys = {
        file_id: f"{file_id}:{hashes.get(file_id)}:{first}:{count}"
        for file_id, first, count in db.conn.execute(FILE_SYMBOLS_SQL)
    }
    valid: set[int] = set()
    if len(cache) == len(DEFS_CACHE):
        cached_keys = set(cache["defs_keys"])
        valid = {file_id for file_id, key in keys.items() if key in cached_keys}
    valid, fresh = _fresh_rows(db, set(keys), valid, CANDIDATES_SQL, FILE_CANDIDATES_SQL)
    interned = _Interned(cache["defs_names"] if valid else [])
    priors: dict[tuple, float] = {}  # a handful of (kind, documented, top level): each once
    columns = _Columns(
        defs_symbol=np.int64, defs_file=np.int64, defs_name=np.int64, defs_prior=np.float64
    )
    for rows in fresh:
        symbol_ids, file_ids, row_names, kinds, documented, top_level = zip(*rows, strict=True)
        kinds_of_rows = list(zip(kinds, documented, top_level, strict=True))
        for key in set(kinds_of_rows).difference(priors):
            priors[key] = rank.kind_prior(key[0], bool(key[1]), bool(key[2]))
        columns.add(
            defs_symbol=symbol_ids,
            defs_file=file_ids,
            defs_name=interned.numbers(row_names),
            defs_prior=[priors[key] for key in kinds_of_rows],
        )
    shapes = np.concatenate(
        [
            cache["defs_shape"] if valid else np.zeros(0),
            np.array([rank.shape(n) for n in interned.added()]),
        ]
    )
    defs = _cached_and_fresh(cache, "defs_file", valid, columns.arrays())
    order = np.argsort(defs["defs_symbol"], kind="stable")  # by id, whatever the cache's history
    defs = {key: value[order] for key, value in defs.items()}
    # Forget names no definition has any more, and keep the rest sorted.
    alive, inverse = np.unique(defs["defs_name"], return_inverse=True)
    names = interned.names()
    alive_names = [names[i] for i in alive.tolist()]
    by_name = sorted(range(len(alive_names)), key=alive_names.__getitem__)
    position = np.empty(len(by_name), dtype=np.int64)
    position[by_name] = np.arange(len(by_name))
    defs["defs_name"] = position[inverse.reshape(-1)]
    return {
        **defs,
        "defs_names": [alive_names[i] for i in by_name],
        "defs_shape": shapes[alive][by_name] if len(by_name) else np.zeros(0),
        "defs_keys": list(keys.values()),
    }


def _file_uses(db: Store, files: list[tuple[int, str, str]]) -> dict:
    """Every (file, identifier, uses) of the index as arrays, read from refs only for the files
    whose hash changed since the cached copy in rank_arrays was made."""
    import numpy as np

    cache = (
        _load_arrays(db, USES_CACHE) if store.get_meta(db, "rank_format") == RANK_FORMAT else {}
    )
    current = {file_id: file_hash_.encode() for file_id, _, file_hash_ in files}
    valid: set[int] = set()
    if len(cache) == len(USES_CACHE):
        valid = {
            int(f)
            for f, h in zip(cache["uses_file_ids"], cache["uses_hashes"], strict=True)
            if current.get(int(f)) == h
        }
    valid, fresh = _fresh_rows(db, set(current), valid, ALL_USES_SQL, FILE_USES_SQL)
    interned = _Interned(cache.get("uses_names", []) if valid else [])
    columns = _Columns(uses_file=np.int64, uses_name=np.int64, uses_count=np.int64)
    for rows in fresh:
        file_ids, row_names, counts = zip(*rows, strict=True)
        columns.add(uses_file=file_ids, uses_name=interned.numbers(row_names), uses_count=counts)
    used = _cached_and_fresh(cache, "uses_file", valid, columns.arrays())
    # Forget names no file uses any more, so the list does not grow run after run.
    alive, used["uses_name"] = np.unique(used["uses_name"], return_inverse=True)
    names = interned.names()
    return {
        **used,
        "uses_names": [names[i] for i in alive.tolist()],
        "uses_file_ids": np.array(list(current), dtype=np.int64),
        "uses_hashes": np.array(list(current.values()), dtype="S32"),
    }


def _fresh_rows(
    db: Store, files: set[int], valid: set[int], all_sql: str, file_sql: str
) -> tuple[set[int], Iterator[list[tuple]]]:
    """(files whose cached rows stay, rows read for the others, a chunk at a time): every row,
    and no cached row kept, when most files are stale. Chunks, because the 2.6M symbol rows of
    the Linux kernel's headers held as tuples at once took ~0.9 GB."""
    stale = sorted(files - valid)
    if len(stale) > len(files) // 2:  # cheaper to read everything at once
        return set(), _fetched(db.conn.execute(all_sql))
    return valid, (
        rows
        for chunk in _chunks(stale, 900)
        for rows in _fetched(
            db.conn.execute(file_sql.format(ids=",".join("?" * len(chunk))), chunk)
        )
    )


def _fetched(cursor: sqlite3.Cursor) -> Iterator[list[tuple]]:
    while rows := cursor.fetchmany(FETCH_ROWS):
        yield rows


class _Interned:
    """Names numbered in the order first seen: the cached ones first, then the fresh ones."""

    def __init__(self, cached: Iterable[str]) -> None:
        self.number = {name: i for i, name in enumerate(cached)}
        self.cached = len(self.number)

    def numbers(self, names: Iterable[str]) -> list[int]:
        return [self.number.setdefault(name, len(self.number)) for name in names]

    def added(self) -> list[str]:
        return list(self.number)[self.cached :]

    def names(self) -> list[str]:
        """Every name, at its number."""
        return list(self.number)


class _Columns:
    """Typed columns filled a chunk of rows at a time: 8 bytes a value, not a Python object."""

    def __init__(self, **dtypes: Any) -> None:
        self.dtypes = dtypes
        self.parts: dict[str, list] = {key: [] for key in dtypes}

    def add(self, **values: Sequence) -> None:
        import numpy as np

        for key, column in values.items():
            self.parts[key].append(np.array(column, dtype=self.dtypes[key]))

    def arrays(self) -> dict[str, tuple[Any, Any]]:
        """{key: (values, dtype)}, as _cached_and_fresh takes them."""
        import numpy as np

        return {
            key: (np.concatenate(parts) if parts else [], self.dtypes[key])
            for key, parts in self.parts.items()
        }


def _cached_and_fresh(cache: dict, file_key: str, valid: set[int], fresh: dict) -> dict:
    """Each cached column's rows of the `valid` files, then its fresh (values, dtype)."""
    import numpy as np

    keep = np.isin(cache[file_key], np.array(sorted(valid), dtype=np.int64)) if valid else None
    columns = {}
    for key, (values, dtype) in fresh.items():
        old = cache[key][keep] if keep is not None else np.zeros(0, dtype)
        columns[key] = np.concatenate([old.astype(dtype), np.array(values, dtype=dtype)])
    return columns


def _pack(value) -> tuple[str, bytes]:
    """(dtype, zlib-compressed bytes) for rank_arrays; a list of names is stored as UTF-8 lines.

    Ids and counts fit in 32 bits and compress well: stored raw as int64 the arrays were 5-6 MB
    on each test corpus (a tenth of the index), packed they are under 1 MB. Level 1 packs them
    in ~30 ms and a personalized map unpacks them in ~15 ms.
    """
    import numpy as np

    if isinstance(value, list):
        return "names", zlib.compress("\n".join(value).encode(), 1)
    info = np.iinfo(np.int32)
    if value.dtype == np.int64 and (
        not len(value) or (info.min <= value.min() and value.max() <= info.max)
    ):
        value = value.astype("<i4")
    return value.dtype.str, zlib.compress(value.tobytes(), 1)


def _load_arrays(db: Store, names: tuple[str, ...]) -> dict:
    import numpy as np

    sql = f"SELECT name, dtype, data FROM rank_arrays WHERE name IN ({','.join('?' * len(names))})"
    arrays = {}
    for name, dtype, packed in db.conn.execute(sql, names):
        data = zlib.decompress(packed)
        if dtype == "names":
            arrays[name] = data.decode().split("\n") if data else []
        else:
            arrays[name] = np.frombuffer(data, dtype=np.dtype(dtype))
    return arrays


def require_ranks(db: Store) -> None:
    if store.get_meta(db, "rank_format") != RANK_FORMAT:
        raise NoRanking("this index has no repo-map ranking yet; run `repomap index` to compute it")


def load_graph(db: Store):  # -> rank.Graph
    """The stored graph, for personalized PageRank (kept: unpacking it costs ~5-10 ms)."""
    from repomap.index import pagerank as rank

    return _kept(db, "graph", lambda: rank.Graph.from_arrays(_load_arrays(db, rank.ARRAY_NAMES)))


Kept = TypeVar("Kept")


def _kept(db: Store, what: str, load: Callable[[], Kept]) -> Kept:
    """`load()`, which reads the stored ranking, kept for the next call on the same state.

    A long-running process (the MCP server) keeps what it read, keyed by the index file and its
    ranks' fingerprint. The fingerprint alone is not enough: two indexes of the same bytes
    under other paths (a test file's share differs) have equal fingerprints, other graphs.
    """
    require_ranks(db)
    fingerprint = store.get_meta(db, "rank_fingerprint")
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    key = (path, fingerprint, what)
    if fingerprint and key in _KEPT:
        return _KEPT[key]
    value = load()
    if fingerprint:
        for old in [k for k in _KEPT if k[0] == path and k[2] == what]:  # older ranks
            del _KEPT[old]
        while sum(k[2] == what for k in _KEPT) >= GRAPHS_KEPT:  # several roots: oldest goes
            del _KEPT[next(k for k in _KEPT if k[2] == what)]
        _KEPT[key] = value
    return value


_KEPT: dict[tuple[str, str, str], object] = {}
GRAPHS_KEPT = 4  # indexes whose graph a process keeps (an MCP server may serve several roots)


# --- what the map reads ----------------------------------------------------------------------

RANKED_SYMBOLS_SQL = """SELECT symbol_id, rank FROM symbol_ranks
ORDER BY rank DESC, file_id, symbol_id LIMIT :limit OFFSET :offset"""
PAGE_RANKS_SQL = "SELECT symbol_id, rank FROM symbol_ranks WHERE symbol_id IN ({ids})"
MAP_SYMBOLS_SQL = """SELECT s.id, s.file_id, s.name, s.qualified_name, s.kind, s.start_line,
    s.end_line, s.signature, s.parent_id FROM symbols s WHERE s.id IN ({ids})"""


@dataclass(frozen=True, slots=True)
class MapSymbolRow:
    id: int
    file_id: int
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    parent_id: int | None


@dataclass(frozen=True, slots=True)
class MapFileRow:
    id: int
    path: str
    language: str
    line_count: int
    rank: float


def ranked_symbols(db: Store, limit: int, offset: int = 0) -> list[tuple[int, float]]:
    """(symbol id, score) of the stored unpersonalized ranking, best first."""
    order = _kept(db, "map_order", lambda: _load_arrays(db, ("map_order",)).get("map_order"))
    if order is None:  # ranked before schema v12 and not since: sort
        return db.conn.execute(RANKED_SYMBOLS_SQL, {"limit": limit, "offset": offset}).fetchall()
    page = order[offset : offset + limit].tolist()
    ranks = dict(
        row
        for chunk in _chunks(page, 900)
        for row in db.conn.execute(PAGE_RANKS_SQL.format(ids=",".join("?" * len(chunk))), chunk)
    )
    return [(symbol_id, ranks[symbol_id]) for symbol_id in page if symbol_id in ranks]


def map_symbols(db: Store, ids: Iterable[int]) -> dict[int, MapSymbolRow]:
    """The rows of these symbols and of every symbol enclosing them."""
    found: dict[int, MapSymbolRow] = {}
    wanted = set(ids)
    while wanted:
        for chunk in _chunks(sorted(wanted), 900):
            sql = MAP_SYMBOLS_SQL.format(ids=",".join("?" * len(chunk)))
            for row in db.conn.execute(sql, chunk):
                found[row[0]] = MapSymbolRow(*row)
        wanted = {
            row.parent_id
            for row in found.values()
            if row.parent_id is not None and row.parent_id not in found
        } - set(found)
    return found


def map_files(db: Store, ids: Iterable[int]) -> dict[int, MapFileRow]:
    """These files with their stored rank."""
    found: dict[int, MapFileRow] = {}
    for chunk in _chunks(sorted(ids), 900):
        rows = db.conn.execute(
            f"""SELECT f.id, f.path, f.language, f.line_count, coalesce(r.rank, 0)
            FROM files f LEFT JOIN file_ranks r ON r.file_id = f.id
            WHERE f.id IN ({",".join("?" * len(chunk))})""",
            chunk,
        )
        found.update((row[0], MapFileRow(*row)) for row in rows)
    return found


def file_count(db: Store) -> int:
    return db.conn.execute("SELECT count(*) FROM files").fetchone()[0]


def ranked_symbol_count(db: Store) -> int:
    return db.conn.execute("SELECT count(*) FROM symbol_ranks").fetchone()[0]


def symbol_ids_named(db: Store, names: Iterable[str]) -> dict[str, list[int]]:
    """Symbols whose name or qualified name is one of `names` (case-insensitive), by name."""
    found: dict[str, list[int]] = {}
    for name in names:
        params = _match_params(name)
        rows = db.conn.execute(
            """SELECT id, name, qualified_name FROM symbols WHERE name = :last COLLATE NOCASE
            OR qualified_name = :q COLLATE NOCASE OR qualified_name = :q_alt COLLATE NOCASE""",
            params,
        )
        matches = [row for row in rows if _tier(name, row[1], row[2]) == 0]
        exact_case = [row for row in matches if name in (row[1], row[2]) or row[2].endswith(name)]
        found[name] = sorted(row[0] for row in exact_case or matches)
    return found


def files_matching(db: Store, path: str) -> list[int]:
    """Ids of the files a --focus or --mention path names (a file, folder, tail or glob)."""
    sql = f"SELECT id FROM files f WHERE {path_filter_sql('f.path')} ORDER BY id"
    return [row[0] for row in db.conn.execute(sql, path_filter_params(path))]


def files_with_stem(db: Store, stem: str) -> list[int]:
    """Files named like a mentioned identifier: `query` -> query.py, query.rs, query.h."""
    escaped = _like_escape(stem)
    rows = db.conn.execute(
        "SELECT id, path FROM files WHERE path LIKE ? ESCAPE '\\' OR path LIKE ? ESCAPE '\\'",
        (f"{escaped}.%", f"%/{escaped}.%"),
    )
    wanted = stem.lower()
    return [f for f, path in rows if path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower() == wanted]


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
