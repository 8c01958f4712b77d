"""Docs index and gateway: what indexing Markdown/.txt costs, how fast the gateway answers.

    python bench/docs.py                       # Django (642 .txt, 3 .md) and the Rust std library (54 .md)
    python bench/docs.py --corpus rust --runs 5
    python bench/docs.py --root ~/src/myrepo   # any tree instead of the corpora

Per corpus, with the corpus itself only read (the index goes to a scratch folder):
- `docs index cold` / `docs index no change`: repomap.index.docs.update_docs alone, in process, into a
  fresh migrated database, then again with nothing changed (medians of --runs);
- one `repomap index` of the whole tree (code and docs) so outline has symbols to show;
- each gateway call in process (median of 20 after one warm-up call) and through the real CLI
  in a subprocess (median of --runs; includes interpreter start-up).
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import common

from repomap import config, store
from repomap.gateway import files as gateway
from repomap.gateway.section import show_section
from repomap.index import docs
from repomap.index.discover import walk
from repomap.search.docs import search_docs

API_RUNS = 20


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    roots = {"root": args.root} if args.root else common.materialize(args.corpus)
    for name, root in roots.items():
        scratch = common.scratch_dir()
        try:
            print(report(name, Path(root).resolve(), scratch, args.runs))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", choices=["python", "rust", "cpp"])
    parser.add_argument("--root", type=Path, help="Measure this tree instead of the corpora.")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    args.corpus = args.corpus or ["python", "rust"]
    return args


def report(name: str, root: Path, scratch: Path, runs: int) -> str:
    files = walk(root).files
    doc_files = [f for f in files if docs.doc_format(f.rel_path)]
    doc_bytes = sum(f.size for f in doc_files)
    cold, unchanged = _docs_index_runs(files, scratch, runs)
    db_path = scratch / "full.db"
    indexed = common.timed(
        [*common.repomap_command(), "index", str(root), "--db", str(db_path), "--json"]
    ).check()
    summary = indexed.json()["results"][0]["docs"]
    rows = [
        ["doc files / bytes", f"{len(doc_files):,} / {common.fmt_bytes(doc_bytes)}", ""],
        ["headings / sections", f"{summary['headings']:,} / {summary['sections']:,}", ""],
        ["docs index cold", common.fmt_seconds(common.median(cold)), _spread(cold)],
        ["docs index no change", common.fmt_seconds(common.median(unchanged)), _spread(unchanged)],
        ["whole `repomap index` (code + docs)", common.fmt_seconds(indexed.seconds), "1 run"],
    ]
    rows += _gateway_rows(root, db_path, runs)
    title = f"### {name}: {root} ({datetime.now(timezone.utc):%Y-%m-%d}, median of {runs} runs)"
    return f"{title}\n\n" + common.markdown_table(["measure", "median", "range"], rows, "lrl")


def _docs_index_runs(files: list, scratch: Path, runs: int) -> tuple[list[float], list[float]]:
    cold, unchanged = [], []
    for run in range(runs):
        db_path = scratch / f"docs-{run}.db"
        db = store.open_index(db_path)
        try:
            for times in (cold, unchanged):
                writer = store.Writer(db)
                started = time.perf_counter()
                docs.update_docs(writer, files, config.DEFAULT_MAX_FILE_SIZE, False, "bench")
                times.append(time.perf_counter() - started)
        finally:
            db.conn.close()
            common.remove_database(db_path)
    return cold, unchanged


def _gateway_rows(root: Path, db_path: Path, runs: int) -> list[list[str]]:
    db = store.open_index(db_path, readonly=True)
    try:
        largest = db.conn.execute(
            "SELECT file, text FROM headings WHERE file = (SELECT d.path FROM doc_files d "
            "JOIN headings h ON h.file = d.path ORDER BY d.size DESC LIMIT 1) ORDER BY id LIMIT 1"
        ).fetchone()
        one_code_file = db.conn.execute(
            "SELECT f.path FROM files f JOIN symbols s ON s.file_id = f.id "
            "GROUP BY f.id ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()
        calls: list[tuple[str, Callable[[], object], list[str]]] = [
            ("outline (whole tree)", lambda: gateway.outline(db, root), ["outline"]),
            ("sources (default)", lambda: gateway.sources(root), ["sources"]),
            ("files `test`", lambda: gateway.find_files(root, "test"), ["files", "test"]),
            (
                "search-docs `configure`",
                lambda: search_docs(db, root, "configure"),
                ["search-docs", "configure"],
            ),
        ]
        if one_code_file:
            path = one_code_file[0]
            calls.insert(
                1, (f"outline `{path}`", lambda: gateway.outline(db, root, path), ["outline", path])
            )
        if largest:
            file, heading = largest
            calls.append(
                (
                    f"show --section `{heading}`",
                    lambda: show_section(db, root, heading, file),
                    ["show", "--section", heading, "--file", file],
                )
            )
        startup = [
            common.timed([*common.repomap_command(), "--version"]).check().seconds
            for _ in range(runs)
        ]
        rows = [
            [
                "`repomap --version` (CLI start-up alone)",
                common.fmt_seconds(common.median(startup)),
                _spread(startup),
            ]
        ]
        for label, call, args in calls:
            api = _api_times(call)
            cli = [_cli_time(root, db_path, args) for _ in range(runs)]
            rows.append([f"{label}: API", common.fmt_seconds(common.median(api)), _spread(api)])
            rows.append([f"{label}: CLI", common.fmt_seconds(common.median(cli)), _spread(cli)])
        return rows
    finally:
        db.conn.close()


def _api_times(call: Callable[[], object]) -> list[float]:
    call()
    times = []
    for _ in range(API_RUNS):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return times


def _cli_time(root: Path, db_path: Path, args: list[str]) -> float:
    command = [*common.repomap_command(), *args, "--root", str(root)]
    if args[0] in ("outline", "show", "search-docs"):
        command += ["--db", str(db_path)]
    return common.timed(command).check().seconds


def _spread(times: list[float]) -> str:
    return f"{common.fmt_seconds(min(times))} – {common.fmt_seconds(max(times))}"


if __name__ == "__main__":
    raise SystemExit(main())
