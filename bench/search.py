"""search_text latency: 200 sampled queries per class on one index of all three corpora.

    python bench/search.py                 # build or reuse the index, then measure (~2 min warm)
    python bench/search.py --fresh         # rebuild the index first
    python bench/search.py --per-class 50  # fewer queries
    python bench/search.py --db INDEX.db    # an index already built (the Linux kernel's, say)

The index lives in ~/.cache/repomap-bench/search/ (or $REPOMAP_BENCH_DIR): `root/` holds
hard-linked copies (`cp -al`) of the Django, Rust std and LLVM corpora, because discovery
follows symlinks only inside the root; `repomap index` brings `index.db` up to date (a no-op
when nothing changed), so later runs reuse it.

Queries are sampled with a fixed seed from the indexed text itself (random code_text rows,
then words or substrings of them; so frequent words come up as often as in the text), and
each class also holds the most frequent words of the index:

| class | a query is |
| --- | --- |
| single | one word |
| AND | two words of one element, `a b` |
| phrase | 2-3 consecutive words of one element, quoted |
| prefix | the first 3 or more characters of a word of 4+, then `*` |
| OR | `a OR b` |
| NOT | `a NOT b` |
| literal | a 4-30 character substring of one element, `--literal` |
| literal <3 | a 1-2 character substring (no trigram: scanned), reported apart |

Each query runs once unmeasured (warm page cache), then once measured: wall time of the
search_text() call in this process, and its CPU time (thread_time; steadier than wall on a
shared machine). "capped" is the share of queries that matched more than RANK_CAP elements,
so only the first RANK_CAP in index order were ranked. Then the real CLI end to end
(`repomap search-text Q --json --db …`, median of --cli-runs) beside ripgrep over the same
trees, and `python -c pass` as the interpreter's floor.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import common

from repomap import config, store
from repomap.index import pipeline as indexer
from repomap.search import querylang
from repomap.search import text as query
from repomap.search.text import search_text

SEED = 20261121
CLASSES = ("single", "AND", "phrase", "prefix", "OR", "NOT", "literal", "literal <3")
FREQUENT = 20  # most frequent words put into every class
SHORT_LITERALS = 50
CLI_QUERIES = [  # (label, repomap args, rg args)
    ("frequent word", ["the"], ["-i", "-w", "-c", "the"]),
    ("two words", ["connection timeout"], ["-i", "-c", "connection.*timeout"]),
    ("phrase", ['"end of file"'], ["-i", "-c", "end of file"]),
    ("literal", ["Failed to open", "--literal"], ["-F", "-c", "Failed to open"]),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", action="store_true", help="rebuild the index")
    parser.add_argument("--per-class", type=int, default=200)
    parser.add_argument("--cli-runs", type=int, default=15)
    parser.add_argument(
        "--db", type=Path, help="measure this index as it is (no corpora, nothing re-indexed)"
    )
    args = parser.parse_args(argv)
    if args.db:
        db_path = args.db
        with store.reading(db_path) as db:
            root = Path(store.get_meta(db, "root") or ".")
        what = f"`{db_path}` (root {root})"
    else:
        root, db_path = prepare(args.fresh)
        what = "Django + Rust std + LLVM headers"
    with store.reading(db_path) as db:
        rows = db.conn.execute("SELECT count(*) FROM code_text").fetchone()[0]
        lines = db.conn.execute("SELECT sum(line_count) FROM files").fetchone()[0]
        queries = sample(db, args.per_class)
        table = measure(db, queries)
    size = common.database_bytes(db_path)
    print(f"## search_text on {what} ({rows:,} elements, {lines:,} lines, "
          f"database {common.fmt_bytes(size)} = {size / common.MB / lines * 10_000:.2f} MB per 10k lines)\n")  # fmt: skip
    print(table)
    print()
    print(cli_table(root, db_path, args.cli_runs))
    return 0


def prepare(fresh: bool) -> tuple[Path, Path]:
    """The three corpora hard-linked under one root, indexed (incrementally) into index.db."""
    corpora = common.materialize(["python", "rust", "cpp"])
    base = Path(
        os.environ.get("REPOMAP_BENCH_DIR", Path.home() / ".cache" / "repomap-bench" / "search")
    )
    root, db_path = base / "root", base / "index.db"
    if fresh:
        common.remove_database(db_path)
    root.mkdir(parents=True, exist_ok=True)
    for name, source in corpora.items():
        if not (root / name).exists():  # hard links: no copy of the bytes, same file system
            subprocess.run(["cp", "-al", str(source), str(root / name)], check=True)
    started = time.perf_counter()
    summary = indexer.run(config.resolve(root, db_path))
    print(f"index: {summary.files} files, {summary.added + summary.modified} (re)indexed in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)  # fmt: skip
    return root, db_path


# --- queries -------------------------------------------------------------------------------------


def sample(db, per_class: int) -> dict[str, list[tuple[str, str]]]:
    """{class: [(query, mode)]}, the same for the same index and seed."""
    rng = random.Random(SEED)
    conn = db.conn
    ids = [row[0] for row in conn.execute("SELECT id FROM code_text ORDER BY id")]
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, code_text_fts, row)"
    )
    frequent = [
        row[0]
        for row in conn.execute(
            "SELECT term FROM temp.vocab ORDER BY doc DESC, term LIMIT ?", (FREQUENT,)
        )
    ]
    long_frequent = [row[0] for row in conn.execute(
        "SELECT term FROM temp.vocab WHERE length(term) >= 4 ORDER BY doc DESC, term LIMIT ?", (FREQUENT,))]  # fmt: skip

    def content() -> str:
        return conn.execute(
            "SELECT content FROM code_text WHERE id = ?", (rng.choice(ids),)
        ).fetchone()[0]

    def words(minimum: int = 1) -> list[str]:
        while True:
            found = [w for w in querylang.words_of(content()) if len(w) >= 1]
            if len(found) >= minimum:
                return found

    def word() -> str:
        return rng.choice(words())

    def pick(make, count: int) -> list[str]:
        return [make() for _ in range(count)]

    rest = per_class - FREQUENT
    classes: dict[str, list[str]] = {}
    classes["single"] = frequent + pick(word, rest)
    classes["AND"] = [f"{a} {b}" for a, b in _pairs(frequent, 1)] + pick(
        lambda: " ".join(rng.sample(words(2), 2)), rest)  # fmt: skip
    classes["phrase"] = [f'"{a} {b}"' for a, b in _pairs(frequent, 1)] + pick(
        lambda: _phrase(rng, words(2)), rest)  # fmt: skip
    classes["prefix"] = [w[:3] + "*" for w in long_frequent] + pick(
        lambda: _prefix(rng, words), rest
    )
    classes["OR"] = [f"{a} OR {b}" for a, b in _pairs(frequent, 2)] + pick(
        lambda: f"{word()} OR {word()}", rest)  # fmt: skip
    classes["NOT"] = [f"{a} NOT {b}" for a, b in _pairs(frequent, 3)] + pick(
        lambda: f"{word()} NOT {word()}", rest)  # fmt: skip
    sampled = {name: [(q, "fts") for q in queries] for name, queries in classes.items()}
    common = [(w, "literal") for w in frequent if len(w) >= 3]
    sampled["literal"] = common + [
        (_substring(rng, content, 4, 30), "literal") for _ in range(per_class - len(common))
    ]
    sampled["literal <3"] = [
        (_substring(rng, content, 1, 2), "literal") for _ in range(SHORT_LITERALS)
    ]
    return sampled


def _pairs(words: list[str], shift: int) -> list[tuple[str, str]]:
    return [(word, words[(i + shift) % len(words)]) for i, word in enumerate(words)]


def _phrase(rng: random.Random, found: list[str]) -> str:
    size = min(len(found), rng.choice((2, 3)))
    start = rng.randrange(len(found) - size + 1)
    return '"' + " ".join(found[start : start + size]) + '"'


def _prefix(rng: random.Random, words) -> str:
    while True:
        long = [w for w in words() if len(w) >= 4]
        if long:
            chosen = rng.choice(long)
            return chosen[: rng.randint(3, len(chosen) - 1)] + "*"


def _substring(rng: random.Random, content, shortest: int, longest: int) -> str:
    while True:
        text = content()
        if len(text.strip()) < shortest:
            continue
        size = rng.randint(shortest, min(longest, len(text)))
        start = rng.randrange(len(text) - size + 1)
        piece = text[start : start + size]
        if piece.strip() and "\0" not in piece:
            return piece


# --- measuring -----------------------------------------------------------------------------------


@dataclass
class ClassTimes:
    """One query class's measured queries: milliseconds, match counts, capped and failed."""

    name: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    results: list[int] = field(default_factory=list)
    capped: int = 0
    failed: int = 0


def latency(db_path: Path, per_class: int) -> tuple[float, str]:
    """search_text's p95 in ms over every class but the scanned short literals, on an index as
    it is, and the table by class (bench/run.py prints both for the Linux kernel)."""
    with store.reading(db_path) as db:
        times = time_queries(db, sample(db, per_class))
    return p95_all(times), table(times)


def measure(db: store.Store, queries: dict[str, list[tuple[str, str]]]) -> str:
    return table(time_queries(db, queries))


def time_queries(db: store.Store, queries: dict[str, list[tuple[str, str]]]) -> list[ClassTimes]:
    """Each query once unmeasured (warm pages), then once timed, class by class."""
    measured = []
    for name in CLASSES:
        times = ClassTimes(name)
        for text, mode in queries[name]:
            try:
                search_text(db, text, mode=mode, log=False)  # warm the pages this query reads
                started, started_cpu = time.perf_counter(), time.thread_time()
                result = search_text(db, text, mode=mode, log=False)
            except Exception:  # noqa: BLE001 - a sampled query that fails is counted, not fatal
                times.failed += 1
                continue
            times.cpu.append((time.thread_time() - started_cpu) * 1000)
            times.wall.append((time.perf_counter() - started) * 1000)
            times.results.append(result.total)
            times.capped += not result.total_exact
        measured.append(times)
    return measured


def _all_but_short(measured: list[ClassTimes]) -> tuple[list[float], list[float]]:
    """Wall and CPU ms of every query but the scanned short literals."""
    kept = [times for times in measured if times.name != "literal <3"]
    return [ms for t in kept for ms in t.wall], [ms for t in kept for ms in t.cpu]


def p95_all(measured: list[ClassTimes]) -> float:
    """The p95 of wall ms over every class but the scanned short literals."""
    return common.percentile(_all_but_short(measured)[0], 95)


def table(measured: list[ClassTimes]) -> str:
    rows = []
    for t in measured:
        wall, cpu = t.wall, t.cpu
        rows.append([
            t.name, len(wall), f"{common.percentile(wall, 50):.2f}", f"{common.percentile(wall, 95):.2f}",
            f"{max(wall):.2f}", f"{common.percentile(cpu, 95):.2f}", f"{max(cpu):.2f}",
            f"{statistics.median(t.results):.0f}", f"{100 * t.capped / len(wall):.0f}%", t.failed,
        ])  # fmt: skip
    every_wall, every_cpu = _all_but_short(measured)
    rows.append([
        "**all but literal <3**", len(every_wall), f"{common.percentile(every_wall, 50):.2f}",
        f"**{common.percentile(every_wall, 95):.2f}**", f"{max(every_wall):.2f}",
        f"{common.percentile(every_cpu, 95):.2f}", f"{max(every_cpu):.2f}", "", "", "",
    ])  # fmt: skip
    headers = ["class", "queries", "p50 ms", "p95 ms", "max ms", "CPU p95 ms", "CPU max ms",
               "median matches", "capped", "failed"]  # fmt: skip
    note = (f"\n\nIn-process search_text(), limit 20, one warm-up run per query; RANK_CAP = "
            f"{query.RANK_CAP}, LITERAL_CAP = {query.LITERAL_CAP}.")  # fmt: skip
    return common.markdown_table(headers, rows, "lrrrrrrrrr") + note


def cli_table(root: Path, db_path: Path, runs: int) -> str:
    repomap = common.repomap_command()
    rg = shutil.which("rg")
    env = {**os.environ, "REPOMAP_SEARCH_LOG": "0"}
    start_up = _median_ms([sys.executable, "-c", "pass"], runs, env)
    rows = [["`python -c pass`", *start_up, "", "", ""]]
    for label, args, rg_args in CLI_QUERIES:
        ours = _median_ms(  # exit 1: nothing found in this index, a valid answer
            [*repomap, "search-text", *args, "--json", "--db", str(db_path)], runs, env, ok=(0, 1)
        )
        above = _difference(ours[0], start_up[0])
        theirs = (
            _median_ms([rg, "--no-config", *rg_args, str(root)], runs, env, ok=(0, 1))
            if rg
            else ("-", "-")
        )
        rows.append([f"{label}: `{' '.join(args)}`", *ours, above, *theirs])
    headers = ["query", "repomap wall ms", "repomap CPU ms", "above `python -c pass`", "rg wall ms",
               "rg CPU ms"]  # fmt: skip
    return (common.markdown_table(headers, rows, "lrrrrr")
            + f"\n\nEnd to end, median of {runs} runs each after one warm-up (CPU: user + system of the "
            "process and its children); rg counts matches per file (`-c`) over the same hard-linked "
            "trees, with its default threads. 'Above `python -c pass`' is repomap's median wall time "
            "minus the bare interpreter's, measured in the same run: what repomap itself adds, "
            "comparable across hosts whose interpreter start-up differs.")  # fmt: skip


def _difference(ms: str, base_ms: str) -> str:
    try:
        return f"{float(ms) - float(base_ms):.1f}"
    except ValueError:  # a failed run reports its error instead of a time
        return "-"


def _median_ms(
    command: list[str], runs: int, env: dict, ok: tuple[int, ...] = (0,)
) -> tuple[str, str]:
    subprocess.run(command, env=env, capture_output=True)  # warm-up
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True)
        wall.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
        if done.returncode not in ok:
            return f"failed ({done.returncode})", done.stderr.decode()[:80]
    return f"{statistics.median(wall):.1f}", f"{statistics.median(cpu):.1f}"


if __name__ == "__main__":
    sys.exit(main())
