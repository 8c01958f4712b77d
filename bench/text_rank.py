"""What fills search_text's top 10 on plain questions: before and after the weighing of tiny
string literals and test files (issue 16).

    python bench/text_rank.py                    # Django, the questions below
    python bench/text_rank.py --corpus rust
    python bench/text_rank.py --show             # also print each top 10

The index is ~/.cache/repomap-bench/mcp/<corpus>.db (or $REPOMAP_BENCH_DIR), as
bench/mcp_calls.py keeps it; `repomap index` brings it up to date first.

"Before" is BM25 alone, which search_text still ranks by when a query filters by path: each
question is asked again with `path="**"` (every file, so the same rows match). "After" is the
default. Per question, the top 10's composition: string literals of at most two words ("tiny",
`'csrf_token'`, `'TIME_ZONE'`), elements of test, benchmark or example files ("test",
`paths.is_demoted_path`), and the rest; and the median milliseconds over --runs calls of the
ranking step alone (`text._ranked`, unfiltered), BM25 alone and weighed: what weighing costs.
The same elements must match either way: the script checks that the totals agree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import common

from repomap import config, paths, store
from repomap.index import pipeline as indexer
from repomap.search import querylang, text
from repomap.search.text import TINY_LITERAL_WORDS, search_text

QUESTIONS = {
    "python": [
        "csrf token",
        "cache key",
        "time zone",
        "session expiry",
        "database connection",
        "password hash",
        "template loader",
        "migration dependencies",
        "form validation error",
        "static files storage",
        "email backend",
        "url resolver",
    ],
    "rust": [
        "heap allocation",
        "thread local storage",
        "file descriptor",
        "utf8 string",
        "hash map capacity",
        "mutex poison",
    ],
    "cpp": [
        "register allocation",
        "debug info",
        "basic block",
        "instruction selection",
        "pass manager",
        "target machine",
    ],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(QUESTIONS), default="python")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--show", action="store_true", help="print each top 10")
    args = parser.parse_args(argv)
    root = common.materialize([args.corpus])[args.corpus]
    base = Path(os.environ.get("REPOMAP_BENCH_DIR", Path.home() / ".cache" / "repomap-bench"))
    db_path = base / "mcp" / f"{args.corpus}.db"
    db_path.parent.mkdir(parents=True, exist_ok=True)
    indexer.run(config.resolve(root, db_path))
    rows, totals = [], {"before": [0, 0, 0], "after": [0, 0, 0]}
    with store.reading(db_path) as db:
        for question in QUESTIONS[args.corpus]:
            row = [f"`{question}`"]
            totals_seen = set()
            for label, path in (("before", "**"), ("after", None)):
                result = search_text(db, question, limit=10, path=path, log=False)
                ms = _ranking_ms(db, question, label == "after", args.runs)
                totals_seen.add(result.total)
                tiny, test, rest = _composition(result.hits)
                for i, count in enumerate((tiny, test, rest)):
                    totals[label][i] += count
                row += [f"{tiny} / {test} / {rest}", f"{ms:.1f}"]
                if args.show:
                    print(f"\n{question} ({label}):", file=sys.stderr)
                    for hit in result.hits:
                        print(f"  {hit.rank:.3f} {hit.element_type:14} {hit.file_path}:"
                              f"{hit.line_number} {hit.content[:60]!r}", file=sys.stderr)  # fmt: skip
            if len(totals_seen) != 1:
                raise SystemExit(f"{question}: the matches differ ({totals_seen})")
            rows.append(row)
    rows.append(
        ["**all**"]
        + [
            cell
            for label in ("before", "after")
            for cell in (" / ".join(str(n) for n in totals[label]), "")
        ]
    )
    print(f"## search_text top 10 on {common.CORPORA[args.corpus]}: tiny literals / test files "
          f"/ the rest; ranking ms (median of {args.runs} in-process calls)\n")  # fmt: skip
    print(
        common.markdown_table(
            ["question", "before: tiny / test / rest", "ms", "after: tiny / test / rest", "ms"],
            rows,
            "lrrrr",
        )
    )
    return 0


def _ranking_ms(db: store.Store, question: str, weighed: bool, runs: int) -> float:
    """Median ms of the ranking step alone (text._ranked), BM25 alone or weighed: a path
    filter's own cost (it is how "before" is asked) stays out of the comparison."""
    parsed = querylang.parse(question)
    filters = text._filters(db, "all", None, None)
    times = []
    for _ in range(runs + 1):  # the first warms the page cache
        started = time.perf_counter()
        text._ranked(db.conn, parsed, filters, 10, weighed)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times[1:])


def _composition(hits) -> tuple[int, int, int]:
    """(tiny literals, test-file elements, neither) among `hits`."""
    tiny = test = either = 0
    for hit in hits:
        is_tiny = (
            hit.element_type == "string_literal"
            and len(querylang.words_of(hit.content)) <= TINY_LITERAL_WORDS
        )
        is_test = paths.is_demoted_path(hit.file_path)
        tiny += is_tiny
        test += is_test
        either += is_tiny or is_test
    return tiny, test, len(hits) - either


if __name__ == "__main__":
    sys.exit(main())
