"""Where a cold index's CPU goes: the parts the feature set and the design fix, one by one.

    python bench/budget.py [--runs N] [--corpus python,rust,cpp] [--root PATH]

The cold-index target of issue 2 is 2x the single-process tree-sitter parse (the floor) in
wall time, on this machine's 2 cores: at most 4x the floor in CPU seconds, and only if both
cores are busy from start to end and give twice one core's speed. Per corpus and run, in this
one process with the cycle collector paused (as the indexer runs), it measures CPU seconds of:
- the floor, as bench/run.py, and (wall time) the same parse split over 2 forked processes:
  the speed-up the cores really give, by which the fixed parts' bound is divided;
- the parse the design requires: `ast.parse` of every Python file (the design card names `ast`;
  a file it rejects is parsed by tree-sitter, as the indexer does), or tree-sitter's parse plus
  one traversal with the extractor's query (the one query Rust and C++ extraction runs);
- the whole extraction the workers do (`index.read_and_extract` on every file);
- the writer's SQL, on the rows of a real cold index: its files, symbols, refs and text rows
  inserted into a fresh database in batches of the indexer's size, then the FTS5 and trigram
  text indexes of each batch and their final merge (the statements `repomap.store.writer` runs);
- the ranking: compute_ranks and store_ranks with their caches emptied;
and a real cold `repomap index` (its CPU over all processes, and its wall time).
"""

from __future__ import annotations

import argparse
import ast
import gc
import multiprocessing
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import common
from common import fmt_seconds, markdown_table, median
from run import add_tree_options, check_trees, corpora, parse_floor

# The indexer's batch size; statements and SQL come from repomap itself.
from repomap import store
from repomap.config import DEFAULT_MAX_FILE_SIZE
from repomap.index import pipeline as indexer
from repomap.store import writer as writer_sql

COLD_VS_FLOOR = 3.0  # issue 20
CORES = 2
PARTS = (
    "floor",
    "floor_2",
    "parse",
    "extraction",
    "rows",
    "text",
    "ranking",
    "cold_cpu",
    "cold_wall",
)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    command = " ".join(["python", "bench/budget.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"# Where a cold index's CPU goes\n\n{args.runs} runs per corpus, medians; `{command}`\n")
    for corpus in corpora(args):
        name = corpus.name
        figures = measure(corpus.source, args.runs, lambda m, n=name: _progress(f"{n}: {m}"))
        print(report(name, corpus.label, figures), flush=True)
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per corpus (default 3)")
    add_tree_options(parser)
    args = parser.parse_args(argv)
    check_trees(parser, args)
    return args


def _progress(message: str) -> None:
    print(f"[budget] {message}", file=sys.stderr, flush=True)


def measure(root: Path, runs: int, progress: Callable[[str], None]) -> dict[str, list[float]]:
    """CPU seconds of each part (and the cold run's wall time), one entry per run."""
    figures: dict[str, list[float]] = defaultdict(list)
    scratch = common.scratch_dir("repomap-budget-")
    try:
        found = common.indexed_files(root)
        sources = [_source(root, path, language) for path, language, _ in found]
        jobs = [_job(root, path, language, size) for path, language, size in found]
        db = scratch / "index.db"
        was_enabled = gc.isenabled()
        for number in range(1, runs + 1):
            progress(f"run {number}/{runs}")
            common.remove_database(db)
            cold = common.timed(
                [*common.repomap_command(), "index", str(root), "--db", str(db), "--json"]
            ).check()
            figures["cold_cpu"].append(cold.cpu_seconds)
            figures["cold_wall"].append(cold.seconds)
            gc.disable()
            try:
                figures["floor"].append(parse_floor(sources)[1])
                figures["floor_2"].append(_floor_on_cores(sources))
                figures["parse"].append(_required_parse(sources))
                figures["extraction"].append(
                    _cpu(lambda: [indexer.read_and_extract(job) for job in jobs])
                )
                rows, text = _writer_sql(db, scratch / "fresh.db")
                figures["rows"].append(rows)
                figures["text"].append(text)
                figures["ranking"].append(_ranking(db, scratch / "ranked.db"))
            finally:
                if was_enabled:
                    gc.enable()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return figures


def _source(root: Path, path: Path, language: str) -> tuple[bytes, str]:
    """A file's bytes and the language the pipeline parses it as (a `.h`: language_of_header
    on its bytes), as run.py's floor reads it."""
    from repomap.languages import language_of_header

    source = path.read_bytes()
    return source, language_of_header(path.relative_to(root).as_posix(), language, source)


def _floor_on_cores(sources: list[tuple[bytes, str]]) -> float:
    """Wall seconds of the floor's parse split over CORES forked processes (every CORES-th file
    each): what this machine's cores give in parallel, measured rather than assumed."""
    context = multiprocessing.get_context("fork")
    started = time.perf_counter()
    processes = [
        context.Process(target=parse_floor, args=(sources[index::CORES],)) for index in range(CORES)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    return time.perf_counter() - started


def _job(root: Path, path: Path, language: str, size: int) -> indexer.Job:
    rel_path = path.relative_to(root).as_posix()
    mtime_ns = path.stat().st_mtime_ns
    return indexer.Job(
        rel_path,
        str(path),
        language,
        size,
        mtime_ns,
        None,
        True,
        str(root.resolve()),
        DEFAULT_MAX_FILE_SIZE,
    )


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    result = work()
    elapsed = time.process_time() - started
    del result
    return elapsed


def _required_parse(sources: list[tuple[bytes, str]]) -> float:
    """CPU of the parse each language's extraction cannot do without (see the module doc)."""
    from repomap.extractors import cpp, rust
    from repomap.extractors.treesitter import parse
    from tree_sitter import QueryCursor

    # The extractors' one query each (C is read by cpp.py with queries/c).
    queries = {"rust": rust._query(), "c": cpp._query("c"), "cpp": cpp._query("cpp")}
    started = time.process_time()
    for source, language in sources:
        if language == "python":
            text = source.decode("utf-8", "replace")
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = parse("python", source)
            del tree
        else:
            QueryCursor(queries[language]).captures(parse(language, source))
    return time.process_time() - started


def _writer_sql(built: Path, fresh: Path) -> tuple[float, float]:
    """CPU of the writer's SQL on `built`'s rows: (inserting the rows, indexing their text)."""
    common.remove_database(fresh)
    source = store.open_index(built, readonly=True)
    by_file: dict[str, dict[int, list[tuple]]] = {}
    for table, key in (
        ("files", "id"),
        ("symbols", "file_id"),
        ("refs", "file_id"),
        ("code_text", "file_id"),
    ):
        grouped: dict[int, list[tuple]] = defaultdict(list)
        for row in source.conn.execute(f"SELECT *, {key} FROM {table}"):
            grouped[row[-1]].append(row[:-1])
        by_file[table] = grouped
    source.conn.close()
    db = store.open_index(fresh)
    conn = db.conn
    file_ids = sorted(by_file["files"])
    rows_cpu = text_cpu = 0.0
    for first in range(0, len(file_ids), indexer.BATCH_FILES):
        batch = file_ids[first : first + indexer.BATCH_FILES]
        started = time.process_time()
        conn.execute("BEGIN")
        for table in ("files", "symbols", "refs", "code_text"):
            rows = [row for file_id in batch for row in by_file[table].get(file_id, ())]
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        middle = time.process_time()
        span = (batch[0] * store.ROWS_PER_FILE, (batch[-1] + 1) * store.ROWS_PER_FILE)
        conn.execute(writer_sql.INDEX_TEXT_SQL, span)
        conn.execute(writer_sql.INDEX_LITERAL_SQL, span)
        conn.execute("COMMIT")
        rows_cpu += middle - started
        text_cpu += time.process_time() - middle
    started = time.process_time()
    conn.execute("BEGIN")
    store.Writer(db).optimize_text()
    conn.execute("COMMIT")
    text_cpu += time.process_time() - started
    conn.close()
    return rows_cpu, text_cpu


def _ranking(built: Path, copy: Path) -> float:
    """CPU of ranking `built` from scratch (its per-file caches emptied), stored."""
    from repomap.index.ranking import compute_ranks, store_ranks

    common.remove_database(copy)
    common.database_bytes(built)  # checkpoints the WAL into the file copied
    shutil.copyfile(built, copy)
    db = store.open_index(copy)
    db.conn.execute("DELETE FROM rank_arrays")
    started = time.process_time()
    ranking = compute_ranks(db, force=True)
    if ranking:
        store_ranks(db, ranking)
    elapsed = time.process_time() - started
    db.conn.close()
    return elapsed


def report(name: str, label: str, figures: dict[str, list[float]]) -> str:
    """One corpus: each part's median CPU seconds and its multiple of the floor."""
    per_run = [
        dict(zip(PARTS, values, strict=True))
        for values in zip(*(figures[part] for part in PARTS), strict=True)
    ]

    def median_of(value: Callable[[dict[str, float]], float]) -> float:
        return median([value(run) for run in per_run])

    def row(what: str, value: Callable[[dict[str, float]], float]) -> list[str]:
        ratio = median_of(lambda run: value(run) / run["floor"])
        return [what, fmt_seconds(median_of(value)), f"{ratio:.2f}x"]

    def fixed(run: dict[str, float]) -> float:
        return run["parse"] + run["rows"] + run["text"] + run["ranking"]

    def extracted_and_written(run: dict[str, float]) -> float:
        return run["extraction"] + run["rows"] + run["text"] + run["ranking"]

    table = [
        row("floor: tree-sitter parse, 1 process", lambda run: run["floor"]),
        row("parse the design requires (ast; parse + query traversal)", lambda run: run["parse"]),
        row("SQL: rows inserted (files, symbols, refs, text)", lambda run: run["rows"]),
        row("SQL: FTS5 and trigram text indexes, merged", lambda run: run["text"]),
        row("ranking, from scratch, stored", lambda run: run["ranking"]),
        row("**sum of the fixed parts**", fixed),
        row("extraction beyond that parse (Python)", lambda run: run["extraction"] - run["parse"]),
        row(
            "rest of the cold run (writer's Python, IPC, docs, startup; slower when parallel)",
            lambda run: run["cold_cpu"] - extracted_and_written(run),
        ),
        row("cold index: CPU of all its processes", lambda run: run["cold_cpu"]),
    ]
    cores = median_of(lambda run: run["floor"] / run["floor_2"])
    bound = median_of(lambda run: fixed(run) * run["floor_2"] / run["floor"] ** 2)
    cold = median_of(lambda run: run["cold_wall"] / run["floor"])
    lines = [
        f"## {name}: {label}\n",
        markdown_table(["part", "CPU, median", "x floor"], table, align="lrr"),
        "",
        f"- The floor's parse split over {CORES} processes ran {cores:.2f}x as fast as in one: what"
        f" this machine's {CORES} cores give. At that rate the fixed parts alone take {bound:.2f}x"
        f" the floor in wall time (target {COLD_VS_FLOOR:.0f}x), leaving"
        f" {max(0.0, COLD_VS_FLOOR - bound):.2f}x for everything else; the cold index took"
        f" {cold:.2f}x ({fmt_seconds(median(figures['cold_wall']))} against a"
        f" {fmt_seconds(median(figures['floor']))} floor).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
