"""The ranking stage alone, on an index already built: from scratch (as a cold run ranks) and
after a one-file change, stage by stage, without touching the index.

    python bench/rank_alone.py ROOT_OR_INDEX_DB [--runs N] [--written] [--json]

Each run opens the index as the writer, empties the ranking's caches inside a transaction,
times compute_ranks(force=True) and store_ranks, and rolls the transaction back: the index is
left as it was. With --written it ranks as a cold run does, from the rows the writer handed
over (ranking.Written): they are read from the tables first and given to the collector the
way store.Writer gives them, and that hand-over (the writer's extra work) is timed apart; the
ranking's tables (symbol_ranks, name_stats, file_ranks) are emptied before the clock starts,
as a cold run finds them (emptying the kernel's 3.9M symbol_ranks rows took ~0.2-0.3 s of
store_ranks, which a cold run does not spend). Prints wall and CPU seconds per stage (medians), and the process's peak RSS;
with --json, one JSON object of the same figures instead (bench/run.py reads it for the kernel).
Used for the Linux kernel (bench/README.md, "The Linux kernel, all of it"), where a cold
`repomap index` takes minutes and the ranking is one of its stages.
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import common
from common import median

from repomap import store
from repomap.index import memory, ranking
from repomap.index import pagerank as rank

# (module, function): the stages timed, each as the time spent inside it.
STAGES = (
    (ranking, "ranks_fingerprint"),
    (ranking, "_file_definitions"),
    (ranking, "_file_uses"),
    (rank, "unranked"),
    (rank, "pagerank"),
    (rank, "definition_scores"),
    (ranking, "_map_order"),
    (ranking, "_digest"),
    (ranking.store_ranks_tables, "pack"),
    (ranking._Packer, "result"),
)
# Digests and packing run on two threads for a large index (ranking._Packer): their rows add
# up both threads' seconds; `result` is what store_ranks waited for them, once it had written
# the symbol_ranks and name_stats rows.


class Timer:
    """Wall and CPU seconds spent in each wrapped function (outermost calls only); CPU of the
    calling thread."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)

    def wrap(self, module: object, name: str) -> None:
        function = getattr(module, name)

        def timed(*args: object, **kwargs: object) -> object:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.wall[name] += time.perf_counter() - wall
                self.cpu[name] += time.thread_time() - cpu

        setattr(module, name, timed)


# INSERT_SYMBOL_SQL's columns, those Written reads filled: id, file, name, qualified name, kind,
# start line, parent, doc, definition.
SYMBOLS_SQL = """SELECT id, file_id, name, qualified_name, kind, start_line, NULL, NULL, NULL,
    NULL, NULL, NULL, parent_id, CASE WHEN doc IS NULL THEN NULL ELSE 1 END, is_definition
    FROM symbols ORDER BY file_id, id"""
REFS_SQL = "SELECT file_id, name, line FROM refs ORDER BY file_id"
# The code chunks' columns Written reads (kind, name, start, end, is_test), by file (ids are the
# file's id * ROWS_PER_FILE + ordinal: docs' are negative, data's from DATA_BASE on).
CHUNKS_SQL = f"""SELECT id / {store.ROWS_PER_FILE}, kind, NULL, start_line, end_line, is_test
    FROM chunks WHERE id >= 0 AND id < {1 << 56} ORDER BY id"""


def handed_over(db_path: Path) -> tuple[ranking.Written, float, float]:
    """A Written holding every file's rows, and the wall and CPU seconds of handing them over
    (the rows' reading not included)."""
    written = ranking.Written()
    spent_wall = spent_cpu = 0.0
    with store.reading(db_path) as db:
        symbols = {
            file_id: list(rows)
            for file_id, rows in groupby(_rows(db.conn.execute(SYMBOLS_SQL)), key=itemgetter(1))
        }
        chunks = {
            file_id: [row[1:] for row in rows]
            for file_id, rows in groupby(_rows(db.conn.execute(CHUNKS_SQL)), key=itemgetter(0))
        }
        references = groupby(_rows(db.conn.execute(REFS_SQL)), key=itemgetter(0))
        # As store.Writer hands them: each file's symbols, then its chunks; every file, those
        # without symbols too.
        for (file_id,) in db.conn.execute("SELECT id FROM files ORDER BY id"):
            rows, chunk_rows = symbols.get(file_id, []), chunks.get(file_id, [])
            wall, cpu = time.perf_counter(), time.process_time()
            written.symbols_written(file_id, rows)
            written.chunks_written(file_id, chunk_rows)
            spent_wall += time.perf_counter() - wall
            spent_cpu += time.process_time() - cpu
        for file_id, grouped in references:
            uses = [row[1:] for row in grouped]
            wall, cpu = time.perf_counter(), time.process_time()
            written.references_written(file_id, uses)
            spent_wall += time.perf_counter() - wall
            spent_cpu += time.process_time() - cpu
    return written, spent_wall, spent_cpu


def _rows(cursor: Any) -> Iterator[tuple]:
    while batch := cursor.fetchmany(100_000):
        yield from batch


def run_once(db_path: Path, timer: Timer, written: ranking.Written | None) -> dict[str, float]:
    db = store.open_index(db_path)
    try:
        db.conn.execute("BEGIN")
        db.conn.execute("DELETE FROM rank_arrays")  # no cached definitions, uses or digests
        if written is not None:  # a cold run's ranking finds its tables empty
            for table in ("symbol_ranks", "name_stats", "file_ranks"):
                db.conn.execute(f"DELETE FROM {table}")
        wall, cpu = time.perf_counter(), time.process_time()
        computed = ranking.compute_ranks(db, force=True, written=written)
        compute = time.perf_counter() - wall, time.process_time() - cpu
        wall, cpu = time.perf_counter(), time.process_time()
        if computed:
            ranking.store_ranks(db, computed)
        stored = time.perf_counter() - wall, time.process_time() - cpu
        db.conn.execute("ROLLBACK")
    finally:
        db.close()
    return {
        "compute wall": compute[0],
        "compute CPU": compute[1],
        "store wall": stored[0],
        "store CPU": stored[1],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path, help="a root (its .repomap/index.db) or an index")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--written", action="store_true", help="rank from handed-over rows")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args()
    db_path = args.index if args.index.is_file() else args.index / ".repomap" / "index.db"
    memory.map_large_blocks()  # as a run writing thousands of files does (index/memory.py)
    written = None
    handover: tuple[float, float] = (0.0, 0.0)
    if args.written:
        written, *spent = handed_over(db_path)
        handover = (spent[0], spent[1])
        if not args.json:
            print(
                f"handing the rows over to ranking.Written: {handover[0]:.2f} s wall, "
                f"{handover[1]:.2f} s CPU"
            )
    timer = Timer()
    for module, name in STAGES:
        timer.wrap(module, name)
    totals: dict[str, list[float]] = defaultdict(list)
    stages: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _ in range(args.runs):
        timer.wall.clear()
        timer.cpu.clear()
        # compute_ranks lets go of what it was handed: each run ranks from its own copy.
        handed = copy.deepcopy(written) if written is not None and args.runs > 1 else written
        for key, value in run_once(db_path, timer, handed).items():
            totals[key].append(value)
        for _, name in STAGES:
            stages[name].append((timer.wall[name], timer.cpu[name]))
    with store.reading(db_path) as db:
        counts = {
            table: db.scalar(f"SELECT count(*) FROM {table}")
            for table in ("files", "symbols", "refs", "symbol_ranks")
        }
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if args.json:
        print(json.dumps({
            **{key.replace(" ", "_"): median(values) for key, values in totals.items()},
            "handover_wall": handover[0], "handover_cpu": handover[1], "runs": args.runs,
            "written": args.written, "peak_rss": peak, "counts": counts,
            "ranking": ranking.__file__,
            "stages": {name: [median([w for w, _ in stages[name]]),
                              median([c for _, c in stages[name]])] for _, name in STAGES},
        }))  # fmt: skip
        return 0
    print(f"{db_path}: {', '.join(f'{n:,} {t}' for t, n in counts.items())}; {args.runs} runs")
    # Which repomap ranked: a base installed apart must come first on PYTHONPATH, ahead of an
    # editable install's mapping (bench/README.md's A/B runs).
    print(f"ranking: {ranking.__file__}")
    print("| stage | wall s | CPU s |\n| --- | ---: | ---: |")
    for _, name in STAGES:
        walls, cpus = zip(*stages[name], strict=True)
        print(f"| {name} | {median(list(walls)):.2f} | {median(list(cpus)):.2f} |")
    for what in ("compute", "store"):
        print(
            f"| **{what}_ranks** | {median(totals[what + ' wall']):.2f} | "
            f"{median(totals[what + ' CPU']):.2f} |"
        )
    print(f"peak RSS of this process: {peak / common.MB:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
