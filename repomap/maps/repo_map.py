"""The repo map: the most important files and signatures that fit a token budget.

`repo_map(db, tokens=1024, focus=(), mentions=())` reads the ranking stored at index time
(`index_ranking.refresh_ranks`); with focus files or mentioned identifiers it re-runs PageRank from it,
personalized (`rank.pagerank`), and then fills the budget (`render.MapBuilder`). The same index
and arguments give byte-identical text.

- focus: files you are working on (a path, a folder, a path tail or a glob). The ranking is
  personalized toward them, and they are left out of the map (you have them open), as in aider.
- mentions: identifiers (`QuerySet`, `Mutex::lock`) or file names (`query.py`, or `query`, which
  also names query.py). Their uses weigh MENTION_BOOST times more and the files defining them
  are personalized toward; the mentioned definitions come first, then the definitions of
  mentioned files, and their files are listed first.
- path, exclude: path filters (repomap/paths.py) choosing the files the map may show; the
  ranking itself is of the whole index.

C and C++ `#define` macros and the declarations of functions defined elsewhere (a header's
prototype: the map shows the definition, index/ranking.py DECLARATIONS) come after every other
definition, and definitions in test, benchmark, example, vendored and generated files and
inline tests (what search demotes: `paths.is_demoted_path`, and each chunk's is_test, read by
index/ranking.py TEST_CODE) after those, each ranked among themselves, unless mentioned: they fill
the budget only when the rest of the (filtered) index is shown, so `--path tests/` maps tests and
`--path include/` a library's prototypes. A file whose shown rows are all demoted is listed
after the files with rows of a lesser level (files by rank within a level).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from repomap.errors import BadArgument, NotFound
from repomap.index import ranking as index_ranking
from repomap.maps import render
from repomap.maps import rows as map_rows

if TYPE_CHECKING:
    from repomap.store import Store

MIN_TOKENS = 32
MAX_TOKENS = 1_000_000  # far past any context window; beyond SQLite's integers it overflowed
UNIFORM_SHARE = 0.1  # of the teleport mass spread over every file when personalized


@dataclass(frozen=True, slots=True)
class MapSymbol:
    name: str
    qualified_name: str
    kind: str
    line_number: int
    end_line: int
    signature: str
    score: float
    header: bool  # shown only as the enclosing class/impl/namespace of a chosen definition


@dataclass(frozen=True, slots=True)
class MapFile:
    file_path: str
    language: str
    rank: float
    symbols: list[MapSymbol]


@dataclass(frozen=True, slots=True)
class RepoMap:
    """A rendered map and what it holds, with scores (for --json and the Python API)."""

    text: str
    tokens: int  # estimated with render.count_tokens; never more than `budget`
    budget: int
    files: list[MapFile]
    omitted_files: int
    omitted_symbols: int
    focus: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    unmatched_mentions: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class _Ranking:
    file_rank: dict[int, float] | None  # None: the stored file_ranks
    # (offset, size) -> (symbol id, score, how far back it is demoted: 0, 1 or 2)
    page: Callable[[int, int], list[tuple[int, float, int]]]


def repo_map(
    db: Store,
    tokens: int = 1024,
    focus: tuple[str, ...] | list[str] = (),
    mentions: tuple[str, ...] | list[str] = (),
    path: str | None = None,
    exclude: tuple[str, ...] | list[str] = (),
) -> RepoMap:
    """The map of the index in `db` within `tokens` estimated tokens, of the files `path` keeps
    (all when None) but those an `exclude` filter names."""
    if not MIN_TOKENS <= tokens <= MAX_TOKENS:
        raise BadArgument(
            f"the token budget must be from {MIN_TOKENS} to {MAX_TOKENS}, not {tokens}"
        )
    index_ranking.require_ranks(db)
    files: dict[int, map_rows.MapFileRow] = {}  # loaded as candidates reach them
    focus_ids = _focus_files(db, focus)
    shown = _shown_files(db, path, exclude)
    mentioned, unmatched, mention_files = _mentions(db, mentions)
    if focus_ids or mentioned or mention_files:
        ranking = _personalized(db, focus_ids, mentioned, mention_files, shown)
    else:
        ranking = _Ranking(None, lambda offset, size: map_rows.ranked_page(db, size, offset, shown))
    total_symbols = map_rows.ranked_symbol_count(db, shown)
    total_files = map_rows.file_count(db) if shown is None else len(shown)
    builder = render.MapBuilder(tokens, total_files - len(focus_ids), total_symbols)
    signatures: dict[int, str] = {}
    scores: dict[int, float] = {}
    rows: dict[int, map_rows.MapSymbolRow] = {}
    levels: dict[int, int] = {}  # file id -> the demotion level of its first row shown
    offset, size = 0, max(64, tokens // 4)
    while builder.fits_anything and (page := ranking.page(offset, size)):
        offset += len(page)
        rows.update(map_rows.map_symbols(db, [symbol_id for symbol_id, _, _ in page]))
        files.update(map_rows.map_files(db, {rows[i].file_id for i, _, _ in page} - set(files)))
        for symbol_id, score, level in page:
            symbol = rows[symbol_id]
            if symbol.file_id in focus_ids:
                continue
            scores[symbol_id] = score
            candidate = _candidate(symbol, rows, files[symbol.file_id], signatures)
            if candidate.rows and builder.offer(candidate):
                levels.setdefault(symbol.file_id, level)  # pages come by level: the least
            if not builder.fits_anything:
                break
    targets = mention_files | {rows[i].file_id for i in mentioned if i in rows}
    file_rank = ranking.file_rank or {f: row.rank for f, row in files.items()}
    # Files by rank, but those showing demoted rows alone after the others, as those rows are
    # chosen after the others: #defines and declarations, then tests and vendored code (the
    # top-ranked file of c-ares is its vendored gtest.h, which every test file uses, then a
    # config header of #defines; once the budget reached their rows they came first).
    order = {
        files[f].path: (f not in targets, levels.get(f, 0), -file_rank.get(f, 0.0), files[f].path)
        for f in files
    }
    layout = builder.layout(order)
    by_path = {row.path: row for row in files.values()}
    map_files = [
        MapFile(
            path,
            by_path[path].language,
            file_rank.get(by_path[path].id, 0.0),
            [_map_symbol(rows[r.key], scores.get(r.key, 0.0), r.key not in scores) for r in shown],
        )
        for path, shown in layout.files
    ]
    return RepoMap(
        layout.text,
        layout.tokens,
        tokens,
        map_files,
        builder.total_files - len(map_files),
        builder.total_symbols - len(builder.shown),
        list(focus),
        list(mentions),
        unmatched,
    )


def _candidate(
    symbol: map_rows.MapSymbolRow,
    rows: dict[int, map_rows.MapSymbolRow],
    file: map_rows.MapFileRow,
    signatures: dict[int, str],
) -> render.Candidate:
    chain = [symbol]
    while chain[-1].parent_id is not None and chain[-1].parent_id in rows and len(chain) < 16:
        chain.append(rows[chain[-1].parent_id])
    constructor = _constructor(symbol, rows)
    if constructor is not None:
        # A constructor shares its class's name, so it ranks with the class: its class's header
        # is shown in its place (LevelDB's map was half `Slice()`, `Env()` and deleted copies).
        # An out-of-line one's class is another file's, shown from there: nothing is here.
        chain = chain[1:] if constructor else []
    chain.reverse()
    for s in chain:
        if s.id not in signatures:
            signatures[s.id] = render.signature_text(s.signature)
    return render.Candidate(
        file.path,
        len(str(max(file.line_count, 1))),
        tuple(
            render.Row(
                s.id,
                s.start_line,
                depth,
                signatures[s.id],
                s.kind not in index_ranking.NOT_RANKED_KINDS,
                render.brief_text(signatures[s.id], s.name),
            )
            for depth, s in enumerate(chain)
        ),
    )


def _constructor(
    symbol: map_rows.MapSymbolRow, rows: dict[int, map_rows.MapSymbolRow]
) -> bool | None:
    """Whether a method named as its class or after `~` (a constructor or destructor) is
    inside its class (True) or defined out of line (`Slice::Slice() {}` in a .cc file: False);
    None for any other symbol."""
    if symbol.kind != "method":
        return None
    parent = rows.get(symbol.parent_id) if symbol.parent_id is not None else None
    if parent is not None and parent.kind in ("class", "struct"):
        return True if symbol.name.removeprefix("~") == parent.name else None
    scope = symbol.qualified_name.rsplit("::", 2)
    return False if len(scope) > 1 and symbol.name.removeprefix("~") == scope[-2] else None


def _map_symbol(row: map_rows.MapSymbolRow, score: float, header: bool) -> MapSymbol:
    return MapSymbol(
        row.name,
        row.qualified_name,
        row.kind,
        row.start_line,
        row.end_line,
        row.signature,
        score,
        header,
    )


def _focus_files(db: Store, focus: tuple[str, ...] | list[str]) -> set[int]:
    found: set[int] = set()
    for path in focus:
        ids = map_rows.files_matching(db, path)
        if not ids:
            raise BadArgument(
                f"focus file {path}: no indexed file matches it (give a path relative to the root)"
            )
        found.update(ids)
    return found


def _shown_files(
    db: Store, path: str | None, exclude: tuple[str, ...] | list[str]
) -> list[int] | None:
    """Ids of the files the map may show (ascending), or None for every file."""
    shown = map_rows.files_matching(db, path) if path is not None and path.strip() else None
    if shown is not None and not shown:  # nothing to map, as a search finds nothing: exit 1
        raise NotFound(f"path filter {path!r}: no indexed file matches it")
    excluded = {
        file_id for text in exclude if text.strip() for file_id in map_rows.files_matching(db, text)
    }
    if not excluded:
        return shown
    if shown is None:
        shown = map_rows.all_file_ids(db)
    return [file_id for file_id in shown if file_id not in excluded]


def _mentions(
    db: Store, mentions: tuple[str, ...] | list[str]
) -> tuple[set[int], list[str], set[int]]:
    """Mentioned symbol ids, mentions that matched nothing, and files named by mentions."""
    named = map_rows.symbol_ids_named(db, [m for m in mentions if m.strip()])
    ids = {symbol_id for found in named.values() for symbol_id in found}
    files: set[int] = set()
    unmatched = []
    for mention in mentions:
        stem = (
            mention.rsplit("/", 1)[-1].split(".", 1)[0]
            if "/" in mention or _has_suffix(mention)
            else mention
        )
        by_name = map_rows.files_with_stem(db, stem) if stem else []
        by_path = (
            map_rows.files_matching(db, mention) if "/" in mention or _has_suffix(mention) else []
        )
        files.update(by_name, by_path)
        if not named.get(mention) and not by_name and not by_path:
            unmatched.append(mention)
    return ids, unmatched, files


def _has_suffix(mention: str) -> bool:
    return mention.rsplit(".", 1)[-1] in {
        "py",
        "pyi",
        "rs",
        "h",
        "hpp",
        "hh",
        "cc",
        "cpp",
        "c",
        "cxx",
        "ipp",
        "inl",
    }


def _personalized(
    db: Store,
    focus_ids: set[int],
    mentioned: set[int],
    mention_files: set[int],
    shown: list[int] | None,
) -> _Ranking:
    import numpy as np

    from repomap.index import pagerank as rank

    graph = index_ranking.load_graph(db)
    position = {int(file_id): i for i, file_id in enumerate(graph.file_ids)}
    n = graph.file_count
    p = np.full(n, UNIFORM_SHARE / n)
    targets = [position[f] for f in sorted(focus_ids | mention_files) if f in position]
    is_mentioned = np.isin(graph.def_symbol, np.array(sorted(mentioned), dtype=np.int64))
    targets.extend(int(i) for i in np.unique(graph.def_file[is_mentioned]))
    for i in targets:
        p[i] += (1 - UNIFORM_SHARE) / len(targets)
    boost = np.unique(graph.def_name[is_mentioned])
    ranks = rank.pagerank(graph, p, boost)
    scores = rank.map_order(graph, ranks, rank.definition_scores(graph, ranks, boost))
    # What was asked for comes first: mentioned definitions, then those of mentioned files.
    top = scores.max() if len(scores) else 0.0
    in_files = np.isin(
        graph.def_file, np.array([position[f] for f in mention_files if f in position])
    )
    scores = scores + top * (2.0 * is_mentioned + 1.0 * (in_files & ~is_mentioned))
    # #defines and declarations, then tests and examples, after the rest, as in the stored
    # order, unless asked for.
    demoted = map_rows.demoted(db)
    last = (
        np.zeros(len(scores), dtype=np.int8)
        if demoted is None
        else np.where(is_mentioned | in_files, np.int8(0), demoted)
    )
    order = np.lexsort((graph.def_symbol, graph.def_file, -scores, last))
    if shown is not None:
        kept = np.isin(graph.file_ids[graph.def_file[order]], np.array(shown, dtype=np.int64))
        order = order[kept]

    def page(offset: int, size: int) -> list[tuple[int, float, int]]:
        chosen = order[offset : offset + size]
        return list(
            zip(
                graph.def_symbol[chosen].tolist(),
                scores[chosen].tolist(),
                last[chosen].tolist(),
                strict=True,
            )
        )

    return _Ranking({int(f): float(r) for f, r in zip(graph.file_ids, ranks, strict=True)}, page)
