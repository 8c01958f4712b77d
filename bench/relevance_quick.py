"""bench/relevance.py's search figures in one process, in ~10 s instead of minutes, for trying a
ranking change: Recall@10 / MRR@10 for all, tune, heldout and each corpus, and which questions'
ranks moved against a saved run.

    REPOMAP_BENCH_DIR=COPY python bench/relevance_quick.py --save /tmp/before.json
    REPOMAP_BENCH_DIR=COPY python bench/relevance_quick.py --against /tmp/before.json
    REPOMAP_BENCH_DIR=COPY python bench/relevance_quick.py --mode lexical

search/code.py's search_code on the indexes bench/relevance.py left (run it once first: it
brings them up to date), the harness's hit rule; the figures equal the CLI's to the digit
(bench/README.md). Unrounded MRR, so a one-rank move shows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import relevance

from repomap import store
from repomap.search import code


def bench_dir() -> Path:
    base = os.environ.get("REPOMAP_BENCH_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "repomap-bench") / "relevance"


def ranks_of(questions: Sequence[relevance.Question], mode: str) -> dict[str, int | None]:
    """Question id -> the rank of its first hit in the top 10 (None: not there)."""
    ranks: dict[str, int | None] = {}
    for corpus in dict.fromkeys(q.corpus for q in questions):
        with store.reading(bench_dir() / f"{corpus}.db") as db:
            for q in (q for q in questions if q.corpus == corpus):
                hits = code.search_code(db, q.question, mode=mode, limit=10, log=False).hits
                spans = [relevance.Span(h.path, h.start_line, h.end_line) for h in hits]
                ranks[q.id] = relevance.first_hit_rank(spans, q.answers)
    return ranks


def cell(ranks: Sequence[int | None]) -> str:
    return f"{relevance.recall(ranks):.2f} / {relevance.mrr(ranks):.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", default="hybrid", choices=code.MODES)
    parser.add_argument("--save", type=Path, help="write each question's rank here (JSON)")
    parser.add_argument("--against", type=Path, help="list the ranks that differ from this run")
    args = parser.parse_args(argv)
    questions = relevance.load_questions()
    ranks = ranks_of(questions, args.mode)
    line = [f"all {cell(list(ranks.values()))}"]
    line += [
        f"{s} {cell([ranks[q.id] for q in questions if q.split == s])}" for s in ("tune", "heldout")
    ]
    print(" | ".join(line))
    corpora = dict.fromkeys(q.corpus for q in questions)
    print(
        "  ".join(f"{c} {cell([ranks[q.id] for q in questions if q.corpus == c])}" for c in corpora)
    )
    if args.against:
        before = json.loads(args.against.read_text())
        for q in questions:
            if before.get(q.id) != ranks[q.id]:
                print(f"  {q.id} ({q.split}): {before.get(q.id)} -> {ranks[q.id]}")
    if args.save:
        args.save.write_text(json.dumps(ranks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
