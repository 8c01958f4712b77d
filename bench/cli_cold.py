"""A cold `repomap search` process without a server, timed whole: start-up, model load, vectors.

Each run is `python -m repomap.cli search QUESTION --mode MODE --db DB --json` with
REPOMAP_NO_SERVER=1 (the CLI answers in process, as with no `repomap serve` running), the
questions of bench/relevance/questions.jsonl for the corpus in turn. With `--before SRC` a second
source tree (e.g. `git archive <commit> | tar -x -C SRC`) runs the same calls on PYTHONPATH, run
for run alternating with this checkout, so both see the same machine load; wall and CPU time
(the child's own rusage) per process, medians and p95, and the medians of the command's own
stage timings (`meta.timings_ms`).

    python bench/cli_cold.py --db DB [--corpus python] [--mode hybrid] [--runs 15] [--before SRC]
        [--before-db DB]   # the before tree's own copy of the index (an older schema)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import common

QUESTIONS = Path(__file__).parent / "relevance" / "questions.jsonl"


def questions(corpus: str) -> list[str]:
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    return [row["question"] for row in rows if row["corpus"] == corpus]


def run_once(question: str, mode: str, db: Path, source: Path | None) -> dict[str, Any]:
    env = {**os.environ, "REPOMAP_NO_SERVER": "1"}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    command = [sys.executable, "-m", "repomap.cli", "search", question, "--mode", mode,
               "--db", str(db), "--json"]  # fmt: skip
    started = time.perf_counter()
    child = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    out, err = child.communicate()
    wall = time.perf_counter() - started
    if child.returncode not in (0, 1):
        raise SystemExit(f"{command} failed ({child.returncode}): {err.decode()[-500:]}")
    data = json.loads(out) if out.strip() else {"results": [], "meta": {"timings_ms": {}}}
    timings = data["meta"]["timings_ms"]
    return {"wall": wall * 1000, **{k: float(v) for k, v in timings.items()},
            "answer": data["results"]}  # fmt: skip


def measure(question: str, mode: str, db: Path, source: Path | None) -> dict[str, Any]:
    """One run, with the CPU seconds the child used (from the children's rusage totals)."""
    before = os.times()
    figures = run_once(question, mode, db, source)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    figures["cpu"] = cpu * 1000
    return figures


def summary(name: str, runs: list[dict[str, Any]]) -> list[str]:
    def stat(key: str) -> str:
        values = [run[key] for run in runs if key in run]
        if not values:
            return "-"
        return f"{common.median(values):.0f} / {common.percentile(values, 95):.0f}"

    stages = sorted({key for run in runs for key in run} - {"wall", "cpu", "answer"})
    medians = ", ".join(
        f"{key} {common.median([run[key] for run in runs if key in run]):.0f}" for key in stages
    )
    return [name, str(len(runs)), stat("wall"), stat("cpu"), medians]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--corpus", default="python")
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "semantic", "lexical"])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", type=Path, help="a source tree to alternate with")
    parser.add_argument(
        "--before-db",
        type=Path,
        help="the index the --before tree reads (default --db; another copy when this checkout's "
        "schema is newer than the before tree's)",
    )
    args = parser.parse_args(argv)
    before_db = args.before_db or args.db
    asked = questions(args.corpus)
    # Both trees' bytecode compiled first, as an install does (common.compile_bytecode).
    common.compile_bytecode(*([args.before / "repomap"] if args.before else []))
    # One warm-up each (the page cache, .pyc files, a vector file this checkout writes).
    measure(asked[0], args.mode, args.db, None)
    if args.before is not None:
        measure(asked[0], args.mode, before_db, args.before)
    after: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    for number in range(args.runs):
        question = asked[number % len(asked)]
        after.append(measure(question, args.mode, args.db, None))
        if args.before is not None:
            before.append(measure(question, args.mode, before_db, args.before))
    rows = [summary("this checkout", after)]
    if before:
        rows.append(summary(f"before ({args.before})", before))
    load = os.getloadavg()
    print(f"## cold `repomap search --mode {args.mode}` on {args.db} (load {load[0]:.1f})\n")
    print(
        common.markdown_table(
            ["code", "runs", "wall p50 / p95 ms", "CPU p50 / p95 ms", "stage medians ms"],
            rows,
            "lrrrl",
        )
    )
    if before:  # the same question through both: the same hits, scores and order
        same = sum(a["answer"] == b["answer"] for a, b in zip(after, before, strict=True))
        print(f"\nidentical answers (results, scores, order): {same} of {len(after)}")
        hits = sum(
            [hit["path"] for hit in a["answer"]] == [hit["path"] for hit in b["answer"]]
            for a, b in zip(after, before, strict=True)
        )
        print(f"same paths in the same order: {hits} of {len(after)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
