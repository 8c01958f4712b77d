"""What reliability costs: the crash-safe worker pool against multiprocessing.Pool, and how long
hostile one-line files take to extract.

    python bench/reliability.py                  # the Python corpus, 3 runs
    python bench/reliability.py --corpus cpp --runs 5

1. Extraction of every file of a corpus (read + extract + rows, no database) with 2 workers,
   through `multiprocessing.Pool.imap_unordered(chunksize=4)` (what index.py used) and through
   `repomap.index.workers.run_all` (what it uses: it survives a worker that dies). Largest files
   first in both, as index.py orders them. Median wall time of the runs, and the range.
2. `index.read_and_extract` on 5 MB single-line files (what a raised --max-file-size lets in):
   one line of string literals, one string, a comment, and a line of minified assignments
   (416,666 module constants). These took minutes to hours before the fixes in
   docs/reliability.md; one run each, in this process.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import time
from pathlib import Path

import common

from repomap import config
from repomap.index import pipeline as indexer
from repomap.index.workers import run_all

LINE = 5_000_000
HOSTILE = {
    "literals.py (python)": lambda: (
        "DATA = [" + ", ".join(f'"abcdefgh{i:08d}"' for i in range(LINE // 20)) + "]\n"
    ),
    "string.py (python)": lambda: 'S = "' + "a" * LINE + '"\n',
    "comment.rs (rust)": lambda: "// " + "ab " * (LINE // 3) + "\n",
    "string.cpp (cpp)": lambda: 'const char* s = "' + "xY" * (LINE // 2) + '";\n',
    "minified.py (python)": lambda: "; ".join(f"a{i} = {i}" for i in range(LINE // 12)) + "\n",
}


def _jobs(root: Path) -> list[indexer.Job]:
    settings = config.resolve(root)
    jobs = [
        indexer.Job(
            str(path.relative_to(root)),
            str(path),
            language,
            size,
            0,
            None,
            True,
            str(settings.root),
            settings.max_file_size,
        )  # fmt: skip
        for path, language, size in common.indexed_files(root)
    ]
    return sorted(jobs, key=lambda job: -job.size)


def _with_pool(jobs: list[indexer.Job]) -> int:
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        return sum(1 for _ in pool.imap_unordered(indexer.read_and_extract, jobs, chunksize=4))


def _with_run_all(jobs: list[indexer.Job]) -> int:
    results = run_all(indexer.read_and_extract, jobs, 2, on_crash=indexer._crashed)
    return sum(1 for _ in results)


def pools(root: Path, runs: int) -> str:
    jobs = _jobs(root)
    timings: dict[str, list[float]] = {"multiprocessing.Pool": [], "workers.run_all": []}
    for _ in range(runs):
        for name, run in (("multiprocessing.Pool", _with_pool), ("workers.run_all", _with_run_all)):
            started = time.perf_counter()
            assert run(jobs) == len(jobs)
            timings[name].append(time.perf_counter() - started)
    rows = [
        [name, common.fmt_seconds(common.median(values)),
         f"{common.fmt_seconds(min(values))} – {common.fmt_seconds(max(values))}"]
        for name, values in timings.items()
    ]  # fmt: skip
    header = f"extraction of {common.fmt_count(len(jobs))} files, 2 workers, {runs} runs"
    return header + "\n\n" + common.markdown_table(["pool", "median", "range"], rows, "lrr")


def hostile() -> str:
    folder = common.scratch_dir()
    rows = []
    try:
        for name, make in HOSTILE.items():
            file_name, language = name.split(" ")
            path = folder / file_name
            path.write_text(make())
            job = indexer.Job(file_name, str(path), language.strip("()"), path.stat().st_size,
                              0, None, True, str(folder), 10 * LINE)  # fmt: skip
            started = time.perf_counter()
            result = indexer.read_and_extract(job)
            seconds = time.perf_counter() - started
            kept = getattr(result, "reason", None) or (
                f"{len(result.symbols):,} symbols, {len(result.texts):,} texts"
            )
            rows.append([name, common.fmt_bytes(path.stat().st_size), common.fmt_seconds(seconds),
                         kept])  # fmt: skip
    finally:
        shutil.rmtree(folder)
    return common.markdown_table(["one-line file", "size", "extract", "rows"], rows, "lrrl")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="python", choices=sorted(common.CORPORA))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv or [])
    root = common.materialize([args.corpus])[args.corpus]
    print(f"# reliability costs ({args.corpus}, load average {os.getloadavg()[0]:.1f})\n")
    print(pools(root, args.runs))
    print()
    print(hostile())


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
