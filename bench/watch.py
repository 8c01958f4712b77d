"""Edit -> searchable with `repomap watch` on Django: the time from a file's write to the moment
its new text is found by a full-text search of the index.

A copy of the Django corpus (the corpus itself is never written) is indexed once, then
`repomap watch` runs on it in a subprocess, as a user runs it. Each round appends a comment
holding a word found nowhere else to a different source file and polls the index (read-only
SQLite, FTS5 MATCH on code_text_fts, every 5 ms) until the word is found; the time from the write
to that moment is one sample. Rounds are spaced so each edit is its own batch.

    python bench/watch.py [--rounds 30] [--debounce 50]

Prints the median, p95 and max, and the watch lines' own run times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import common

from repomap import store

POLL_SECONDS = 0.005
TIMEOUT_SECONDS = 30.0
FOUND_SQL = "SELECT 1 FROM code_text_fts WHERE code_text_fts MATCH ? LIMIT 1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--debounce", type=int, default=50)
    args = parser.parse_args()
    corpus = common.materialize(["python"])["python"]
    with tempfile.TemporaryDirectory(prefix="repomap-watch-bench-") as scratch:
        root = Path(scratch) / "django"
        shutil.copytree(corpus, root, ignore=shutil.ignore_patterns(".repomap"), symlinks=True)
        indexed = subprocess.run(
            [*common.repomap_command(), "index", str(root), "--json"],
            capture_output=True,
            text=True,
        )
        assert indexed.returncode == 0, indexed.stderr
        every = sorted((root / "django").rglob("*.py"))
        files = every[:: max(1, len(every) // args.rounds)]
        process = subprocess.Popen(
            [*common.repomap_command(), "watch", str(root), "--json", "--no-embed",
             "--debounce", str(args.debounce)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        updates: list[dict] = []
        first = threading.Event()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                updates.append(json.loads(line))
                first.set()

        threading.Thread(target=read, daemon=True).start()
        first.wait(120)
        reader = store.KeptReader(root / ".repomap" / "index.db")
        samples = []
        try:
            for number, path in enumerate(files[: args.rounds]):
                word = f"zqwatchbench{number}x{os.getpid()}"
                time.sleep(0.5)  # the previous round's batch is over
                started = time.perf_counter()
                with open(path, "a", encoding="utf-8") as file:
                    file.write(f"\n# {word}\n")
                while time.perf_counter() - started < TIMEOUT_SECONDS:
                    with reader.snapshot() as db:
                        if db.scalar(FOUND_SQL, (word,)):
                            break
                    time.sleep(POLL_SECONDS)
                samples.append(time.perf_counter() - started)
        finally:
            process.terminate()
            process.wait(30)
            reader.close()
    samples.sort()
    p95 = samples[max(0, round(0.95 * len(samples)) - 1)]
    runs = sorted(u["seconds"] for u in updates if not u["first"])
    print(f"Django copy, {len(samples)} edits, debounce {args.debounce} ms, {os.cpu_count()} cores")
    print(
        common.markdown_table(
            ["measure", "median", "p95", "max"],
            [
                [
                    "edit -> searchable",
                    *(f"{v:.3f} s" for v in (statistics.median(samples), p95, samples[-1])),
                ],  # fmt: skip
                [
                    "watch's index run",
                    *(
                        f"{v:.3f} s"
                        for v in (
                            statistics.median(runs),
                            runs[max(0, round(0.95 * len(runs)) - 1)],
                            runs[-1],
                        )
                    ),
                ],  # fmt: skip
            ],
        )
    )


if __name__ == "__main__":
    main()
