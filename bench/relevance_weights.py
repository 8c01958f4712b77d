"""Hybrid search's fusion weight (the cosine's share, search/code.py SEMANTIC_WEIGHT) per
language and per question kind, in one process: for trying a weight chosen by a question's
language or shape on the tune half and reading it on the heldout half.

    cd bench && REPOMAP_BENCH_DIR=COPY python relevance_weights.py 0.2,0.3,0.4,0.5,0.6,0.7

One line per weight: Recall@10 / MRR@10 (unrounded) on tune and heldout, then per language
(py: Django, requests, click; rs: Rust std, regex; cpp: LLVM, spdlog) and per kind, each as tune
and heldout (ho). The indexes are the ones bench/relevance.py left (run it once first).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import relevance
from relevance_quick import bench_dir, cell

from repomap import store
from repomap.search import code

LANGUAGES = {"python": "py", "requests": "py", "click": "py", "rust": "rs", "regex": "rs",
             "cpp": "cpp", "spdlog": "cpp"}  # fmt: skip


def ranks(
    questions: Sequence[relevance.Question], weights: Sequence[float]
) -> dict[tuple[str, float], int | None]:
    """(question id, weight) -> the rank of the question's first hit in the hybrid top 10."""
    found: dict[tuple[str, float], int | None] = {}
    for corpus in dict.fromkeys(q.corpus for q in questions):
        with store.reading(bench_dir() / f"{corpus}.db") as db:
            for q in (q for q in questions if q.corpus == corpus):
                for weight in weights:
                    hits = code.search_code(
                        db, q.question, mode="hybrid", limit=10, log=False, semantic_weight=weight
                    ).hits
                    spans = [relevance.Span(h.path, h.start_line, h.end_line) for h in hits]
                    found[(q.id, weight)] = relevance.first_hit_rank(spans, q.answers)
    return found


def _every(question: relevance.Question) -> bool:
    return True


def _in_language(lang: str) -> Callable[[relevance.Question], bool]:
    return lambda question: LANGUAGES[question.corpus] == lang


def _of_kind(kind: str) -> Callable[[relevance.Question], bool]:
    return lambda question: question.kind == kind


def main(argv: list[str]) -> int:
    weights = [float(w) for w in (argv[0] if argv else "0.2,0.3,0.4,0.5,0.6").split(",")]
    questions = relevance.load_questions()
    found = ranks(questions, weights)
    groups: list[tuple[str, Callable[[relevance.Question], bool]]] = [("", _every)]
    groups += [(f"{lang}-", _in_language(lang)) for lang in ("py", "rs", "cpp")]
    groups += [(f"{kind}-", _of_kind(kind)) for kind in relevance.KINDS]
    for weight in weights:
        line = [f"w={weight}"]
        for name, wanted in groups:
            split = [
                cell([found[(q.id, weight)] for q in questions if wanted(q) and q.split == s])
                for s in ("tune", "heldout")
            ]
            line.append(f"{name}tune {split[0]} ho {split[1]}")
        print(" | ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
