"""Symbol lookups timed on an existing index: search_symbols, find_symbol and the map's
--mention names (symbol_ids_named), for names and qualified names sampled from the index.

    python bench/symbol_lookups.py INDEX.db [--sample 300] [--save ANSWERS.json]
    python bench/symbol_lookups.py --compare BEFORE.json AFTER.json

Queries (seeded sample of the index's symbols): the name; the qualified name; the qualified
name in the other spelling (`a::b` <-> `a.b`); half the name (a prefix, `search` only); and, in
an index with Rust impls, 100 impl qualified names (`fmt::Display for Pool`). Each query runs
once unmeasured, then once measured: CPU time of the call in this process (thread_time), as
medians and 95th percentiles. `--save` writes the answers (paths, lines, qualified names,
kinds, match tiers) and the times; `--compare` says how many answers two saved runs share.
To measure an older version, run this script with that version first on PYTHONPATH (installed
with `pip install --no-deps --target DIR`), on an index it built or can read.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

from repomap import store
from repomap.errors import RepomapError
from repomap.maps import rows as map_rows
from repomap.search import symbols

SAMPLE_SQL = "SELECT name, qualified_name FROM symbols ORDER BY qualified_name, name, id"
IMPLS_SQL = "SELECT qualified_name FROM symbols WHERE kind = 'impl' ORDER BY qualified_name"


def queries(db: store.Store, sample: int) -> dict[str, list[str]]:
    rows = db.conn.execute(SAMPLE_SQL).fetchall()
    impls = [q for (q,) in db.conn.execute(IMPLS_SQL)]
    picked = random.Random(20).sample(rows, min(sample, len(rows)))
    found = {
        "name": [n for n, _ in picked],
        "qualified": [q for _, q in picked],
        "qualified_alt": [symbols.match_params(q)["q_alt"] for _, q in picked],
        "prefix": [n[: max(3, len(n) // 2)] for n, _ in picked],
    }
    if impls:
        found["impl_qualified"] = random.Random(1).sample(impls, min(100, len(impls)))
    return found


def answer(db: store.Store, how: str, query: str) -> list:
    try:
        if how == "search":
            hits = symbols.search_symbols(db, query, limit=20)
            return [[h.file_path, h.line_number, h.qualified_name, h.kind, h.match] for h in hits]
        if how == "find":
            match = symbols.find_symbol(db, query)
            return [[r.file_path, r.start_line, r.qualified_name, r.kind]
                    for r in [match.best, *match.others]]  # fmt: skip
        ids = map_rows.symbol_ids_named(db, [query])[query]
        rows = map_rows.map_symbols(db, ids)
        return sorted([rows[i].file_id, rows[i].start_line, rows[i].qualified_name] for i in ids)
    except RepomapError as error:
        return ["error", type(error).__name__]


def measure(db_path: Path, sample: int) -> dict:
    result: dict = {"times_ms": {}, "answers": {}}
    with store.reading(db_path) as db:
        for label, asked in queries(db, sample).items():
            for how in ("search", "find", "named"):
                if label == "prefix" and how != "search":
                    continue
                times, answers = [], []
                for query in asked:
                    answer(db, how, query)  # warm
                    started = time.thread_time()
                    answers.append(answer(db, how, query))
                    times.append((time.thread_time() - started) * 1000)
                times.sort()
                key = f"{label}/{how}"
                result["times_ms"][key] = [statistics.median(times), times[len(times) * 95 // 100]]
                result["answers"][key] = answers
                print(f"| {key} | {len(times)} | {statistics.median(times):.3f} ms | "
                      f"{times[len(times) * 95 // 100]:.3f} ms |")  # fmt: skip
    return result


def compare(before: Path, after: Path) -> int:
    old, new = (json.loads(path.read_text())["answers"] for path in (before, after))
    differing = 0
    for key, answers in old.items():
        same = sum(a == b for a, b in zip(answers, new.get(key, []), strict=False))
        differing += len(answers) - same
        print(f"| {key} | {len(answers)} | {same} |")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, nargs="?")
    parser.add_argument("--sample", type=int, default=300, help="symbols sampled (default 300)")
    parser.add_argument("--save", type=Path, help="write the answers and times here (JSON)")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        print("| queries | asked | same answer |\n| --- | ---: | ---: |")
        return compare(*args.compare)
    if args.db is None:  # `bench/run.py --all` calls main() without arguments: not an error
        print("bench/symbol_lookups.py: give an index, or --compare BEFORE.json AFTER.json")
        return 2
    print("| queries / call | asked | median CPU | p95 CPU |\n| --- | ---: | ---: | ---: |")
    result = measure(args.db, args.sample)
    if args.save:
        args.save.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
