"""PageRank over references: which files and definitions matter most. Pure: arrays in, scores out.

The graph links file A to file B when A uses a name that B defines. Instead of materialising those
file-to-file edges (a name used by 500 files and defined in 100 makes 50,000 of them: aider's graph
grows that way until it runs out of memory on LLVM), the graph is kept factored through the names:

    W = C · D        C[file, name]: how strongly the file uses the name
                     D[name, file]: which files define it, each definition an equal share

so one PageRank step is two sparse products (numpy `bincount`), linear in references plus
definitions. A file's references to its own names are not edges (that would make big files rank
themselves): the diagonal of W is subtracted exactly.

Edge weights make rare, well-named identifiers count more than `get`, `new` or `len`:
    C[file, name] = quality(name) * sqrt(uses of the name in the file)
    quality(name) = idf(name) * shape(name)
idf is the smoothed inverse document frequency over the files that use the name (`len`, `get` and
`new` are used everywhere and weigh about 1; a name used by three files weighs about 7), shape
favours long multi-word names (`get_queryset`, `HashMap`), and discounts private (`_x`), dunder
(`__init__`) and one- or two-letter names. A name defined in k places gives each definition 1/k of
what flows to it, so an ambiguous `save` spreads thin while `QuerySet` goes where it is defined.

A definition's score is the rank that flows into it from other files; a small prior by kind (and
docstring) orders definitions nobody references yet. The map orders definitions by `map_order`:
the file's rank times the score relative to the best in that file. Personalization (focus files, mentioned
names) re-runs PageRank from the stored unpersonalized ranking, with mentioned names' edges
boosted, which converges in a few milliseconds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

ALPHA = 0.85  # damping, as networkx.pagerank and aider
TOLERANCE = 1.0e-6  # per node, on the L1 change (networkx's criterion)
MAX_ITERATIONS = 200
OUT_ROUNDING = 1.0e-9  # of a file's total weight: an out-weight below it is rounding (_out_weights)
MENTION_BOOST = 10.0  # edge weight factor for names the user mentions (aider uses 10 too)
PRIOR_WEIGHT = 1.0e-3  # how much a definition's kind counts beside what flows into it
KIND_PRIOR = {
    "class": 1.0,
    "struct": 1.0,
    "trait": 1.0,
    "enum": 0.9,
    "union": 0.8,
    "type": 0.7,
    "function": 0.7,
    "macro": 0.6,
    "method": 0.5,
    "constant": 0.4,
    "variable": 0.2,
    "attribute": 0.15,  # a class's fields: below the class and its methods
}

ARRAY_NAMES = (
    "file_ids",
    "c_file",
    "c_name",
    "c_weight",
    "def_symbol",
    "def_file",
    "def_name",
    "def_self",
    "def_prior",
    "def_share",
    "name_quality",
    "rank",
)

# Names every Python file uses for something else (builtins and the methods of builtin types),
# and the std vocabulary of Rust and C++: a definition called `get`, `append` or `size` is
# rarely what a use of that name means.
GENERIC_NAMES = frozenset(
    {
        name
        for t in (
            __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__),
            str,
            list,
            dict,
            set,
            bytes,
            int,
            float,
            tuple,
            object,
        )
        for name in (t if isinstance(t, dict) else dir(t))
        if not name.startswith("_")
    }
    | {
        "new",
        "default",
        "clone",
        "from",
        "into",
        "fmt",
        "eq",
        "ne",
        "cmp",
        "partial_cmp",
        "hash",
        "drop",
        "deref",
        "deref_mut",
        "as_ref",
        "as_mut",
        "borrow",
        "iter",
        "iter_mut",
        "into_iter",
        "is_empty",
        "unwrap",
        "expect",
        "push",
        "size",
        "begin",
        "end",
        "data",
        "empty",
        "push_back",
        "emplace_back",
        "front",
        "back",
        "at",
        "value",
        "first",
        "second",
        "swap",
        "reset",
        "release",
        "name",
        "run",
        "init",
        "main",
        "test",
        "self",
        "this",
        "value_type",
        "type",
        "result",
    }
)


def quality(shapes: np.ndarray, ref_files: np.ndarray, total_files: int) -> np.ndarray:
    """How much one use of each name says about the file that defines it (idf x naming shape)."""
    idf = np.log((1 + total_files) / (1 + ref_files)) + 0.1
    return idf * shapes


def shape(name: str) -> float:
    """Naming factor: specific names (`get_queryset`, `HashMap`) up; `x`, `_x`, `__x__`, `get` down.

    A single lowercase word (`message`, `context`, `lower`) is as often a local variable or a
    method of something else as a use of the definition that happens to share it.
    """
    if name.startswith("__") and name.endswith("__"):
        return 0.05
    factor = 0.1 if name.startswith("_") else 1.0
    core = name.strip("_")
    if core in GENERIC_NAMES:
        factor *= 0.1
    if len(core) <= 2:  # `e`, `i`, `db`: loop variables and exception names far more often
        return factor * 0.01
    tail = core[1:]
    words = "_" in core or (tail != tail.lower() and core != core.upper())  # snake or camel case
    if words:
        return factor * (2.0 if len(core) >= 8 else 1.0)
    if core[0].isupper():  # a type or a constant: rarely a local name
        return factor
    return factor * (0.3 if len(core) >= 5 else 0.15)


def kind_prior(kind: str, documented: bool, top_level: bool) -> float:
    """Order of definitions that nothing references: types before functions before methods."""
    return KIND_PRIOR.get(kind, 0.3) * (1.25 if documented else 1.0) * (1.1 if top_level else 1.0)


TEST_SHARE = 0.2  # a name defined in both code and tests: uses mostly mean the code's


@dataclass(frozen=True, slots=True)
class Definitions:
    """The definitions that references can reach, as parallel arrays."""

    symbol_ids: np.ndarray  # int64: symbols.id
    file_indices: np.ndarray  # position of the defining file in `file_ids`
    name_indices: np.ndarray  # position of the defined name among the names
    priors: np.ndarray  # kind_prior()
    weights: np.ndarray  # relative share among the definitions of one name (TEST_SHARE in tests)


@dataclass(frozen=True, slots=True)
class Graph:
    """The factored reference graph: C as (c_file, c_name, c_weight), D as the def_* arrays."""

    file_ids: np.ndarray  # int64 [files]: files.id of each node
    c_file: np.ndarray  # int32 [uses]: the using file
    c_name: np.ndarray  # int32 [uses]: the name used
    c_weight: np.ndarray  # float64 [uses]: quality(name) * sqrt(uses)
    def_symbol: np.ndarray  # int64 [defs]: symbols.id
    def_file: np.ndarray  # int32 [defs]: the defining file
    def_name: np.ndarray  # int32 [defs]
    def_self: np.ndarray  # float64 [defs]: C[def_file, def_name], the file's use of its own name
    def_prior: np.ndarray  # float64 [defs]
    def_share: np.ndarray  # float64 [defs]: its part of what flows to its name (sums to 1 per name)
    name_quality: np.ndarray  # float64 [names]: quality() of each name
    rank: np.ndarray  # float64 [files]: the unpersonalized PageRank (a warm start)

    @property
    def file_count(self) -> int:
        return len(self.file_ids)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAY_NAMES}

    def ranked(self, rank: np.ndarray) -> Graph:
        """The same graph with `rank` as its unpersonalized ranks."""
        return replace(self, rank=rank)

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> Graph:
        return cls(**{name: arrays[name] for name in ARRAY_NAMES})


def build(
    file_ids: np.ndarray, name_shapes: np.ndarray, definitions: Definitions, uses: np.ndarray
) -> Graph:
    """The graph, ranked unpersonalized.

    `name_shapes` has the shape() of each defined name (definitions.name_indices index into
    it); `uses` has one row (file index, name index, count) per file and defined name it uses.
    """
    graph = unranked(file_ids, name_shapes, definitions, uses)
    return graph.ranked(pagerank(graph))


# The arrays PageRank reads, the number of files aside: equal arrays, equal ranks, bit for bit.
FLOW_ARRAYS = ("c_file", "c_name", "c_weight", "def_file", "def_name", "def_self", "def_share")


def flow_digest(graph: Graph) -> str:
    """A digest of everything pagerank(graph) depends on: two graphs with the same digest have
    the same unpersonalized ranks, so a run whose edits changed no edge (a comment, a body that
    uses the same names) can keep the ranks it has."""
    digest = hashlib.blake2b(
        f"{graph.file_count}:{len(graph.name_quality)}".encode(), digest_size=16
    )
    for name in FLOW_ARRAYS:
        value = np.ascontiguousarray(getattr(graph, name))
        digest.update(f"{name}:{value.dtype.str}:{len(value)}".encode())
        digest.update(value.data)
    return digest.hexdigest()


def unranked(
    file_ids: np.ndarray, name_shapes: np.ndarray, definitions: Definitions, uses: np.ndarray
) -> Graph:
    """The graph as build() makes it, its rank the uniform start pagerank() begins from."""
    total = len(file_ids)
    uses = uses.reshape(-1, 3)
    c_file = uses[:, 0].astype(np.int32)
    c_name = uses[:, 1].astype(np.int32)
    ref_files = np.bincount(c_name, minlength=len(name_shapes))
    quality_of = quality(np.asarray(name_shapes, dtype=np.float64), ref_files, total)
    c_weight = quality_of[c_name] * np.sqrt(uses[:, 2].astype(np.float64))
    def_file = np.asarray(definitions.file_indices, dtype=np.int32)
    def_name = np.asarray(definitions.name_indices, dtype=np.int32)
    weights = np.asarray(definitions.weights, dtype=np.float64)
    name_total = np.bincount(def_name, weights=weights, minlength=len(name_shapes))
    return Graph(
        file_ids=np.asarray(file_ids, dtype=np.int64),
        c_file=c_file,
        c_name=c_name,
        c_weight=c_weight,
        def_symbol=np.asarray(definitions.symbol_ids, dtype=np.int64),
        def_file=def_file,
        def_name=def_name,
        def_self=_lookup(c_file, c_name, c_weight, def_file, def_name, len(name_shapes)),
        def_prior=np.asarray(definitions.priors, dtype=np.float64),
        def_share=weights / name_total[def_name] if len(def_name) else weights,
        name_quality=quality_of,
        rank=np.full(total, 1.0 / total if total else 0.0),
    )


LOOKUP_AT_ONCE = 1 << 19  # definitions whose own use _lookup finds at a time


def _lookup(
    c_file: np.ndarray,
    c_name: np.ndarray,
    c_weight: np.ndarray,
    def_file: np.ndarray,
    def_name: np.ndarray,
    name_count: int,
) -> np.ndarray:
    """C[def_file, def_name] for every definition (0 where the file does not use its own name),
    LOOKUP_AT_ONCE definitions at a time (over the Linux kernel's 3.9M at once, its int64 and
    float64 temporaries held ~150 MB)."""
    keys = c_file.astype(np.int64) * name_count + c_name
    if not len(keys):
        return np.zeros(len(def_file))
    weights = c_weight
    if not bool(np.all(keys[1:] >= keys[:-1])):  # the index's uses come sorted: no copies
        order = np.argsort(keys)
        keys, weights = keys[order], c_weight[order]
    found = np.empty(len(def_file))
    for start in range(0, len(def_file), LOOKUP_AT_ONCE):
        part = slice(start, start + LOOKUP_AT_ONCE)
        wanted = def_file[part].astype(np.int64) * name_count + def_name[part]
        at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        found[part] = np.where(keys[at] == wanted, weights[at], 0.0)
    return found


def boosted(
    graph: Graph, names: np.ndarray, factor: float = MENTION_BOOST
) -> tuple[np.ndarray, np.ndarray]:
    """c_weight and def_self with the uses of `names` (name indices) multiplied by `factor`."""
    if not len(names):
        return graph.c_weight, graph.def_self
    c_weight = np.where(np.isin(graph.c_name, names), graph.c_weight * factor, graph.c_weight)
    def_self = np.where(np.isin(graph.def_name, names), graph.def_self * factor, graph.def_self)
    return c_weight, def_self


def pagerank(
    graph: Graph, personalization: np.ndarray | None = None, boost_names: np.ndarray | None = None
) -> np.ndarray:
    """PageRank of every file (sums to 1), as networkx.pagerank computes it on W without its diagonal."""
    n = graph.file_count
    if n == 0:
        return np.zeros(0)
    c_weight, def_self = boosted(graph, boost_names if boost_names is not None else np.zeros(0))
    p = _normalized(personalization, n)
    out, self_weight = _out_weights(graph, c_weight, def_self)
    dangling = out <= 0
    safe_out = np.where(dangling, 1.0, out)
    x = graph.rank if len(graph.rank) == n and graph.rank.sum() > 0 else p
    x = x / x.sum()
    reached = _reached(graph)
    for _ in range(MAX_ITERATIONS):
        previous = x
        z = np.where(dangling, 0.0, x / safe_out)
        flow = _flow(graph, c_weight, z, reached) - z * self_weight
        x = ALPHA * (flow + x[dangling].sum() * p) + (1 - ALPHA) * p
        if np.abs(x - previous).sum() < n * TOLERANCE:
            break
    return x / x.sum()


def definition_scores(
    graph: Graph, rank: np.ndarray, boost_names: np.ndarray | None = None
) -> np.ndarray:
    """What flows into each definition from other files, plus a small prior; one per def_* entry."""
    if graph.file_count == 0 or not len(graph.def_symbol):
        return np.zeros(len(graph.def_symbol))
    c_weight, def_self = boosted(graph, boost_names if boost_names is not None else np.zeros(0))
    out, _ = _out_weights(graph, c_weight, def_self)
    z = np.where(out > 0, rank / np.where(out > 0, out, 1.0), 0.0)
    by_name = np.bincount(
        graph.c_name, weights=c_weight * z[graph.c_file], minlength=len(graph.name_quality)
    )
    incoming = (by_name[graph.def_name] - z[graph.def_file] * def_self) * graph.def_share
    incoming = np.maximum(
        incoming, 0.0
    )  # rounding can leave -1e-18 where only the file itself uses a name
    return ALPHA * incoming + PRIOR_WEIGHT * rank[graph.def_file] * graph.def_prior


def map_order(graph: Graph, rank: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The map's key: the file's rank times the definition's score relative to the best one in
    its file. Top-ranked files come first, each with its top definitions; a file's lesser
    definitions compete with the best ones of files ranked below it. (Ordering by the scores
    alone lets a hub like `make_hashable`, used everywhere, crowd out the files a --focus
    points at, whose rank is spread over many definitions.)"""
    best = np.zeros(graph.file_count)
    np.maximum.at(best, graph.def_file, scores)
    best_of_def = best[graph.def_file]
    return np.where(
        best_of_def > 0,
        rank[graph.def_file] * scores / np.where(best_of_def > 0, best_of_def, 1.0),
        0.0,
    )


def _normalized(personalization: np.ndarray | None, n: int) -> np.ndarray:
    if personalization is None or personalization.sum() <= 0:
        return np.full(n, 1.0 / n)
    return personalization / personalization.sum()


def _out_weights(
    graph: Graph, c_weight: np.ndarray, def_self: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each file's total edge weight to other files, and its weight to itself (W's diagonal).

    A file that uses only names it alone defines sends nothing out, but its two sums, added in
    different orders, can differ by rounding: systemd's copy of a kernel header (976.64 in
    both) kept 2.3e-13 of out-weight, its rank was divided by that, and the rank it then sent
    itself outgrew the subtraction of its diagonal: every step multiplied the total, and after
    200 the header held the whole ranking (the others 1e-96). Below a billionth of its total,
    what is left is rounding, and the file is dangling."""
    n = graph.file_count
    total = np.bincount(graph.c_file, weights=c_weight, minlength=n)
    self_weight = np.bincount(graph.def_file, weights=def_self * graph.def_share, minlength=n)
    out = total - self_weight
    return np.where(out > total * OUT_ROUNDING, out, 0.0), self_weight


class _Reached:
    """The definitions of names some file uses, as (def_file, def_name, def_share) of those
    alone: nothing flows to the others, whose 0.0 each would add to its file's sum without
    changing a bit of it. On the Linux kernel most definitions are macros no file uses: each
    PageRank step reads a third of the 3.9M definitions."""

    __slots__ = ("file", "name", "share")

    def __init__(self, file: np.ndarray, name: np.ndarray, share: np.ndarray) -> None:
        self.file, self.name, self.share = file, name, share


def _reached(graph: Graph) -> _Reached:
    used = np.bincount(graph.c_name, minlength=len(graph.name_quality)) > 0
    if len(graph.def_name) == 0 or bool(used.all()):
        return _Reached(graph.def_file, graph.def_name, graph.def_share)
    kept = np.flatnonzero(used[graph.def_name])  # ascending: each file's order is kept
    return _Reached(graph.def_file[kept], graph.def_name[kept], graph.def_share[kept])


def _flow(
    graph: Graph, c_weight: np.ndarray, z: np.ndarray, reached: _Reached | None = None
) -> np.ndarray:
    """z @ C @ D: what each file receives when every file sends z along its weighted uses."""
    by_name = np.bincount(
        graph.c_name, weights=c_weight * z[graph.c_file], minlength=len(graph.name_quality)
    )
    defs = reached or _Reached(graph.def_file, graph.def_name, graph.def_share)
    per_def = by_name[defs.name] * defs.share
    return np.bincount(defs.file, weights=per_def, minlength=graph.file_count)
