"""The repository at a glance, as data: every file with its lines and rank, and who uses whom.

What a picture of the repository is drawn from (the web page's treemap and dependency graph,
`repomap serve`'s `/api/map`), where the text map (`repo_map.py`) lays out signatures:

- `ranked_files(db, file_ids)`: code files best first by their stored PageRank (ties by path),
  each with its language and line count;
- `file_edges(db, file_ids)`: the reference graph between those files, one edge per (user,
  definer) pair weighted by the same flow PageRank runs on (a use of a name, weighed by the
  name's quality, shared among the files that define it), strongest first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from repomap.index import ranking
from repomap.maps.rows import MapFileRow
from repomap.store import Store

RANKED_FILES_SQL = """SELECT f.id, f.path, f.language, f.line_count, coalesce(r.rank, 0)
FROM files f LEFT JOIN file_ranks r ON r.file_id = f.id {where}
ORDER BY coalesce(r.rank, 0) DESC, f.path"""
IN_FILES = "WHERE f.id IN (SELECT value FROM json_each(?))"


@dataclass(frozen=True, slots=True)
class FileEdge:
    source: int  # files.id of the file that uses names
    target: int  # files.id of the file that defines them
    weight: float  # the share of the source's references that flows to the target
    names: int  # how many distinct names the source uses from the target


def ranked_files(db: Store, file_ids: Sequence[int] | None = None) -> list[MapFileRow]:
    """Code files (all, or those of `file_ids`), highest rank first, then by path."""
    if file_ids is None:
        rows = db.conn.execute(RANKED_FILES_SQL.format(where=""))
    else:
        ids = "[" + ",".join(map(str, file_ids)) + "]"
        rows = db.conn.execute(RANKED_FILES_SQL.format(where=IN_FILES), (ids,))
    return [MapFileRow(*row) for row in rows]


def file_edges(db: Store, file_ids: Sequence[int], limit: int | None = None) -> list[FileEdge]:
    """The references between the files of `file_ids` (no file to itself), strongest first.

    A file's weight toward another is the sum, over the names it uses that the other defines,
    of the use's weight times the other's share of the name, divided by all the file's use
    weight: the fraction of its outgoing PageRank flow that goes there (0-1).
    """
    graph = ranking.load_graph(db)
    node_of = {int(file_id): node for node, file_id in enumerate(graph.file_ids.tolist())}
    nodes = np.array(sorted(node_of[i] for i in set(file_ids) if i in node_of), dtype=np.int64)
    if len(nodes) < 2:
        return []
    defs = np.isin(graph.def_file, nodes)
    definers: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for name, node, share in zip(
        graph.def_name[defs].tolist(),
        graph.def_file[defs].tolist(),
        graph.def_share[defs].tolist(),
        strict=True,
    ):
        definers[name].append((node, share))
    uses = np.isin(graph.c_file, nodes)
    outgoing = np.bincount(graph.c_file[uses], graph.c_weight[uses], minlength=graph.file_count)
    wanted = uses & np.isin(
        graph.c_name, np.fromiter(definers, dtype=np.int64, count=len(definers))
    )
    flows: dict[tuple[int, int], list[float]] = {}
    for user, name, weight in zip(
        graph.c_file[wanted].tolist(),
        graph.c_name[wanted].tolist(),
        graph.c_weight[wanted].tolist(),
        strict=True,
    ):
        for definer, share in definers[name]:
            if definer != user:
                flow = flows.setdefault((user, definer), [0.0, 0.0])
                flow[0] += weight * share
                flow[1] += 1
    ids = graph.file_ids.tolist()
    edges = [
        FileEdge(ids[user], ids[definer], flow / outgoing[user], int(count))
        for (user, definer), (flow, count) in flows.items()
        if outgoing[user] > 0
    ]
    edges.sort(key=lambda edge: (-edge.weight, edge.source, edge.target))
    return edges if limit is None else edges[:limit]
