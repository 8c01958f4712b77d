"""The in-memory BM25 (repomap/search/bm25.py) against FTS5's bm25(): same candidates, same
scores, same order, and what each costs.

Every question of bench/relevance/questions.jsonl is asked of every index given (not only its
own corpus's: more word mixes), without a filter and with each of a kind, a language and a path
filter. For each, the lexical candidates (the pool of 300 search/code.py re-ranks) are compared:
chunk ids in order and scores to the bit, each pool's word coverage (search/code.py
`word_coverage`, the hybrid mode's reward for holding the question's words) to the bit, then
`search_code --mode lexical`'s top 10. The
indexes are opened read-only through a KeptReader, as the MCP server opens them.

    python bench/bm25_parity.py [DB ...]   (default: $REPOMAP_BENCH_DIR/relevance/*.db)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

from repomap import store
from repomap.search import bm25
from repomap.search.code import (
    CANDIDATES,
    COLUMN_WEIGHTS,
    lexical_scores,
    make_filters,
    query_terms,
    search_code,
    word_coverage,
)
from repomap.store import Store

QUESTIONS = Path(__file__).parent / "relevance" / "questions.jsonl"
BENCH_DIR = Path(
    os.environ.get("REPOMAP_BENCH_DIR", Path.home() / ".cache" / "repomap-bench-emb")
).expanduser()
FILTERS = {  # name -> make_filters arguments, the first file's folder filled in per index
    "none": {},
    "kind": {"kind": "function,method"},
    "lang": {"language": "{language}"},
    "path": {"path": "{folder}"},
}


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1000
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dbs", nargs="*", type=Path)
    args = parser.parse_args()
    dbs = args.dbs or sorted((BENCH_DIR / "relevance").glob("*.db"))
    asked = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line]
    print(f"{len(asked)} questions x {len(dbs)} indexes x {len(FILTERS)} filters")
    bm25.SETTLE_SECONDS = 0.0
    differences = 0
    for db_path in dbs:
        reader = store.KeptReader(db_path)
        with reader.snapshot() as db:
            plain = Store(db.conn, db.path)  # the same snapshot, no state: the SQL path
            before = rss_mb()
            started = time.perf_counter()
            kept = bm25.prepared(db, COLUMN_WEIGHTS, wait=True)  # read in a thread
            build = time.perf_counter() - started
            grown = rss_mb() - before
            assert kept is not None
            language, folder = db.conn.execute(
                "SELECT language, path FROM files ORDER BY id LIMIT 1"
            ).fetchone()
            folder = folder.rsplit("/", 1)[0] + "/" if "/" in folder else folder
            sql_ms: list[float] = []
            memory_ms: list[float] = []
            coverage_ms: tuple[list[float], list[float]] = ([], [])
            compared = top_compared = 0
            for name, arguments in FILTERS.items():
                filled = {
                    k: v.format(language=language, folder=folder) for k, v in arguments.items()
                }
                filters = make_filters(db, **filled)
                for question in asked:
                    terms = query_terms(question)
                    clock = time.perf_counter()
                    expected = lexical_scores(plain, terms, filters, CANDIDATES)
                    sql_ms.append((time.perf_counter() - clock) * 1000)
                    clock = time.perf_counter()
                    found = lexical_scores(db, terms, filters, CANDIDATES)
                    memory_ms.append((time.perf_counter() - clock) * 1000)
                    compared += 1
                    if list(found.items()) != list(expected.items()):
                        differences += 1
                        _explain(db_path.stem, name, question, expected, found)
                    if name == "none":
                        ids = list(expected)
                        clock = time.perf_counter()
                        want_share = word_coverage(plain, terms, ids)
                        coverage_ms[0].append((time.perf_counter() - clock) * 1000)
                        clock = time.perf_counter()
                        got_share = word_coverage(db, terms, ids)
                        coverage_ms[1].append((time.perf_counter() - clock) * 1000)
                        if want_share != got_share:
                            differences += 1
                            print(f"  {db_path.stem} {question!r}: word coverage differs")
                        top_compared += 1
                        want = search_code(plain, question, mode="lexical").hits
                        got = search_code(db, question, mode="lexical").hits
                        if want != got:
                            differences += 1
                            print(f"  {db_path.stem} {question!r}: top 10 differ")
        reader.close()
        print(
            f"{db_path.stem}: {len(kept.postings.rowids):,} chunks, {len(kept.postings.terms):,}"
            f" terms, {len(kept.postings.rows):,} postings; prepared in {build:.2f} s, arrays"
            f" {kept.nbytes / 1e6:.1f} MB, RSS +{grown:.1f} MB; {compared} candidate pools and"
            f" {top_compared} top-10s compared; lexical p50/p95 SQL"
            f" {statistics.median(sql_ms):.2f}/{_p95(sql_ms):.2f} ms, in memory"
            f" {statistics.median(memory_ms):.2f}/{_p95(memory_ms):.2f} ms; word coverage"
            f" p50/p95 SQL {statistics.median(coverage_ms[0]):.2f}/{_p95(coverage_ms[0]):.2f} ms,"
            f" in memory {statistics.median(coverage_ms[1]):.2f}/{_p95(coverage_ms[1]):.2f} ms"
        )
        bm25.forget()
    print(f"differences: {differences}")
    return 1 if differences else 0


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def _explain(
    corpus: str,
    filter_name: str,
    question: str,
    expected: dict[int, tuple[float, bool, str]],
    found: dict[int, tuple[float, bool, str]],
) -> None:
    print(f"  {corpus} [{filter_name}] {question!r}: {len(expected)} vs {len(found)} candidates")
    for rank, (want, got) in enumerate(zip(expected.items(), found.items(), strict=False)):
        if want != got:
            print(f"    first difference at {rank}: SQL {want} memory {got}")
            break
    missing = set(expected) - set(found)
    extra = set(found) - set(expected)
    if missing or extra:
        print(f"    only SQL {sorted(missing)[:5]}, only memory {sorted(extra)[:5]}")


if __name__ == "__main__":
    sys.exit(main())
