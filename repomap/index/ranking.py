"""The repo map's rankings, computed at index time: PageRank over which files use which
definitions (pagerank.py), stored with the caches that let the next run re-read only the files
it changed. `refresh_ranks` is what `repomap index` calls; the map reads the result through
store/ranks.py and, for --focus and --mention, the graph kept here (`load_graph`).
"""

from __future__ import annotations

import hashlib
import sqlite3  # noqa: TID251 - a cursor's type, read in chunks
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from repomap import paths, store
from repomap.errors import RepomapError
from repomap.store import Store, chunks
from repomap.store import ranks as store_ranks_tables
from repomap.store.test_code import TestLines, in_test_lines, test_lines

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from repomap.index import pagerank as rank

RANK_FORMAT = (
    "23"  # bump when rank.py weighs or stores differently: the next `repomap index` re-ranks
)
# 6: rank_arrays blobs are zlib-compressed, int64 arrays stored as int32 when they fit
# 7: definitions cached per file (defs_* rows) beside the uses
# 8: the map's order stored as the map_order row (schema v12 dropped its index)
# 9: tests, examples and C/C++ macros after the other definitions in map_order (map_demoted);
#    map_order_file for the map's path filters
# 10: definitions by file, name, then id; the uses cache by file, then name; digests in meta
#    (rank_digests) so a run that changed no edge keeps its ranks and writes only what differs
# 11: meta rank_graph (store/ranks.py GRAPH_META): a run whose writes left the graph as it was
#    keeps the stored ranking whole, without reading it; a repomap that does not set the mark
#    writes another format, so its rankings are never taken for marked ones
# 12: vendored code (paths.is_demoted_path) weighs like tests
# 13: so do type stubs (.pyi)
# 14: integer arrays stored byte by byte (store/ranks.py pack): 15-20% smaller
# 15: paths.is_demoted_path counts a file named `test` (`src/test.rs`) as tests
# 16: a file whose out-weight is rounding alone is dangling (pagerank._out_weights)
# 17: paths.is_demoted_path counts folders named as tests (`libtests/`, `testdata/`)
# 18: and fuzzing harnesses (`fuzz/`, `oss-fuzz/`, `fuzzers/`, `x_fuzzer.cc`)
# 19: and code in documentation, sample and demo folders (`docs/code/`, `samples/`)
# 20: and `x_unittest.cc`, `x-test.cc`, `x_test_tool.cc`, `x_benchmark.cc`, `typing-examples/`
# 21: C/C++ definitions stand for their declarations (DECLARATIONS below): out-of-line
#    definitions ranked, declarations in the definition's file left out (defs_forward), linked
#    ones in other files demoted with a fifth of a share (they ranked in the definitions' place);
#    map_demoted in two steps: #defines and declarations (1) before tests and vendored code (2)
# 22: and `external/` at any depth, `contrib/` and `sandbox/` at the top of the tree
# 23: test code is what search demotes, read from the chunks' is_test (TEST_CODE below): also
#    generated files and, in a file of the project's own code, Rust's `mod tests` and `#[test]`
#    functions (defs_test, per definition); paths.is_demoted_path counts a bundled C test
#    harness (`tinytest/`)
NOT_RANKED_KINDS = (
    "impl",
    "namespace",
    "module",  # containers: shown as headers, not reached by name
    "field",  # a data member: `p->len` names one of thousands of `len`s, none a file's use
)


class NoRanking(RepomapError):
    """The index has no ranking yet (made by a repomap without it, or only migrated)."""


# --- rankings: stored at index time -----------------------------------------------------------

# DECLARATIONS. In C and C++ the map shows a function where it is defined, not where it is
# declared: an agent reading the map wants the body's place, and a definition's row gives it
# with the whole signature (an out-of-line one's qualified name names its class:
# `int GridIndex::cell_count(int a)`), which a prototype only repeats. So
# - a declaration whose own file defines the same qualified name (a `static` forward
#   declaration at the top of a .c file, an in-class declaration defined further down the
#   header) is not ranked at all (`forward`, per file in defs_forward): it says nothing the
#   definition does not, a few lines away, and it used to be shown in the definition's place;
# - a declaration in another file that a definition is linked to (symbols.declaration_id: a
#   header's prototype, a C++ in-class declaration of a method defined in a .cc file) is
#   ranked, but with DECLARATION_SHARE of a share of its name's uses and demoted (map_demoted)
#   like tests and #defines: a public header's API still maps, with `--path include/` or once
#   the budget reaches it, and the header keeps part of the rank of the names it declares
#   (callers include it), but the definitions come first. Before, the declaration stood for
#   both, and a .c file whose functions a header declares showed nothing (c-ares'
#   src/lib/ares_send.c, 36 of its 90 library files);
# - every definition is ranked, linked or not.
# Declarations not linked (a second prototype of a function, an `extern` variable's) rank as
# definitions do: their definition is not known. Python's `@overload` stubs (declarations too)
# are not C or C++: they keep their rows, whose typed signatures the implementation lacks.
DECLARATION_SHARE = 0.2

# TEST_CODE. The map puts tests, examples, vendored and generated code after the project's own
# (map_demoted 2) and weighs their definitions like tests (rank.TEST_SHARE): the code search
# demotes, as index/chunks.py decides it for each chunk (is_test), read here, not decided a
# second way. A path rule alone (paths.is_demoted_path) put textwrap's `mod tests` helpers and
# `#[test]` functions before `fill` and `wrap`, and libconfig's flex-generated scanner first.
# A definition is test code when a test chunk's lines hold its first line, or every definition
# of its file is when the file's module chunk is one (a tool wrote it) or all its chunks are.
# Chunk ids are the file's id * ROWS_PER_FILE + ordinal: a range per file.
FILE_CHUNKS_SQL = f"""SELECT j.value, c.kind, c.start_line, c.end_line, c.is_test
FROM json_each(:files) j JOIN chunks c
  ON c.id >= j.value * {store.ROWS_PER_FILE} AND c.id < (j.value + 1) * {store.ROWS_PER_FILE}"""
# Where a file's test code is, and whether a definition is in it: store/test_code.py (the
# writer reads the same to tell whether a rewrite changed what ranking reads).


# Every definition the graph can reach.
CANDIDATES_SQL = f"""SELECT s.id, s.file_id, s.name, s.kind, s.doc IS NOT NULL, s.parent_id IS NULL,
    s.start_line FROM symbols s WHERE s.kind NOT IN ({", ".join(f"'{k}'" for k in NOT_RANKED_KINDS)})"""
FILE_CANDIDATES_SQL = CANDIDATES_SQL + " AND s.file_id IN ({ids})"
# Declarations whose own file defines the same name and qualified name (any language: the
# ranking leaves out C and C++ ones), among the files of `{files}`. The declarations are few
# (22,670 of LLVM's 104,087 headers' symbols), probed by each definition through an automatic
# index: 0.05 s on LLVM's headers, where a lookup by name per declaration took 0.6 s (`get`,
# `begin` and `size` have thousands of rows each).
FORWARD_SQL = """WITH declared AS MATERIALIZED (
    SELECT id, file_id, name, qualified_name FROM symbols WHERE is_definition = 0 {files})
SELECT DISTINCT declared.id FROM symbols t CROSS JOIN declared
WHERE t.is_definition AND declared.file_id = t.file_id AND declared.name = t.name
  AND declared.qualified_name = t.qualified_name {defined_files}"""
ALL_FORWARD_SQL = FORWARD_SQL.format(files="", defined_files="")
FILE_FORWARD_SQL = FORWARD_SQL.format(
    files="AND file_id IN (SELECT value FROM json_each(:files))",
    defined_files="AND t.file_id IN (SELECT value FROM json_each(:files))",
)
# The declarations definitions are linked to: a link changes without its file, so each run
# reads them (schema v11's index holds every linked definition).
DECLARED_SQL = "SELECT DISTINCT declaration_id FROM symbols WHERE declaration_id IS NOT NULL"
# A file's symbols as one key: any rewrite of its rows gives them new ids.
FILE_SYMBOLS_SQL = "SELECT file_id, min(id), count(*) FROM symbols GROUP BY file_id"
DEFS_CACHE = (
    "defs_symbol",
    "defs_file",
    "defs_name",
    "defs_prior",
    "defs_macro",
    "defs_forward",
    "defs_test",
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


_NAME, _NAME_LINE = itemgetter(0), itemgetter(0, 1)  # of a reference row


class Written:
    """What ranking reads of the symbols and refs tables, taken as this run writes them: a run
    that wrote most files (a cold one) ranks without reading either table back. On the Linux
    kernel (4M symbols, 9M references) those reads took ~35 s of CPU; the writer hands its rows
    to this collector (store.Writer's `observer`) at a few percent of that.

    Only rows of one index run, all committed when the ranking reads them (a failed batch
    ends the run); files deleted after they were written are forgotten.
    """

    def __init__(self) -> None:
        self.names: dict[str, int] = {}  # names seen since numbered_names(), numbered in order
        # (kind, documented, top level, a declaration its file defines: FORWARD_SQL)
        self.kinds: dict[tuple[str, bool, bool, bool], int] = {}
        # file id -> (first symbol id, symbols written): the key _file_definitions checks
        self.keys: dict[int, tuple[int, int]] = {}
        # int64 symbol ids, int32 name numbers and counts, int16 kind codes (a kind's four
        # flags: past int8's 127 codes with the ~20 kinds)
        self.defs: dict[int, tuple[array, array, array]] = {}  # symbol ids, names, kinds
        self.uses: dict[int, tuple[array, array]] = {}  # names, counts
        # file id -> its test code (TEST_CODE): True, all of it; else an int8 flag per ranked
        # row. Only the files that have some (most have none).
        self.tests: dict[int, bool | array] = {}
        # The last file's symbol rows, until its chunks come (chunks_written, right after)
        self._rows: tuple[int, Sequence[tuple]] | None = None
        self._numbered: list[str] = []  # the names in number order, once the writes are done
        self._sorted: np.ndarray | None = None  # the numbers in their names' order
        self._positions: np.ndarray | None = None  # each number's place in that order
        self._objects: np.ndarray | None = None  # the names in number order, as numpy holds them

    def symbols_written(self, file_id: int, rows: Sequence[tuple]) -> None:
        """A file's symbol rows as store.Writer inserts them (INSERT_SYMBOL_SQL's columns)."""
        names, kinds, base = self.names, self.kinds, len(self._numbered)
        ids, numbers, codes = array("q"), array("i"), array("h")
        defined = _defined_here(rows)
        for row in rows:
            kind = row[4]
            if kind in NOT_RANKED_KINDS:
                continue
            ids.append(row[0])
            numbers.append(names.setdefault(row[2], base + len(names)))
            forward = not row[14] and (row[2], row[3]) in defined
            key = (kind, row[13] is not None, row[12] is None, forward)
            codes.append(kinds.setdefault(key, len(kinds)))
        if rows:
            self.keys[file_id] = (min(row[0] for row in rows), len(rows))
        else:
            self.keys.pop(file_id, None)
        self.defs[file_id] = (ids, numbers, codes)
        self.tests.pop(file_id, None)
        self._rows = (file_id, rows)

    def chunks_written(self, file_id: int, chunks: Sequence[tuple]) -> None:
        """A file's chunk rows (index/chunks.py ChunkRow), written right after its symbols:
        which of its ranked definitions are test code (TEST_CODE)."""
        held, self._rows = self._rows, None
        lines = test_lines((chunk[0], chunk[2], chunk[3], chunk[4]) for chunk in chunks)
        if lines is None or lines is True:
            if lines:
                self.tests[file_id] = True
            return
        assert held is not None and held[0] == file_id  # the writer's order: symbols, chunks
        self.tests[file_id] = array(
            "b",
            (in_test_lines(lines, row[5]) for row in held[1] if row[4] not in NOT_RANKED_KINDS),
        )

    def references_written(self, file_id: int, references: Iterable[tuple]) -> None:
        """A file's references (name, line, ...): how many lines use each name, as refs (one
        row per file, line and name) counts them."""
        names, base = self.names, len(self._numbered)
        # Counted by C loops rather than a Python loop per reference (store/writer.py's
        # _owner_ids has the figure); the names are numbered in the same order as that loop
        # did: their first appearance in the set.
        counts = Counter(map(_NAME, set(map(_NAME_LINE, references))))
        numbers = [names.setdefault(name, base + len(names)) for name in counts]
        self.uses[file_id] = (array("i", numbers), array("i", counts.values()))

    def file_deleted(self, file_id: int) -> None:
        self.keys.pop(file_id, None)
        self.defs.pop(file_id, None)
        self.uses.pop(file_id, None)
        self.tests.pop(file_id, None)

    def numbered_names(self) -> list[str]:
        """Every name at its number. Called by the ranking, once the run's writes are done:
        the dict is dropped for the list (on the kernel, ~4M names: its table alone held
        a few hundred MB at the run's peak)."""
        self._numbered.extend(self.names)  # in number order: each numbered after the last
        self.names.clear()
        return self._numbered

    def forget(self) -> None:
        """Let go of every row: the ranking has taken them (on the kernel, ~0.4 GB)."""
        self.keys, self.defs, self.uses, self.tests, self._rows = {}, {}, {}, {}, None
        self.names, self._numbered, self._sorted, self._positions = {}, [], None, None
        self._objects = None

    def name_positions(self) -> np.ndarray:
        """Each name's position among every name sorted, at its number: one sort shared by the
        definitions and the uses of a run that wrote every file. On the kernel (3.1M names)
        interning, sorting and translating each side's names as strings took ~6 s of CPU."""
        import numpy as np

        numbered = self.numbered_names()
        if self._positions is None or len(self._positions) != len(numbered):
            by_name = np.array(sorted(range(len(numbered)), key=numbered.__getitem__), np.int64)
            self._sorted = by_name
            self._positions = np.empty(len(by_name), dtype=np.int64)
            self._positions[by_name] = np.arange(len(by_name))
        return self._positions

    def names_at(self, positions: np.ndarray) -> list[str]:
        """The names at `positions` (name_positions()' positions, ascending: sorted names),
        taken by numpy from an array of the names (a list's __getitem__ per name: ~0.4 s for
        the kernel's 2.8M defined names)."""
        import numpy as np

        self.name_positions()
        by_name = self._sorted
        assert by_name is not None  # name_positions() sorted them
        if self._objects is None or len(self._objects) != len(by_name):
            self._objects = np.array(self.numbered_names(), dtype=object)
        taken: list[str] = self._objects[by_name[positions]].tolist()
        return taken


def _defined_here(rows: Sequence[tuple]) -> set[tuple[str, str]]:
    """(name, qualified name) of the definitions among a file's symbol rows (INSERT_SYMBOL_SQL's
    columns), when some row is a declaration (else none is needed): FORWARD_SQL's join."""
    if all(row[14] for row in rows):
        return set()
    return {(row[2], row[3]) for row in rows if row[14]}


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
    """What compute_ranks() found, for store_ranks() to write.

    A run that changed no edge of the graph (a comment, a body using the same names) keeps the
    stored file ranks, and writes only the symbol_ranks rows and rank_arrays that differ: the
    rest of the stored ranking is what a full store would write again, bit for bit.
    """

    fingerprint: str
    file_ids: np.ndarray
    graph: rank.Graph
    definitions: rank.Definitions
    scores: np.ndarray  # one per definition
    stats: _StatsRows  # name_stats rows
    stats_digest: str
    stats_changed: bool
    # The rank_arrays rows: digested and packed on threads, perhaps still (a large index's
    # store_ranks writes its other rows meanwhile).
    packed: _Packer
    flow_digests: dict[str, str]  # meta: the flow's and the scores'
    incremental: bool  # rank_arrays rows not in `arrays` stay as stored
    reused_rank: bool  # the graph's flow is the stored one: PageRank was not run again
    # Positions of `definitions` whose symbol_ranks row must be written (None: every row);
    # with the symbol ids stored there before, whose rows go.
    changed_rows: np.ndarray | None
    gone_symbols: np.ndarray | None

    @property
    def arrays(self) -> list[tuple[str, str, bytes]]:
        """The rank_arrays rows that changed, packed (waits for the packing threads)."""
        return self.packed.result()[1]

    @property
    def digests(self) -> dict[str, Any]:
        """meta's rank_digests: the flow's, the scores' and each rank_arrays row's."""
        return {**self.flow_digests, "arrays": self.packed.result()[0]}


@dataclass(frozen=True)
class SameGraph:
    """What compute_ranks() found when the stored ranking holds for the index as it is: only
    its fingerprint is new (the writer rewrote files without changing the graph, keeping their
    symbol ids)."""

    fingerprint: str


def compute_ranks(
    db: Store, force: bool = False, written: Written | None = None
) -> Ranking | SameGraph | None:
    """The rankings of the index as it is, or None when they are stored already. Only reads, so
    it can run on a reader connection while a writer merges the text indexes; `written` holds
    the rows this run wrote, which need not be read back (a ranking takes them: `written` is
    empty after it)."""
    fingerprint = ranks_fingerprint(db)
    stored_fingerprint = store.get_meta(db, "rank_fingerprint")
    if not force and stored_fingerprint == fingerprint:
        return None
    if (
        not force
        and stored_fingerprint
        and store.get_meta(db, store_ranks_tables.GRAPH_META) == store_ranks_tables.GRAPH_RANKED
        and store.get_meta(db, "rank_format") == RANK_FORMAT
    ):
        # No file added, removed or rewritten with other definitions or uses since the stored
        # ranking (the writer marks each such run): it is this index's, bit for bit. Kept
        # without importing numpy or reading a cache: ~half of a one-file run on Django.
        return SameGraph(fingerprint)
    import numpy as np

    from repomap.index import pagerank as rank  # numpy: only when ranking

    files: list[tuple[int, str, str]] = db.conn.execute(
        "SELECT id, path, hash FROM files ORDER BY id"
    ).fetchall()
    file_ids = np.array([file_id for file_id, _, _ in files], dtype=np.int64)
    test_file = np.array([paths.is_demoted_path(path) for _, path, _ in files], dtype=bool)
    stored = _stored_digests(db) if not force else {}
    # Only rows still there count as stored (an older repomap may have dropped one).
    present = {name for (name,) in db.conn.execute("SELECT name FROM rank_arrays")}
    old_digests = {
        name: value for name, value in (stored.get("arrays") or {}).items() if name in present
    }
    incremental = bool(old_digests)
    with _Packer(old_digests) as packer:
        defs, def_positions = _file_definitions(db, files, written)
        # C and C++ declarations their own file defines are not ranked; those a definition in
        # another file is linked to weigh DECLARATION_SHARE and are demoted (DECLARATIONS).
        c_family = _c_files(db, file_ids)
        forward = np.flatnonzero(defs["defs_forward"])  # few: no column of every definition's
        ranked = np.ones(len(defs["defs_symbol"]), dtype=bool)
        ranked[forward[c_family[np.searchsorted(file_ids, defs["defs_file"][forward])]]] = False
        declared_ids = np.array(
            [symbol_id for (symbol_id,) in db.conn.execute(DECLARED_SQL)], dtype=np.int64
        )
        declared = np.isin(defs["defs_symbol"][ranked], declared_ids)
        # defs_names is sorted and _distinct_numbers keeps that order: the names are in
        # canonical order, and so are the definitions (by file, name, then symbol id, as
        # _file_definitions sorts).
        if ranked.all():  # no declaration left out (Rust, Python): every name of defs_names
            alive = np.arange(len(defs["defs_names"]))
            name_indices = defs["defs_name"]
        else:
            alive, name_indices = _distinct_numbers(
                defs["defs_name"][ranked], len(defs["defs_names"])
            )
        names = _NameSubset(defs["defs_names"], alive)  # no list of its own
        file_indices = np.searchsorted(file_ids, defs["defs_file"][ranked])
        # Tests, examples, vendored and generated code, by path or by their chunks (TEST_CODE)
        test_code = test_file[file_indices] | defs["defs_test"][ranked].astype(bool)
        name_indices = name_indices.reshape(-1)
        cache, use_positions = _file_uses(db, files, written)
        if written is not None:
            written.forget()  # all of it is in `defs` and `cache` now
        to_defined = _defined_at(names, cache["uses_names"], def_positions, alive, use_positions)
        name_of_use = to_defined[cache["uses_name"]] if len(to_defined) else np.zeros(0, np.int64)
        kept = name_of_use >= 0
        # int32: file and name indexes and counts fit (half of the kernel's 0.12 GB matrix)
        uses = np.zeros((int(np.count_nonzero(kept)), 3), dtype=np.int32)
        if len(uses):
            uses[:, 0] = np.searchsorted(file_ids, cache["uses_file"][kept])
            uses[:, 1] = name_of_use[kept]
            uses[:, 2] = cache["uses_count"][kept]
        del to_defined, name_of_use, kept
        # How far back the map puts each definition (map_demoted, the first key of map_order):
        # 0 the code's definitions; 1 its C/C++ #defines and linked declarations; 2 tests,
        # examples, vendored code and stubs, whose file ranks (googletest's gtest.h: the hub of
        # every test file) would otherwise put them before the project's own macros and API.
        defines = defs["defs_macro"][ranked].astype(bool) & c_family[file_indices]
        demoted = np.where(test_code, np.int8(2), (defines | declared).astype(np.int8))
        del defines
        # Canonical order, whatever the cache's history: the same index gives bit-identical
        # ranks. _file_uses sorts by file and name, and the translation keeps that order: the
        # sort is a check, in most runs.
        if not _ordered(uses[:, 0], uses[:, 1]):
            uses = uses[np.lexsort((uses[:, 1], uses[:, 0]))]
        shapes = _used_shapes(defs, alive, names, uses)
        # The caches are final: digested and packed (on threads, for a large index) while the
        # graph is ranked, and let go (on the kernel, 0.3 GB of arrays and 3M names' strings).
        defs_names = store_ranks_tables.JoinedNames.of(defs["defs_names"])
        packer.add({**cache, **defs, "defs_names": defs_names})
        defined_all = len(names) == len(defs["defs_names"])
        # The definitions' own columns are made once the names' strings are gone: on the
        # kernel, three copies of 31 MB less at the ranking's peak of memory.
        symbol_column, prior_column = defs["defs_symbol"], defs["defs_prior"]
        del defs, cache, alive
        # The names' counts (the files using each: one row of `uses` per file and name), made
        # before the graph so that the names' strings go before its arrays come (on the
        # kernel, the resident memory entering unranked() fell from 1.26 to 0.79 GB).
        ref_files = np.bincount(uses[:, 1], minlength=len(names))
        def_files = _defining_files(file_indices, name_indices, len(file_ids), len(names))
        # Most runs leave every name's counts as they were: rewriting 30k rows cost ~40 ms.
        stats_digest = _digest(defs_names if defined_all else names, ref_files, def_files)
        stats_changed = force or store.get_meta(db, "name_stats_digest") != stats_digest
        used = np.flatnonzero(ref_files) if stats_changed else np.zeros(0, np.int64)
        stats = _StatsRows(  # the names some file uses, as bytes: every string is let go
            store_ranks_tables.JoinedNames.of(names.take(used)),
            ref_files[used],
            def_files[used],
        )
        del names, defs_names, ref_files, def_files, used
        definitions = rank.Definitions(
            symbol_column[ranked],
            file_indices,
            name_indices,
            prior_column[ranked],
            np.where(test_code, rank.TEST_SHARE, 1.0) * np.where(declared, DECLARATION_SHARE, 1.0),
        )
        del symbol_column, prior_column, ranked, file_indices, name_indices, test_code
        graph = rank.unranked(file_ids, shapes, definitions, uses)
        del uses
        flow = rank.flow_digest(graph)
        previous = (
            store_ranks_tables.load_arrays(db, ("rank", "def_symbol"))
            if stored.get("flow") == flow
            else {}
        )
        reused = "rank" in previous and len(previous["rank"]) == graph.file_count
        graph = graph.ranked(previous["rank"] if reused else rank.pagerank(graph))
        scores = rank.map_order(graph, graph.rank, rank.definition_scores(graph, graph.rank))
        # The scores depend on the flow, the files' ids and the definitions' priors only: with
        # the same digest, definition i scores what definition i scored before, and only the
        # rows whose symbol id moved (a file's rows rewritten) are written again.
        scores_digest = _digest(flow.encode(), file_ids, graph.def_prior)
        changed_rows = gone_symbols = None
        if reused and stored.get("scores") == scores_digest and "def_symbol" in previous:
            before = previous["def_symbol"].astype(np.int64)
            if len(before) == len(graph.def_symbol):
                changed_rows = np.flatnonzero(before != graph.def_symbol)
                moved = before[changed_rows]
                gone_symbols = moved[~np.isin(moved, graph.def_symbol)]
        packer.add(
            {
                **graph.to_arrays(),
                **_map_order(definitions, file_ids, scores, demoted),
                "map_demoted": demoted.astype(np.int8),
            }
        )
    return Ranking(
        fingerprint,
        file_ids,
        graph,
        definitions,
        scores,
        stats,
        stats_digest,
        stats_changed,
        packer,
        {"flow": flow, "scores": scores_digest},
        incremental,
        reused,
        changed_rows,
        gone_symbols,
    )


def _defined_at(
    names: _NameSubset,
    used_names: list[str],
    def_positions: np.ndarray | None,
    alive: np.ndarray,
    use_positions: np.ndarray | None,
) -> np.ndarray:
    """The index in `names` (sorted) of each of `used_names` (sorted), -1 for those no
    definition has. With both sides' positions in one numbering of the names (a cold run's
    hand-over), by bisection of those numbers; else through a dict of the names."""
    import numpy as np

    if def_positions is not None and use_positions is not None:
        defined = def_positions[alive]  # ascending, as the names are
        at = np.searchsorted(defined, use_positions)
        if not len(defined):
            return np.full(len(use_positions), -1, dtype=np.int64)
        found = defined[np.minimum(at, len(defined) - 1)] == use_positions
        return np.where(found, at, -1).astype(np.int64)
    index = dict(zip(names, range(len(names)), strict=True))
    return np.fromiter(
        map(index.get, used_names, repeat(-1)), dtype=np.int64, count=len(used_names)
    )


def _used_shapes(defs: dict, alive: np.ndarray, names: _NameSubset, uses: np.ndarray) -> np.ndarray:
    """rank.shape() of each name in `names` that a file uses, 0 for the others (their shape
    weighs no edge). Computed once per name, kept in defs_shape (0: not computed yet): most of
    the kernel's 2.8M defined names are macros no file uses, and a shape costs ~1 µs each."""
    import numpy as np

    from repomap.index import pagerank as rank

    used = np.zeros(len(names), dtype=bool)
    used[uses[:, 1]] = True
    shapes = defs["defs_shape"][alive]
    missing = np.flatnonzero(used & (shapes == 0))
    if len(missing):
        computed = np.fromiter(map(rank.shape, names.take(missing)), np.float64, len(missing))
        shapes[missing] = computed
        defs["defs_shape"][alive[missing]] = computed  # the cache keeps them
    return np.where(used, shapes, 0.0)


class _NameSubset:
    """The names of a sorted list at ascending positions `at`, in that order: the names the
    graph numbers, without a list of their own (on the kernel, 2.9M of the 3.1M names: a list
    of 23 MB, held at the ranking's peak of memory)."""

    def __init__(self, names: list[str], at: np.ndarray) -> None:
        self.names, self.at = names, at

    def __len__(self) -> int:
        return len(self.at)

    def __getitem__(self, where: slice) -> list[str]:
        """The names of a slice of the positions."""
        if len(self.at) == len(self.names):  # every name: the list's own slice
            return self.names[where]
        return list(map(self.names.__getitem__, self.at[where].tolist()))

    def __iter__(self) -> Iterator[str]:
        return iter(self[:])

    def take(self, indices: np.ndarray) -> list[str]:
        """The names at `indices` of this subset."""
        return list(map(self.names.__getitem__, self.at[indices].tolist()))


def _distinct(values: np.ndarray) -> np.ndarray:
    """np.unique(values), without the ~25 ms import of numpy.ma that np.unique pays once when
    it returns the values alone (it asks whether they are masked)."""
    import numpy as np

    ordered = np.sort(values)
    return (
        ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered
    )


DIGESTS_META = "rank_digests"  # JSON: {"flow": ..., "scores": ..., "arrays": {name: digest}}


def _stored_digests(db: Store) -> dict:
    """The digests the stored ranking was written with ({} when they cannot be trusted)."""
    import json

    if store.get_meta(db, "rank_format") != RANK_FORMAT:
        return {}
    raw = store.get_meta(db, DIGESTS_META)
    try:
        digests = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return digests if isinstance(digests, dict) else {}


PARALLEL_BYTES = 1 << 24  # arrays digested and packed on a thread past this many bytes
# One thread: the ranking's own thread keeps the other core. With two (and the ranking's
# thread, three on a two-core machine) the ranking ran at ~2/3 of a core while they packed.
PACKING_THREADS = 1


class _Packer:
    """Digests each rank_arrays row as it is added, and packs those whose digest is not the
    stored one. blake2b and zlib let go of the GIL: past PARALLEL_BYTES a thread does it
    while the ranking goes on, and while store_ranks writes its other rows (on the kernel,
    ~3 s of CPU over ~0.5 GB of arrays); a one-file run's few MB are done on this thread.
    Each array is let go once packed."""

    def __init__(self, old_digests: dict[str, str]) -> None:
        self.old_digests = old_digests
        self.done: dict[str, Any] = {}  # name -> (digest, row or None), or its future
        self.pool: ThreadPoolExecutor | None = None
        self._result: tuple[dict[str, str], list[tuple[str, str, bytes]]] | None = None

    def __enter__(self) -> _Packer:
        return self

    def __exit__(self, failed: type[BaseException] | None, *_: object) -> None:
        """Every array added: the threads end once they are packed (or at once on an error)."""
        if self.pool is not None:
            self.pool.shutdown(wait=failed is not None, cancel_futures=failed is not None)

    def add(self, arrays: dict[str, Any]) -> None:
        """Arrays (lists of names too) whose values are final."""
        items = [
            (name, store_ranks_tables.JoinedNames.of(value) if isinstance(value, list) else value)
            for name, value in arrays.items()
        ]
        if self.pool is None and sum(_size(value) for _, value in items) >= PARALLEL_BYTES:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(PACKING_THREADS, thread_name_prefix="repomap-pack")
        items.sort(key=lambda item: _size(item[1]), reverse=True)  # largest first
        for name, value in items:
            if self.pool is None:
                self.done[name] = self._one(name, value)
            else:
                self.done[name] = self.pool.submit(self._one, name, value)

    def _one(self, name: str, value: Any) -> tuple[str, tuple[str, bytes] | None]:
        digest = _digest(value)
        changed = self.old_digests.get(name) != digest
        return digest, store_ranks_tables.pack(value) if changed else None

    def result(self) -> tuple[dict[str, str], list[tuple[str, str, bytes]]]:
        """({name: digest} of every array added, the rank_arrays rows of those that changed)."""
        if self._result is None:
            done = {
                name: value if isinstance(value, tuple) else value.result()
                for name, value in self.done.items()
            }
            self.done = {}
            self._result = (
                {name: digest for name, (digest, _) in done.items()},
                [(name, *row) for name, (_, row) in done.items() if row is not None],
            )
        return self._result


def _size(value: Any) -> int:
    if isinstance(value, store_ranks_tables.JoinedNames):
        return len(value.data)
    return int(getattr(value, "nbytes", 0))


def _ordered(first: np.ndarray, second: np.ndarray) -> bool:
    """Whether the pairs (first[i], second[i]) are in ascending order."""
    import numpy as np

    if len(first) < 2:
        return True
    step = np.diff(first)
    return bool(np.all((step > 0) | ((step == 0) & (np.diff(second) >= 0))))


@dataclass(frozen=True)
class _StatsRows:
    """name_stats rows, made when they are written (870k tuples on the kernel: ~60 MB); their
    names as bytes until then (as strings they kept most of the hand-over's 3M strings' memory
    from going back)."""

    names: store_ranks_tables.JoinedNames
    ref_files: np.ndarray
    def_files: np.ndarray

    def columns(self) -> store_ranks_tables.ColumnParts:
        """The rows as columns, a slice at a time."""
        names = self.names.strings()
        return store_ranks_tables.ColumnParts(
            (
                names[start : start + STORE_ROWS],
                self.ref_files[start : start + STORE_ROWS].tolist(),
                self.def_files[start : start + STORE_ROWS].tolist(),
            )
            for start in range(0, len(names), STORE_ROWS)
        )


def _digest(*values: Any) -> str:
    """blake2b of arrays' bytes (with their dtypes and lengths) or of lists of names."""
    import numpy as np

    digest = hashlib.blake2b(digest_size=16)
    for value in values:
        if isinstance(value, bytes):
            digest.update(value)
        elif isinstance(value, (list, _NameSubset)):
            # "\n".join(value).encode(), a slice at a time: on the kernel's 2.9M names the
            # whole string and its bytes held ~140 MB at once, at the ranking's peak of memory
            digest.update(f"names:{len(value)}".encode())
            for start in range(0, len(value), store_ranks_tables.JOINED_AT_ONCE):
                part = value[start : start + store_ranks_tables.JOINED_AT_ONCE]
                digest.update(("\n" if start else "").encode() + "\n".join(part).encode())
        elif isinstance(value, store_ranks_tables.JoinedNames):  # the same digest as its list
            digest.update(f"names:{value.total}".encode())
            digest.update(value.data)
        else:
            array = np.ascontiguousarray(value)
            digest.update(f"{array.dtype.str}:{len(array)}".encode())
            digest.update(array.data)
    return digest.hexdigest()


def _map_order(
    definitions: rank.Definitions, file_ids: np.ndarray, scores: np.ndarray, demoted: np.ndarray
) -> dict[str, np.ndarray]:
    """The map's pages: `map_order`, symbol ids by rank, best first, the demoted ones after all
    others (level 1, then level 2), ties by file id, then symbol id; `map_order_file`, the file
    id of each (for path filters); `map_order_levels`, how many of each level."""
    import numpy as np

    ids = np.asarray(definitions.symbol_ids, dtype=np.int64)
    files = file_ids[definitions.file_indices]
    order = np.lexsort((ids, files, -scores, demoted))
    return {
        "map_order": ids[order],
        "map_order_file": files[order],
        # how many of each demotion level, in that order (the map lists each file among the
        # files of its least demoted row's level)
        "map_order_levels": np.bincount(demoted, minlength=3).astype(np.int64),
    }


# Where `macro` means a preprocessor #define: a name for a constant or a bit of syntax, which
# the headers of a big C or C++ tree hold by the thousand. Rust's macro_rules! (vec!, assert_eq!)
# are real definitions.
DEFINE_LANGUAGES = ("c", "cpp")


def _c_files(db: Store, file_ids: np.ndarray) -> np.ndarray:
    """One bool per file of `file_ids`: C or C++, whose macros are #defines and whose
    declarations are prototypes (DECLARATIONS)."""
    import numpy as np

    placeholders = ", ".join("?" * len(DEFINE_LANGUAGES))
    defines = {
        file_id
        for (file_id,) in db.conn.execute(
            f"SELECT id FROM files WHERE language IN ({placeholders})", DEFINE_LANGUAGES
        )
    }
    return np.array([file_id in defines for file_id in file_ids.tolist()], dtype=bool)


def store_ranks(db: Store, ranking: Ranking | SameGraph) -> None:
    """Replace the stored rankings with `ranking`, in one transaction: what a run changed, or
    everything."""
    if isinstance(ranking, SameGraph):
        store_ranks_tables.set_meta(db, {"rank_fingerprint": ranking.fingerprint})
        return
    import json

    import numpy as np

    graph, definitions, file_ids = ranking.graph, ranking.definitions, ranking.file_ids
    rows = ranking.changed_rows
    if rows is None:  # every row, by id: appended to the table's b-tree, not spread over it
        rows = np.argsort(definitions.symbol_ids)  # distinct: any sort gives one order
    store_ranks_tables.replace(
        db,
        file_ranks=None
        if ranking.reused_rank and not _ids_changed(ranking)
        else zip(file_ids.tolist(), graph.rank.tolist(), strict=True),
        symbol_ranks=_symbol_rank_rows(definitions.symbol_ids, ranking.scores, rows),
        symbols_gone=None if ranking.gone_symbols is None else ranking.gone_symbols.tolist(),
        name_stats=ranking.stats.columns() if ranking.stats_changed else None,
        arrays=lambda: store_ranks_tables.StoredArrays(
            ranking.arrays,
            ranking.incremental,
            list(ranking.digests["arrays"]),
            {
                "rank_fingerprint": ranking.fingerprint,
                "rank_format": RANK_FORMAT,
                "name_stats_digest": ranking.stats_digest,
                DIGESTS_META: json.dumps(ranking.digests, sort_keys=True),
                store_ranks_tables.GRAPH_META: store_ranks_tables.GRAPH_RANKED,
            },
        ),
    )


STORE_ROWS = 100_000  # symbol_ranks rows made Python objects at a time


def _symbol_rank_rows(
    symbol_ids: np.ndarray, scores: np.ndarray, rows: np.ndarray
) -> store_ranks_tables.ColumnParts:
    """(symbol id, score) of each of `rows`, as columns a slice at a time: the kernel's 3.9M
    rows as lists of Python numbers at once held ~0.3 GB."""
    parts = (rows[start : start + STORE_ROWS] for start in range(0, len(rows), STORE_ROWS))
    return store_ranks_tables.ColumnParts(
        (symbol_ids[part].tolist(), scores[part].tolist()) for part in parts
    )


def _ids_changed(ranking: Ranking) -> bool:
    """Whether the files' ids differ from those file_ranks holds (its rows must be rewritten)."""
    return any(name == "file_ids" for name, _, _ in ranking.arrays) or not ranking.incremental


def _name_column(
    written: Written, numbers: np.ndarray, interned: _Interned, handed_over: bool
) -> np.ndarray:
    """The hand-over's name numbers as the cache numbers them: by the hand-over's own sorted
    numbering when every name comes from it, else through the interned names."""
    import numpy as np

    if handed_over:
        return written.name_positions()[numbers]
    used_names, inverse = np.unique(numbers, return_inverse=True)
    every_name = written.numbered_names()
    as_interned = np.array(
        interned.numbers([every_name[i] for i in used_names.tolist()]), dtype=np.int64
    )
    return as_interned[inverse.reshape(-1)]


def _file_definitions(
    db: Store, files: list[tuple[int, str, str]], written: Written | None = None
) -> tuple[dict, np.ndarray | None]:
    """Every definition the graph can reach (and declarations) as arrays, read from symbols only
    for the files whose rows were rewritten since the cached copy in rank_arrays was made
    (reading all of them, a scan of the whole table, took ~120 ms of a one-file run on LLVM),
    and taken from `written` for the files this run wrote; with, when every name came from
    `written`, the names' positions in Written.name_positions() (else None)."""
    import numpy as np

    from repomap.index import pagerank as rank

    cache = (
        store_ranks_tables.load_arrays(db, DEFS_CACHE)
        if store.get_meta(db, "rank_format") == RANK_FORMAT
        else {}
    )
    hashes = {file_id: file_hash_ for file_id, _, file_hash_ in files}
    if written is not None and set(hashes) <= written.defs.keys():
        firsts: Iterable = written.keys.items()  # this run wrote every file: no scan of symbols
    else:
        firsts = (
            (file_id, (first, count)) for file_id, first, count in db.conn.execute(FILE_SYMBOLS_SQL)
        )
    keys = {
        file_id: _key(file_id, hashes.get(file_id), first, count)
        for file_id, (first, count) in firsts
    }
    valid: set[int] = set()
    if len(cache) == len(DEFS_CACHE):
        cached_keys = set(cache["defs_keys"])
        valid = {file_id for file_id, key in keys.items() if key in cached_keys}
    in_memory = {
        file_id
        for file_id in set(keys) - valid
        if written is not None
        and file_id in written.defs
        and keys[file_id] == _key(file_id, hashes.get(file_id), *written.keys.get(file_id, (0, 0)))
    }
    valid, in_memory, fresh = _fresh_rows(
        db, set(keys), valid, in_memory, CANDIDATES_SQL, FILE_CANDIDATES_SQL
    )
    forward = _forward(db, set(keys) - valid - in_memory, not valid and not in_memory)
    tests = _test_lines(db, set(keys) - valid - in_memory)
    interned = _Interned(cache["defs_names"] if valid else [])
    priors: dict[tuple, float] = {}  # a handful of (kind, documented, top level): each once
    columns = _Columns(
        defs_symbol=np.int64,
        defs_file=np.int64,
        defs_name=np.int64,
        defs_prior=np.float64,
        defs_macro=np.int8,
        defs_forward=np.int8,
        defs_test=np.int8,
    )
    for rows in fresh:
        symbol_ids, file_ids, row_names, kinds, documented, top_level, starts = zip(
            *rows, strict=True
        )
        kinds_of_rows = list(zip(kinds, documented, top_level, strict=True))
        for kind, documented, top_level in set(kinds_of_rows).difference(priors):
            priors[kind, documented, top_level] = rank.kind_prior(
                kind, bool(documented), bool(top_level)
            )
        columns.add(
            defs_symbol=symbol_ids,
            defs_file=file_ids,
            defs_name=interned.numbers(row_names),
            defs_prior=[priors[key] for key in kinds_of_rows],
            defs_macro=[kind == "macro" for kind in kinds],
            defs_forward=[i in forward for i in symbol_ids] if forward else [0] * len(rows),
            defs_test=[
                in_test_lines(tests.get(file_id), line)
                for file_id, line in zip(file_ids, starts, strict=True)
            ]
            if tests
            else [0] * len(rows),
        )
    # Every name from this run's writes (a cold run): numbered by the hand-over's sorted
    # numbering (Written.name_positions), not interned here as strings.
    handed_over = written is not None and not interned.cached and not interned.fresh
    if in_memory and written is not None:
        ordered = sorted(in_memory)
        parts = [written.defs.pop(file_id) for file_id in ordered]  # compute_ranks takes them
        numbers = _joined([names for _, names, _ in parts], np.int32)
        codes = _joined([kinds for _, _, kinds in parts], np.int16)
        name_column = _name_column(written, numbers, interned, handed_over)
        kind_keys = list(written.kinds)  # (kind, documented, top level, forward) by code
        columns.add_arrays(
            defs_symbol=_joined([ids for ids, _, _ in parts], np.int64),
            defs_file=np.repeat(
                np.array(ordered, dtype=np.int64), [len(ids) for ids, _, _ in parts]
            ),
            defs_name=name_column,
            defs_prior=np.array(
                [rank.kind_prior(kind, doc, top) for kind, doc, top, _ in kind_keys] or [0.0]
            )[codes],
            defs_macro=np.array([kind == "macro" for kind, *_ in kind_keys] or [False])[codes],
            defs_forward=np.array([key[3] for key in kind_keys] or [False])[codes],
            defs_test=_written_tests(written.tests, ordered, [len(ids) for ids, _, _ in parts]),
        )
        del parts, numbers, codes, name_column  # the columns hold them now
    defs = _cached_and_fresh(cache, "defs_file", valid, columns.arrays())
    positions = None
    if handed_over and written is not None:
        positions, defs["defs_name"] = _present(defs["defs_name"], written)
        sorted_names = written.names_at(positions)
        shapes = np.zeros(len(positions))  # 0: not computed yet (compute_ranks does)
    else:
        # Forget names no definition has any more, and keep the rest sorted.
        sorted_names, defs["defs_name"], old_numbers = _renumbered(interned, defs["defs_name"])
        shapes = np.concatenate(
            [
                cache["defs_shape"] if valid else np.zeros(0),
                np.zeros(len(interned.added())),  # 0: not computed yet (compute_ranks does)
            ]
        )
        shapes = shapes[old_numbers] if len(old_numbers) else np.zeros(0)
    # By file, name, then id, whatever the cache's history: a file whose rows were rewritten
    # with new ids but the same definitions leaves every other array as it was.
    order = _sort_order(defs["defs_file"], defs["defs_name"], defs["defs_symbol"])
    for key, value in defs.items():  # one at a time: each old column goes as its copy comes
        defs[key] = value[order]
    return {
        **defs,
        "defs_names": sorted_names,
        "defs_shape": shapes,
        "defs_keys": list(keys.values()),
    }, positions


def _test_lines(db: Store, files: set[int]) -> dict[int, TestLines]:
    """The test code (TEST_CODE) of those of `files` that have some, by their chunk rows."""
    import json

    if not files:
        return {}
    by_file: dict[int, list[tuple[str, int, int, bool]]] = {}
    for file_id, *chunk in db.conn.execute(FILE_CHUNKS_SQL, {"files": json.dumps(sorted(files))}):
        kind, start, end, is_test = chunk
        by_file.setdefault(file_id, []).append((kind, start, end, bool(is_test)))
    found = {file_id: test_lines(chunks) for file_id, chunks in by_file.items()}
    return {file_id: lines for file_id, lines in found.items() if lines is not None}


def _written_tests(tests: dict[int, bool | array], files: list[int], counts: list[int]) -> Any:
    """One int8 flag per definition of `files` (ascending, `counts` definitions each, in that
    order): whether Written.tests says it is test code."""
    import numpy as np

    flags = np.zeros(sum(counts), dtype=np.int8)
    if not tests or not files:
        return flags
    ordered = np.array(files, dtype=np.int64)
    ends = np.cumsum(counts)
    for file_id, found in tests.items():
        at = int(np.searchsorted(ordered, file_id))
        if at == len(ordered) or ordered[at] != file_id:
            continue  # a file whose rows the ranking reads from the index
        start, end = int(ends[at]) - counts[at], int(ends[at])
        flags[start:end] = np.frombuffer(found, dtype=np.int8) if isinstance(found, array) else 1
    return flags


def _forward(db: Store, files: set[int], every_file: bool) -> set[int]:
    """The declarations of `files` whose own file defines them (FORWARD_SQL); `every_file`: all
    of the index's (one scan, no list of files)."""
    import json

    if every_file:
        return {symbol_id for (symbol_id,) in db.conn.execute(ALL_FORWARD_SQL)}
    if not files:
        return set()
    rows = db.conn.execute(FILE_FORWARD_SQL, {"files": json.dumps(sorted(files))})
    return {symbol_id for (symbol_id,) in rows}


def _present(numbers: np.ndarray, written: Written) -> tuple[np.ndarray, np.ndarray]:
    """(the positions in Written.name_positions() that `numbers` holds, ascending; `numbers` as
    indexes into them)."""
    return _distinct_numbers(numbers, len(written.name_positions()))


def _distinct_numbers(numbers: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(numbers, return_inverse=True) of numbers in [0, bound), without its sort of
    every row (0.3 s for the kernel's 4M definitions)."""
    import numpy as np

    present = np.zeros(bound, dtype=bool)
    present[numbers] = True
    below = np.cumsum(present, dtype=np.int64)  # made once and shifted in place: one
    below -= 1  # temporary of 8 bytes a name less (3.1M names on the kernel)
    return np.flatnonzero(present), below[numbers]


def _defining_files(file_of: np.ndarray, name_of: np.ndarray, files: int, names: int) -> np.ndarray:
    """How many files define each name, from the definitions' file and name indexes. The
    definitions come by file, then name: a pair is new where it differs from the one before
    (else the pairs are sorted first)."""
    import numpy as np

    if not _ordered(file_of, name_of):
        pairs = _distinct(name_of * max(files, 1) + file_of)
        return np.bincount(pairs // max(files, 1), minlength=names)
    new = np.ones(len(file_of), dtype=bool)
    new[1:] = (file_of[1:] != file_of[:-1]) | (name_of[1:] != name_of[:-1])
    return np.bincount(name_of[new], minlength=names)


def _sort_order(files: np.ndarray, names: np.ndarray, ids: np.ndarray | None = None) -> np.ndarray:
    """np.lexsort((ids, names, files)) (ids optional, distinct): one sort of (file, name, id)
    or (file, name, position) as one number when it fits in 64 bits, else a stable sort of
    (file, name) as one number, the same order when the ids of equal pairs come in ascending
    order (as a run writes them), else lexsort. On the kernel's 4M definitions lexsort's three
    passes took 0.9 s."""
    import numpy as np

    keys = (ids, names, files) if ids is not None else (names, files)
    if not len(files) or int(files.min()) < 0 or int(names.min()) < 0:
        return np.lexsort(keys)
    span = int(names.max()) + 1
    if int(files.max()) >= (1 << 62) // span:  # the key would not fit in 64 bits
        return np.lexsort(keys)
    key = files.astype(np.int64) * span + names
    # Made unique by the ids (distinct: symbol ids), else by each row's position: one sort
    # that need not be stable (numpy's vectorized quicksort: on the kernel's 4M definitions
    # 0.1 s, where the stable sort and the check of the ids' order took 0.4 s).
    low = int(ids.min()) if ids is not None and len(ids) else 0
    ties = int(ids.max()) - low + 1 if ids is not None else len(files)
    if (int(key.max()) + 1) * ties < 1 << 63:
        key *= ties
        key += ids - low if ids is not None else np.arange(len(files))
        return np.argsort(key)
    order = np.argsort(key, kind="stable")
    if ids is None or _ordered(key[order], ids[order]):
        return order
    return np.lexsort(keys)


def _renumbered(
    interned: _Interned, numbers: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(the names `numbers` still use, sorted; `numbers` renumbered into that list; the old
    number of each name of the list). When no name was added or lost that list is the cached
    one, sorted already: sorting 50k names anew took ~15 ms of each one-file run on LLVM."""
    import numpy as np

    alive, inverse = np.unique(numbers, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not interned.fresh and len(alive) == len(interned.cached):
        return interned.cached, inverse, alive
    names = interned.names()
    alive_names = [names[i] for i in alive.tolist()]
    by_name = sorted(range(len(alive_names)), key=alive_names.__getitem__)
    position = np.empty(len(by_name), dtype=np.int64)
    position[by_name] = np.arange(len(by_name))
    return [alive_names[i] for i in by_name], position[inverse], alive[by_name]


def _key(file_id: int, file_hash: str | None, first: int, count: int) -> str:
    """A file's symbols as one key: any rewrite of its rows gives them new ids."""
    return f"{file_id}:{file_hash}:{first}:{count}"


def _file_uses(
    db: Store, files: list[tuple[int, str, str]], written: Written | None = None
) -> tuple[dict, np.ndarray | None]:
    """Every (file, identifier, uses) of the index as arrays, read from refs only for the files
    whose hash changed since the cached copy in rank_arrays was made, and taken from `written`
    for the files this run wrote; with the names' positions in Written.name_positions() when
    every name came from `written` (else None)."""
    import numpy as np

    cache = (
        store_ranks_tables.load_arrays(db, USES_CACHE)
        if store.get_meta(db, "rank_format") == RANK_FORMAT
        else {}
    )
    current = {file_id: file_hash_.encode() for file_id, _, file_hash_ in files}
    valid: set[int] = set()
    if len(cache) == len(USES_CACHE):
        valid = {
            int(f)
            for f, h in zip(cache["uses_file_ids"], cache["uses_hashes"], strict=True)
            if current.get(int(f)) == h
        }
    in_memory = {
        file_id
        for file_id in set(current) - valid
        if written is not None and file_id in written.uses
    }
    valid, in_memory, fresh = _fresh_rows(
        db, set(current), valid, in_memory, ALL_USES_SQL, FILE_USES_SQL
    )
    interned = _Interned(cache.get("uses_names", []) if valid else [])
    columns = _Columns(uses_file=np.int64, uses_name=np.int64, uses_count=np.int64)
    for rows in fresh:
        file_ids, row_names, counts = zip(*rows, strict=True)
        columns.add(uses_file=file_ids, uses_name=interned.numbers(row_names), uses_count=counts)
    handed_over = written is not None and not interned.cached and not interned.fresh
    if in_memory and written is not None:
        ordered = sorted(in_memory)
        parts = [written.uses.pop(file_id) for file_id in ordered]
        numbers = _joined([names for names, _ in parts], np.int32)
        name_column = _name_column(written, numbers, interned, handed_over)
        columns.add_arrays(
            uses_file=np.repeat(np.array(ordered, dtype=np.int64), [len(n) for n, _ in parts]),
            uses_name=name_column,
            uses_count=_joined([counts for _, counts in parts], np.int32),
        )
        del parts, numbers, name_column
    used = _cached_and_fresh(cache, "uses_file", valid, columns.arrays())
    positions = None
    if handed_over and written is not None:
        positions, used["uses_name"] = _present(used["uses_name"], written)
        sorted_names = written.names_at(positions)
    else:
        # Forget names no file uses any more, so the list does not grow run after run.
        sorted_names, used["uses_name"], _ = _renumbered(interned, used["uses_name"])
    order = _sort_order(used["uses_file"], used["uses_name"])  # whatever the cache's history
    for key, value in used.items():
        used[key] = value[order]
    return {
        **used,
        "uses_names": sorted_names,
        "uses_file_ids": np.array(list(current), dtype=np.int64),
        "uses_hashes": np.array(list(current.values()), dtype="S32"),
    }, positions


def _fresh_rows(
    db: Store, files: set[int], valid: set[int], in_memory: set[int], all_sql: str, file_sql: str
) -> tuple[set[int], set[int], Iterator[list[tuple]]]:
    """(files whose cached rows stay, files whose rows `in_memory` holds, rows read for the
    others, a chunk at a time): every row, and no cached or held row kept, when most files
    must be read. Chunks, because the 2.6M symbol rows of the Linux kernel's headers held as
    tuples at once took ~0.9 GB."""
    stale = sorted(files - valid - in_memory)
    if len(stale) > len(files) // 2:  # cheaper to read everything at once
        return set(), set(), _fetched(db.conn.execute(all_sql))
    return (
        valid,
        in_memory,
        (
            rows
            for chunk in chunks(stale, 900)
            for rows in _fetched(
                db.conn.execute(file_sql.format(ids=",".join("?" * len(chunk))), chunk)
            )
        ),
    )


def _fetched(cursor: sqlite3.Cursor) -> Iterator[list[tuple]]:
    while rows := cursor.fetchmany(FETCH_ROWS):
        yield rows


class _Interned:
    """Names numbered: the cached ones (a sorted list) at their positions, then the fresh ones
    in the order first seen. Looked up by bisection: a dict of the ~50k cached names cost more
    than the few hundred lookups of a run that changed one file."""

    def __init__(self, cached: list[str]) -> None:
        self.cached = cached
        self.fresh: dict[str, int] = {}

    def numbers(self, names: Iterable[str]) -> list[int]:
        cached, fresh, count = self.cached, self.fresh, len(self.cached)
        if not cached and not fresh and isinstance(names, list):
            # A cold run: every name is fresh (numbered in one dict, no lookups).
            fresh.update(zip(names, range(len(names)), strict=True))
            if len(fresh) == len(names):
                return list(range(len(names)))
            fresh.clear()  # a name repeated: number them one by one
        numbers = []
        for name in names:
            at = bisect_left(cached, name)
            if at < count and cached[at] == name:
                numbers.append(at)
            else:
                numbers.append(fresh.setdefault(name, count + len(fresh)))
        return numbers

    def added(self) -> list[str]:
        return list(self.fresh)

    def names(self) -> list[str]:
        """Every name, at its number."""
        return [*self.cached, *self.fresh]


class _Columns:
    """Typed columns filled a chunk of rows at a time: 8 bytes a value, not a Python object."""

    def __init__(self, **dtypes: Any) -> None:
        self.dtypes = dtypes
        self.parts: dict[str, list] = {key: [] for key in dtypes}

    def add(self, **values: Sequence) -> None:
        import numpy as np

        for key, column in values.items():
            self.parts[key].append(np.array(column, dtype=self.dtypes[key]))

    def add_arrays(self, **values: np.ndarray) -> None:
        for key, column in values.items():
            self.parts[key].append(column.astype(self.dtypes[key], copy=False))

    def arrays(self) -> dict[str, tuple[Any, Any]]:
        """{key: (values, dtype)}, as _cached_and_fresh takes them; the parts are let go."""
        import numpy as np

        columns: dict[str, tuple[Any, Any]] = {}
        for key in list(self.parts):
            parts = self.parts.pop(key)
            values = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else []
            columns[key] = (values, self.dtypes[key])
        return columns


def _cached_and_fresh(cache: dict, file_key: str, valid: set[int], fresh: dict) -> dict:
    """Each cached column's rows of the `valid` files, then its fresh (values, dtype)."""
    import numpy as np

    keep = np.isin(cache[file_key], np.array(sorted(valid), dtype=np.int64)) if valid else None
    columns = {}
    for key, (values, dtype) in fresh.items():
        new = np.asarray(values, dtype=dtype)
        if keep is None:  # no cached rows kept (a cold run): no copy
            columns[key] = new
        else:
            columns[key] = np.concatenate([cache[key][keep].astype(dtype), new])
    return columns


def _joined(parts: list[array], dtype: type) -> np.ndarray:
    """The hand-over's per-file arrays as one numpy array (one bytes.join, not a numpy view of
    each of the kernel's 55k files)."""
    import numpy as np

    return np.frombuffer(b"".join(parts), dtype=dtype)


def require_ranks(db: Store) -> None:
    if store.get_meta(db, "rank_format") != RANK_FORMAT:
        raise NoRanking("this index has no repo-map ranking yet; run `repomap index` to compute it")


def load_graph(db: Store) -> rank.Graph:
    """The stored graph, for personalized PageRank (kept: unpacking it costs ~5-10 ms)."""
    from repomap.index import pagerank as rank

    return kept(
        db,
        "graph",
        lambda: rank.Graph.from_arrays(store_ranks_tables.load_arrays(db, rank.ARRAY_NAMES)),
    )


Kept = TypeVar("Kept")


def kept(db: Store, what: str, load: Callable[[], Kept]) -> Kept:
    """`load()`, which reads the stored ranking, kept for the next call on the same state.

    A long-running process (the MCP server) keeps what it read, keyed by the index file and its
    ranks' fingerprint. The fingerprint alone is not enough: two indexes of the same bytes
    under other paths (a test file's share differs) have equal fingerprints, other graphs.
    """
    require_ranks(db)
    fingerprint = store.get_meta(db, "rank_fingerprint")
    if not fingerprint:
        return load()
    path = str(db.path.resolve())  # one key however the index's path was spelled
    key = _KeptKey(path, fingerprint, what)
    if key in _KEPT:
        return _KEPT[key]
    value = load()
    for old in [k for k in _KEPT if k.path == path and k.what == what]:  # older ranks
        del _KEPT[old]
    while sum(k.what == what for k in _KEPT) >= GRAPHS_KEPT:  # several roots: oldest goes
        del _KEPT[next(k for k in _KEPT if k.what == what)]
    _KEPT[key] = value
    return value


class _KeptKey(NamedTuple):
    path: str  # the index file
    fingerprint: str  # of its ranks
    what: str  # what load() read: "graph", "map_order"


# What kept() read: values of several types, each returned as typed by the `load` that read it.
_KEPT: dict[_KeptKey, Any] = {}
GRAPHS_KEPT = 4  # indexes whose graph a process keeps (an MCP server may serve several roots)
