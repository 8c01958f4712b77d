"""Why an answer is not at rank 1 (issue 17): what `repomap search`'s ranked lists hold.

    REPOMAP_BENCH_DIR=COPY python bench/failures.py                 # every question not at rank 1
    REPOMAP_BENCH_DIR=COPY python bench/failures.py --corpus rust --id rust-vec-growth

For each of bench/relevance.py's questions whose answer is not the first hybrid result (in
process: search/code.py's search_code, the harness's hit rule), prints the answer's rank in
hybrid, lexical and semantic (within the first 100), the top 10 with each result's kind, size
and whether it is the answer's file, and the answer's own chunks: their kind, lines, whether
the hit rule counts them (a chunk far longer than the answer is not a hit), and which of the
question's search words (FTS5's stems) their title, head and body hold. This is the material
of the failure analysis in bench/README.md; the category of each question is judged by reading
it, not computed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import relevance

from repomap import store
from repomap.search import bm25, code
from repomap.store.postings import tokenizer

DEPTH = 100


def bench_dir() -> Path:
    base = os.environ.get("REPOMAP_BENCH_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "repomap-bench") / "relevance"


def rank_of(hits: list[code.CodeHit], answers: tuple[relevance.Span, ...]) -> int | None:
    spans = [relevance.Span(h.path, h.start_line, h.end_line) for h in hits]
    return relevance.first_hit_rank(spans, answers, top=len(spans))


def answer_chunks(db: store.Store, answers: tuple[relevance.Span, ...]) -> list[tuple]:
    """(id, path, start, end, kind, is_test) of every chunk overlapping an answer."""
    rows = []
    for a in answers:
        for owner in ("files f ON f.id = c.file_id", "doc_files f ON f.id = c.doc_id"):
            rows += db.conn.execute(
                "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, c.is_test FROM chunks c"
                f" JOIN {owner} WHERE f.path = ? AND c.start_line <= ? AND c.end_line >= ?",
                (a.path, a.end_line, a.start_line),
            ).fetchall()
    return rows


def report(db: store.Store, q: relevance.Question, split, show_all: bool) -> str | None:
    hybrid = code.search_code(db, q.question, mode="hybrid", limit=DEPTH, log=False).hits
    rank = rank_of(hybrid, q.answers)
    if rank == 1 and not show_all:
        return None
    lexical = code.search_code(db, q.question, mode="lexical", limit=DEPTH, log=False).hits
    semantic = code.search_code(db, q.question, mode="semantic", limit=DEPTH, log=False).hits
    terms = code.query_terms(q.question)
    stems = sorted({s for t in terms for s in split.tokens(t)})
    out = [
        f"## {q.id} [{q.corpus}, {q.kind}, {q.split}] {q.question}",
        f"hybrid {rank} / lexical {rank_of(lexical, q.answers)} / semantic "
        f"{rank_of(semantic, q.answers)}; stems: {' '.join(stems)}",
        "expected: " + ", ".join(f"{a.path}:{a.start_line}-{a.end_line}" for a in q.answers),
    ]
    answer_paths = {a.path for a in q.answers}
    for i, h in enumerate(hybrid[:10], 1):
        mark = "HIT " if rank == i else ("file" if h.path in answer_paths else "    ")
        out.append(
            f"  {i:2} {mark} {h.score:.3f} {h.kind:8} {h.path}:{h.start_line}-{h.end_line}"
            f" ({h.end_line - h.start_line + 1} l) {h.name}"
        )
    chunks = answer_chunks(db, q.answers)
    words = store.chunk_words(db, [c[0] for c in chunks])
    positions = {h.chunk_id: i for i, h in enumerate(hybrid, 1)}
    for chunk_id, path, start, end, kind, is_test in chunks:
        counted = relevance.is_hit(relevance.Span(path, start, end), q.answers)
        title, _place, head, body, name = words.get(chunk_id, ("", "", "", "", "?"))
        held = {
            col: [s for s in stems if s in set(split.tokens(text))]
            for col, text in (("title", title), ("head", head), ("body", body))
        }
        out.append(
            f"  answer chunk {kind} {name} {path}:{start}-{end} ({end - start + 1} l)"
            f" hit-rule={'yes' if counted else 'NO'} test={is_test}"
            f" hybrid-rank={positions.get(chunk_id, '-')} head={len(head)}c"
            f" | title:{','.join(held['title'])} head:{','.join(held['head'])}"
            f" body:{','.join(held['body'])}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append")
    parser.add_argument("--id", action="append")
    parser.add_argument("--all", action="store_true", help="rank-1 questions too")
    args = parser.parse_args(argv)
    questions = [
        q for q in relevance.load_questions()
        if (not args.corpus or q.corpus in args.corpus) and (not args.id or q.id in args.id)
    ]  # fmt: skip
    for corpus in dict.fromkeys(q.corpus for q in questions):
        db = store.open_index(bench_dir() / f"{corpus}.db", readonly=True)
        kept = bm25.prepare(db, code.COLUMN_WEIGHTS)
        assert kept is not None
        split = tokenizer(kept.postings.tokenize)
        for q in (q for q in questions if q.corpus == corpus):
            text = report(db, q, split, args.all)
            if text:
                print(text + "\n", flush=True)
        db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
