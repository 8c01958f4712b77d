"""What the repo map reads: the stored ranking (`symbol_ranks`, `file_ranks`, the map's order
kept by index/ranking.py) and the symbols and files it names."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repomap import store
from repomap.index import ranking
from repomap.search import symbols
from repomap.store import Store, chunks
from repomap.store import ranks as store_ranks

if TYPE_CHECKING:
    import numpy as np

IN_FILES = "s.file_id IN (SELECT value FROM json_each(:files))"
# A ranked symbol's file is its symbols row's (schema v18).
RANKED_TABLES = "symbol_ranks r JOIN symbols s ON s.id = r.symbol_id"
RANKED_SYMBOLS_SQL = f"""SELECT r.symbol_id, r.rank FROM {RANKED_TABLES}
ORDER BY r.rank DESC, s.file_id, r.symbol_id LIMIT :limit OFFSET :offset"""
RANKED_IN_FILES_SQL = f"""SELECT r.symbol_id, r.rank FROM {RANKED_TABLES} WHERE {IN_FILES}
ORDER BY r.rank DESC, s.file_id, r.symbol_id LIMIT :limit OFFSET :offset"""
PAGE_RANKS_SQL = "SELECT symbol_id, rank FROM symbol_ranks WHERE symbol_id IN ({ids})"
SYMBOLS_NAMED_SQL = (
    f"SELECT s.id, s.name, s.qualified_name FROM symbols s WHERE {symbols.FIND_MATCH_SQL}"
)


@dataclass(frozen=True, slots=True)
class MapSymbolRow:
    """A MAP_SYMBOLS_SQL row, in its column order."""

    id: int
    file_id: int
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    parent_id: int | None


MAP_SYMBOLS_SQL = f"""SELECT s.id, s.file_id, s.name, s.qualified_name, s.kind, s.start_line,
    s.end_line, {symbols.SIGNATURE_SQL}, s.parent_id FROM symbols s WHERE s.id IN ({{ids}})"""


@dataclass(frozen=True, slots=True)
class MapFileRow:
    """A MAP_FILES_SQL row, in its column order."""

    id: int
    path: str
    language: str
    line_count: int
    rank: float


MAP_FILES_SQL = """SELECT f.id, f.path, f.language, f.line_count, coalesce(r.rank, 0)
FROM files f LEFT JOIN file_ranks r ON r.file_id = f.id WHERE f.id IN ({ids})"""


def ranked_symbols(
    db: Store, limit: int, offset: int = 0, files: list[int] | None = None
) -> list[tuple[int, float]]:
    """(symbol id, score) of the stored unpersonalized ranking, best first; only the symbols of
    `files` when given."""
    return [(symbol_id, score) for symbol_id, score, _ in ranked_page(db, limit, offset, files)]


def ranked_page(
    db: Store, limit: int, offset: int = 0, files: list[int] | None = None
) -> list[tuple[int, float, int]]:
    """ranked_symbols() with how far back each symbol is demoted (map_demoted: 0, 1 or 2)."""
    page_and_levels = _stored_page(db, limit, offset, files)
    if page_and_levels is None:  # ranked before schema v12 and not since: sort
        return [
            (symbol_id, rank, 0)
            for symbol_id, rank in db.conn.execute(
                RANKED_SYMBOLS_SQL if files is None else RANKED_IN_FILES_SQL,
                {"limit": limit, "offset": offset, "files": json.dumps(files)},
            )
        ]
    page, levels = page_and_levels
    ranks: dict[int, float] = {
        symbol_id: rank
        for chunk in chunks(page, 900)
        for symbol_id, rank in db.conn.execute(
            PAGE_RANKS_SQL.format(ids=",".join("?" * len(chunk))), chunk
        )
    }
    return [
        (symbol_id, ranks[symbol_id], level)
        for symbol_id, level in zip(page, levels, strict=True)
        if symbol_id in ranks
    ]


def _stored_page(
    db: Store, limit: int, offset: int, files: list[int] | None
) -> tuple[list[int], list[int]] | None:
    """A page of the stored map order (symbol ids) and their demotion levels, only the symbols
    of `files` when given; None for an index ranked before the order was stored."""
    import numpy as np

    order = _kept_array(db, "map_order")
    if order is None:
        return None
    if files is None:
        positions = np.arange(offset, min(offset + limit, len(order)))
    else:
        order_files = _kept_array(db, "map_order_file")
        assert order_files is not None  # stored with map_order, always
        kept = np.flatnonzero(np.isin(order_files, np.array(files, dtype=np.int64)))
        positions = kept[offset : offset + limit]
    # The order holds each level's symbols after the lower levels' (map_order_levels: how many
    # of each), so a position's level is the number of levels that end at or before it.
    counts = _kept_array(db, "map_order_levels")
    levels = (
        np.searchsorted(np.cumsum(counts), positions, side="right")
        if counts is not None and len(counts)
        else np.zeros(len(positions), dtype=np.int64)
    )
    return order[positions].tolist(), levels.tolist()


def demoted(db: Store) -> np.ndarray | None:
    """How far back each definition of the kept graph goes in the map: 0 not, 1 a C/C++
    #define or a declaration linked to a definition, 2 a test, example or vendored file's."""
    return _kept_array(db, "map_demoted")


def _kept_array(db: Store, name: str) -> np.ndarray | None:
    return ranking.kept(db, name, lambda: store_ranks.load_arrays(db, (name,)).get(name))


def map_symbols(db: Store, ids: Iterable[int]) -> dict[int, MapSymbolRow]:
    """The rows of these symbols and of every symbol enclosing them."""
    found: dict[int, MapSymbolRow] = {}
    wanted = set(ids)
    while wanted:
        for chunk in chunks(sorted(wanted), 900):
            sql = MAP_SYMBOLS_SQL.format(ids=",".join("?" * len(chunk)))
            for row in db.conn.execute(sql, chunk):
                symbol = MapSymbolRow(*row)
                found[symbol.id] = symbol
        wanted = {
            row.parent_id
            for row in found.values()
            if row.parent_id is not None and row.parent_id not in found
        } - set(found)
    return found


def map_files(db: Store, ids: Iterable[int]) -> dict[int, MapFileRow]:
    """These files with their stored rank."""
    found: dict[int, MapFileRow] = {}
    for chunk in chunks(sorted(ids), 900):
        sql = MAP_FILES_SQL.format(ids=",".join("?" * len(chunk)))
        for row in db.conn.execute(sql, chunk):
            file = MapFileRow(*row)
            found[file.id] = file
    return found


def file_count(db: Store) -> int:
    return db.scalar("SELECT count(*) FROM files")


def ranked_symbol_count(db: Store, files: list[int] | None = None) -> int:
    if files is None:
        return db.scalar("SELECT count(*) FROM symbol_ranks")
    return db.scalar(
        f"SELECT count(*) FROM {RANKED_TABLES} WHERE {IN_FILES}", {"files": json.dumps(files)}
    )


def symbol_ids_named(db: Store, names: Iterable[str]) -> dict[str, list[int]]:
    """Symbols whose name or qualified name is one of `names` (case-insensitive), by name."""
    found: dict[str, list[int]] = {}
    for name in names:
        params = symbols.match_params(name)
        rows = db.conn.execute(
            SYMBOLS_NAMED_SQL,
            params,
        )
        matches = [
            (symbol_id, symbol_name, qualified_name)
            for symbol_id, symbol_name, qualified_name in rows
            if symbols.match_tier(name, symbol_name, qualified_name) == 0
        ]
        exact_case = [
            symbol_id
            for symbol_id, symbol_name, qualified_name in matches
            if name in (symbol_name, qualified_name) or qualified_name.endswith(name)
        ]
        found[name] = sorted(exact_case or [symbol_id for symbol_id, _, _ in matches])
    return found


def files_matching(db: Store, path: str) -> list[int]:
    """Ids of the files a --focus or --mention path names (a file, folder, tail or glob)."""
    return store.filtered_ids(db, path) or []


def files_with_stem(db: Store, stem: str) -> list[int]:
    """Files named like a mentioned identifier: `query` -> query.py, query.rs, query.h."""
    escaped = symbols.like_escape(stem)
    rows = db.conn.execute(
        "SELECT id, path FROM files WHERE path LIKE ? ESCAPE '\\' OR path LIKE ? ESCAPE '\\'",
        (f"{escaped}.%", f"%/{escaped}.%"),
    )
    wanted = stem.lower()
    return [f for f, path in rows if path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower() == wanted]


def all_file_ids(db: Store) -> list[int]:
    return [file_id for (file_id,) in db.conn.execute("SELECT id FROM files ORDER BY id")]
