"""The repo map on each corpus: how long a map takes once the index exists, and what it shows.

    python bench/map.py                          # all three corpora, 7 timed runs per figure
    python bench/map.py --corpus python --runs 11

Per corpus: a cold `repomap index` into a fresh temporary database (in-process, default
workers; the ranking is computed at its end and timed alone as "rank"), then `repomap.maps.
repo_map` in this process at 1024 and 4096 tokens, unpersonalized and personalized (one
--focus file and one --mention, picked from the stored ranking so every run asks the same
thing), each the median of --runs runs after one warm-up (numpy's import is not counted).
Each map's text goes to bench/results/map-<corpus>-<tokens>-<plain|personalized>.txt
(gitignored). Targets (issue 4): unpersonalized <= 100 ms, personalized <= 250 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import CORPORA, PROJECT_ROOT, fmt_seconds, markdown_table, materialize

from repomap import config
from repomap.index import pipeline as indexer
from repomap.index import ranking as ranks
from repomap.maps import render
from repomap.maps import repo_map as maps
from repomap.store import reading, writing

RESULTS = PROJECT_ROOT / "bench" / "results"
BUDGETS = (1024, 4096)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA))
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    roots = materialize(args.corpus or list(CORPORA))
    RESULTS.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, root in roots.items():
        rows.extend(_bench_corpus(name, root, args.runs))
    print(f"repo map, in-process, median of {args.runs} runs (range)\n")
    print(
        markdown_table(
            [
                "corpus",
                "index (cold)",
                "rank",
                "tokens",
                "map",
                "personalized",
                "shown (plain)",
                "est. tokens",
            ],
            rows,
            "llrrrrrr",
        )
    )
    return 0


def _bench_corpus(name: str, root: Path, runs: int) -> list[list[str]]:
    with tempfile.TemporaryDirectory(prefix="repomap-map-bench-") as scratch:
        db_path = Path(scratch) / "index.db"
        settings = config.resolve(root, db_path)
        started = time.perf_counter()
        indexer.run(settings)
        cold = time.perf_counter() - started
        with writing(db_path) as db:
            started = time.perf_counter()
            ranks.refresh_ranks(db, force=True)
            ranking = time.perf_counter() - started
        with reading(db_path) as db:
            focus, mention = _personalization(db)
            rows = []
            for tokens in BUDGETS:
                plain, plain_map = _timed(runs, lambda t=tokens: maps.repo_map(db, t))
                personal, personal_map = _timed(
                    runs, lambda t=tokens: maps.repo_map(db, t, [focus], [mention])
                )
                for kind, result in (("plain", plain_map), ("personalized", personal_map)):
                    (RESULTS / f"map-{name}-{tokens}-{kind}.txt").write_text(result.text)
                shown = sum(1 for f in plain_map.files for s in f.symbols if not s.header)
                rows.append(
                    [
                        CORPORA[name],
                        fmt_seconds(cold),
                        fmt_seconds(ranking),
                        str(tokens),
                        _spread(plain),
                        _spread(personal),
                        f"{len(plain_map.files)} files, {shown} symbols",
                        str(render.count_tokens(plain_map.text.removesuffix("\n"))),
                    ]
                )
        print(f"{name}: personalized with --focus {focus} --mention {mention}", file=sys.stderr)
    return rows


def _personalization(db) -> tuple[str, str]:
    """A mid-ranked file to focus on and a mid-ranked definition to mention (deterministic)."""
    path = db.conn.execute("""SELECT f.path FROM file_ranks r JOIN files f ON f.id = r.file_id
        ORDER BY r.rank DESC, f.path LIMIT 1 OFFSET 20""").fetchone()[0]
    name = db.conn.execute("""SELECT s.name FROM symbol_ranks r JOIN symbols s ON s.id = r.symbol_id
        ORDER BY r.rank DESC, s.id LIMIT 1 OFFSET 50""").fetchone()[0]
    return path, name


def _timed(runs: int, make):
    result = make()  # warm-up: imports, page cache
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        result = make()
        seconds.append(time.perf_counter() - started)
    return seconds, result


def _spread(seconds: list[float]) -> str:
    return f"{fmt_seconds(statistics.median(seconds))} ({fmt_seconds(min(seconds))}–{fmt_seconds(max(seconds))})"


if __name__ == "__main__":
    sys.exit(main())
