"""The CLI end to end: `repomap search-text`, `repomap symbols` and `repomap map` as one
subprocess each, per corpus (issue 16).

    python bench/cli.py                       # all three corpora, 11 runs per command
    python bench/cli.py --corpus cpp --runs 21

The indexes are ~/.cache/repomap-bench/mcp/<corpus>.db (or $REPOMAP_BENCH_DIR), as
bench/mcp_calls.py keeps them; `repomap index` brings each up to date first. Each command runs
once unmeasured (page cache, .pyc files), then --runs times; the table gives the median wall
time and the median CPU time (user + system of the process and its children, from wait4), and
`python -c pass` measured in the same run as the interpreter's floor: what repomap adds is the
difference. Every command must exit 0 (1 for a search that finds nothing fails the run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import common

from repomap import config
from repomap.index import pipeline as indexer

COMMANDS = {  # corpus -> (label, repomap arguments)
    "python": [
        ("search-text, a question", ["search-text", "database connection", "--json"]),
        ("symbols, a name", ["symbols", "QuerySet", "--json"]),
        ("symbols, a prefix", ["symbols", "get_q", "--json"]),
        ("map, 1024 tokens", ["map"]),
        ("map --exclude tests/", ["map", "--exclude", "tests/"]),
    ],
    "rust": [
        ("search-text, a question", ["search-text", "heap allocation", "--json"]),
        ("symbols, a name", ["symbols", "Vec", "--json"]),
        ("symbols, a prefix", ["symbols", "into_it", "--json"]),
        ("map, 1024 tokens", ["map"]),
        ("map --exclude tests/", ["map", "--exclude", "tests/"]),
    ],
    "cpp": [
        ("search-text, a question", ["search-text", "basic block", "--json"]),
        ("symbols, a name", ["symbols", "StringRef", "--json"]),
        ("symbols, a prefix", ["symbols", "getNum", "--json"]),
        ("map, 1024 tokens", ["map"]),
        ("map --exclude tests/", ["map", "--exclude", "tests/"]),
    ],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(COMMANDS))
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args(argv)
    roots = common.materialize(args.corpus or list(COMMANDS))
    base = Path(os.environ.get("REPOMAP_BENCH_DIR", Path.home() / ".cache" / "repomap-bench"))
    env = {**os.environ, "REPOMAP_SEARCH_LOG": "0"}  # the log's writes are not the command's
    rows = []
    for name, root in roots.items():
        db_path = base / "mcp" / f"{name}.db"
        db_path.parent.mkdir(parents=True, exist_ok=True)
        indexer.run(config.resolve(root, db_path))
        floor = _median([sys.executable, "-c", "pass"], args.runs, env)
        rows.append([common.CORPORA[name], "`python -c pass`", *_cells(floor), ""])
        for label, arguments in COMMANDS[name]:
            command = [*common.repomap_command(), *arguments, "--db", str(db_path)]
            wall, cpu = _median(command, args.runs, env)
            rows.append(
                [common.CORPORA[name], label, *_cells((wall, cpu)), f"{wall - floor[0]:.0f}"]
            )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"## CLI end to end ({os.cpu_count()} cores, load average {load} at the end)\n")
    print(
        common.markdown_table(
            ["corpus", "command", "wall ms (median)", "CPU ms (median)", "above python -c pass"],
            rows,
            "llrrr",
        )
    )
    print(f"\nMedian of {args.runs} runs of each command after one warm-up.")
    return 0


def _median(command: list[str], runs: int, env: dict) -> tuple[float, float]:
    common.timed(command, env=env).check()  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        result = common.timed(command, env=env).check()
        walls.append(result.seconds * 1000)
        cpus.append(result.cpu_seconds * 1000)
    return statistics.median(walls), statistics.median(cpus)


def _cells(figures: tuple[float, float]) -> list[str]:
    return [f"{figures[0]:.0f}", f"{figures[1]:.0f}"]


if __name__ == "__main__":
    sys.exit(main())
