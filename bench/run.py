"""The index benchmark: repomap against a tree-sitter parse floor and ctags, per corpus.

    python bench/run.py [--runs N] [--corpus python,rust,cpp] [--root PATH] [--json] [--all]
                        [--peers aider|none]

For each corpus it copies the tree to a temporary folder (the one-file change edits the copy,
never the shared corpus), then in each run measures back to back: the floor (tree-sitter parse
of every file repomap indexes, one process, bytes read beforehand), `ctags -R`, `repomap index`
cold, again with nothing changed, and again after appending a comment to one mid-sized file,
then each pip-installable peer of bench/peer.py cold on the same files (--peers; aider's repo map).
It prints one markdown table per corpus with medians, each target beside its figure. See
bench/README.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import common
import peer
from common import fmt_bytes, fmt_count, fmt_seconds, median

# Issue 20's targets (the first core issue's were 2x, 5% and 10%).
COLD_VS_FLOOR = 3.0  # cold full index within 3x the single-process parse
NO_CHANGE_VS_COLD = 0.03
ONE_FILE_VS_COLD = 0.05
PEAK_RSS_BYTES = 500 * common.MB
DB_BYTES_PER_10K_LINES = 1.5 * common.MB  # per 10k indexed lines, code and docs together
COMMENT = {"python": b"# repomap bench: one changed line\n", "rust": b"// repomap bench\n"}
COMMENT["c"] = COMMENT["cpp"] = COMMENT["rust"]
RESULTS_DIR = Path(__file__).resolve().parent / "results"
OWN_MODULES = {"run", "common"}


@dataclass
class Corpus:
    """One tree to measure and what repomap reads in it."""

    name: str
    label: str
    source: Path
    files: list[tuple[Path, str, int]] = field(default_factory=list)  # relative to source
    lines: int = 0
    size: int = 0


@dataclass
class Runs:
    """Raw numbers, one entry per run."""

    floor: list[float] = field(default_factory=list)
    floor_cpu: list[float] = field(default_factory=list)
    ctags: list[float] = field(default_factory=list)
    cold: list[float] = field(default_factory=list)
    cold_cpu: list[float] = field(default_factory=list)  # user + sys, workers included
    no_change: list[float] = field(default_factory=list)
    one_file: list[float] = field(default_factory=list)
    cold_tree_rss: list[int] = field(default_factory=list)
    cold_process_rss: list[int] = field(default_factory=list)
    max_tree_rss: list[int] = field(default_factory=list)  # over all three index runs
    db_bytes: list[int] = field(default_factory=list)
    copy_seconds: float = 0.0
    changed_file: str = ""
    summary: dict = field(default_factory=dict)  # the cold run's --json summary
    table_bytes: dict[str, int] = field(default_factory=dict)  # after the last cold run
    doc_lines: int = 0  # lines of the doc files the cold run indexed (doc_files.line_count)
    warnings: list[str] = field(default_factory=list)
    load: list[float] = field(default_factory=list)  # 1-minute load average before each run
    profile: list[list[str]] = field(default_factory=list)  # rows of the --profile table
    peers: list[peer.PeerRuns] = field(default_factory=list)  # bench/peer.py, same runs


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    trees = corpora(args)
    command = " ".join(["python", "bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    print(
        f"# repomap index benchmark\n\n{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{args.runs} run{'s' if args.runs != 1 else ''} per corpus, medians; `{command}`\n",
        flush=True,
    )
    raw = {}
    for corpus in trees:
        runs = measure(corpus, args.runs, _progress, profile=args.profile, peers=args.peers)
        print(report(corpus, runs, args.runs), flush=True)
        raw[corpus.name] = {"corpus": corpus.label, "lines": corpus.lines, **runs.__dict__}
    if args.json is not None:
        out = (
            Path(args.json)
            if args.json
            else RESULTS_DIR / f"index-{datetime.now():%Y%m%d-%H%M%S}.json"
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(raw, indent=2, default=_raw_value))
        print(f"raw numbers: {out}")
    if args.all:
        _run_feature_benchmarks()
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per corpus (default 3)")
    add_tree_options(parser)
    parser.add_argument(
        "--json",
        nargs="?",
        const="",
        metavar="PATH",
        help="also write the raw numbers to PATH (default bench/results/index-<time>.json)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="then profile one cold `repomap index --workers 1` per corpus (cProfile, top costs)",
    )
    parser.add_argument(
        "--all", action="store_true", help="then run every other bench/*.py that has a main()"
    )
    parser.add_argument(
        "--peers",
        default=",".join(peer.PEERS),
        help="pip-installable peers to time in the same runs, comma-separated, or none "
        f"(default {','.join(peer.PEERS)}; bench/peer.py installs each in its own venv)",
    )
    args = parser.parse_args(argv)
    check_trees(parser, args)
    return args


def add_tree_options(parser: argparse.ArgumentParser) -> None:
    """--corpus and --root, as run.py and the benches that measure the same trees take them;
    check them (and --runs) with check_trees(), list the trees with corpora()."""
    parser.add_argument(
        "--corpus",
        default=",".join(common.CORPORA),
        help="comma-separated corpora (default python,rust,cpp)",
    )
    parser.add_argument(
        "--root", type=Path, action="append", help="measure this tree instead (repeatable)"
    )


def check_trees(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for root in args.root or []:
        if not root.is_dir():
            parser.error(f"--root {root} is not a directory")


def corpora(args: argparse.Namespace) -> list[Corpus]:
    """The trees to measure: each --root, else the named corpora (materialized)."""
    if args.root:
        return [Corpus(root.resolve().name, str(root), root.resolve()) for root in args.root]
    names = [name.strip() for name in args.corpus.split(",") if name.strip()]
    roots = common.materialize(names)
    return [
        Corpus(name, f"{common.CORPORA[name]} {common.corpus_version(name)}".strip(), roots[name])
        for name in names
    ]


def _progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --- measuring ---------------------------------------------------------------------------------


def measure(
    corpus: Corpus,
    run_count: int,
    progress: Callable[[str], None],
    profile: bool = False,
    peers: str = "none",
) -> Runs:
    """Every figure of one corpus, `run_count` times, on a private copy of its tree."""
    runs = Runs()
    scratch = common.scratch_dir()
    try:
        tree = scratch / "tree"
        runs.copy_seconds = common.copy_tree(corpus.source, tree)
        progress(f"{corpus.name}: copied to {tree} in {fmt_seconds(runs.copy_seconds)}")
        found = common.indexed_files(tree)
        sources = [(path.read_bytes(), language) for path, language, _ in found]
        corpus.files = [(path.relative_to(tree), language, size) for path, language, size in found]
        corpus.size = sum(len(source) for source, _ in sources)
        corpus.lines = sum(_line_count(source) for source, _ in sources)
        changed, language = _mid_sized(found)
        runs.changed_file = str(changed.relative_to(tree))
        runs.peers = peer.start([n for n in peers.split(",") if n not in ("", "none")], progress)
        for number in range(1, run_count + 1):
            progress(f"{corpus.name}: run {number}/{run_count}")
            runs.load.append(os.getloadavg()[0])
            wall, cpu = parse_floor(sources)
            runs.floor.append(wall)
            runs.floor_cpu.append(cpu)
            runs.ctags.append(_ctags(tree, scratch).seconds)
            _index_runs(tree, scratch / "index.db", changed, language, runs)
            peer.run_all(runs.peers, tree, [path for path, _, _ in corpus.files], scratch)
        if profile:
            progress(f"{corpus.name}: profiling a cold index with --workers 1")
            runs.profile = profile_index(tree, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return runs


def parse_floor(sources: list[tuple[bytes, str]]) -> tuple[float, float]:
    """Wall and CPU seconds to parse every source with tree-sitter in this one process
    (reading excluded)."""
    from repomap.extractors.treesitter import parser

    parsers = {language: parser(language) for _, language in sources}
    started, started_cpu = time.perf_counter(), time.process_time()
    for source, language in sources:
        parsers[language].parse(source)
    return time.perf_counter() - started, time.process_time() - started_cpu


def _ctags(tree: Path, scratch: Path) -> common.Timed:
    tags = scratch / "tags"
    try:
        return common.timed(["ctags", "-R", "-f", str(tags), str(tree)]).check()
    finally:
        tags.unlink(missing_ok=True)


def _index_runs(tree: Path, db: Path, changed: Path, language: str, runs: Runs) -> None:
    """Cold, no-change and one-file-change index runs on a fresh database."""
    common.remove_database(db)
    command = [*common.repomap_command(), "index", str(tree), "--db", str(db), "--json"]
    try:
        cold = common.timed(command).check()
        runs.cold.append(cold.seconds)
        runs.cold_cpu.append(cold.cpu_seconds)
        runs.cold_process_rss.append(cold.max_process_rss or 0)
        runs.cold_tree_rss.append(cold.tree_peak_rss or 0)
        runs.summary = cold.json()["results"][0]
        runs.db_bytes.append(common.database_bytes(db))
        runs.table_bytes = common.table_bytes(db)
        runs.doc_lines = common.doc_lines(db)

        no_change = common.timed(command).check()
        runs.no_change.append(no_change.seconds)
        _expect(
            runs, "no-change run", no_change.json()["results"][0], added=0, modified=0, removed=0
        )

        original = changed.read_bytes()
        original_stat = changed.stat()
        try:
            changed.write_bytes(_with_comment(original, language))
            one_file = common.timed(command).check()
        finally:
            changed.write_bytes(original)
            os.utime(changed, ns=(original_stat.st_atime_ns, original_stat.st_mtime_ns))
        runs.one_file.append(one_file.seconds)
        _expect(runs, "one-file run", one_file.json()["results"][0], added=0, modified=1, removed=0)
        peaks = [run.tree_peak_rss or 0 for run in (cold, no_change, one_file)]
        runs.max_tree_rss.append(max(peaks))
    finally:
        common.remove_database(db)


def profile_index(tree: Path, scratch: Path, top: int = 20) -> list[list[str]]:
    """cProfile of one cold `repomap index --workers 1` (all work in one process): the `top`
    functions by own time, as table rows."""
    import pstats

    db, out = scratch / "profile.db", scratch / "index.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "repomap.cli"]
    try:
        common.timed(
            [*command, "index", str(tree), "--db", str(db), "--json", "--workers", "1"]
        ).check()
        stats = pstats.Stats(str(out))
    finally:
        common.remove_database(db)
    total = stats.total_tt
    rows = []
    entries = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:top]
    for (path, line, function), (_, calls, own, cumulative, _) in entries:
        where = f"{Path(path).name}:{line}({function})" if line else function
        rows.append(
            [where, fmt_count(calls), f"{own:.2f} s", f"{own / total:.1%}", f"{cumulative:.2f} s"]
        )
    return rows


def _expect(runs: Runs, what: str, summary: dict, **counts: int) -> None:
    """Note a run that did not do what it is meant to measure (the figure would be wrong)."""
    for key, want in counts.items():
        if summary.get(key) != want:
            runs.warnings.append(f"{what}: {key} = {summary.get(key)}, expected {want}")


def _with_comment(source: bytes, language: str) -> bytes:
    return source + (b"" if source.endswith(b"\n") or not source else b"\n") + COMMENT[language]


def _mid_sized(found: list[tuple[Path, str, int]]) -> tuple[Path, str]:
    """The file of median size (the one-file change edits it)."""
    path, language, _ = sorted(found, key=lambda item: (item[2], str(item[0])))[len(found) // 2]
    return path, language


def _line_count(source: bytes) -> int:
    if not source:
        return 0
    return source.count(b"\n") + (0 if source.endswith(b"\n") else 1)


# --- reporting ---------------------------------------------------------------------------------


def report(corpus: Corpus, runs: Runs, run_count: int) -> str:
    """The markdown section of one corpus: a table of medians with targets, then notes."""
    floor = median(runs.floor)
    cold = median(runs.cold)
    cold_vs_floor = median(_ratios(runs.cold, runs.floor))
    no_change_share = median(_ratios(runs.no_change, runs.cold))
    one_file_share = median(_ratios(runs.one_file, runs.cold))
    sampled = all(runs.cold_tree_rss)  # False without psutil
    tree_rss = median(runs.cold_tree_rss)
    db_bytes = median(runs.db_bytes)
    indexed_lines = corpus.lines + runs.doc_lines  # code and docs together (issue 20)
    per_10k = db_bytes / max(indexed_lines, 1) * 10_000
    per_10k_code = db_bytes / max(corpus.lines, 1) * 10_000
    languages = sorted({language for _, language, _ in corpus.files})

    def spread(values: list[float]) -> str:
        return f"{fmt_seconds(min(values))} – {fmt_seconds(max(values))}"

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "**FAIL**"

    rows = [
        [
            "files / lines / bytes indexed (code; docs lines)",
            f"{fmt_count(len(corpus.files))} / {fmt_count(corpus.lines)} / {fmt_bytes(corpus.size)}"
            f"; {fmt_count(runs.doc_lines)}",
            "",
            "",
            "",
            "",
        ],
        [
            "floor: tree-sitter parse, 1 process",
            fmt_seconds(floor),
            spread(runs.floor),
            "1.00× floor",
            "",
            "",
        ],
        [
            "repomap index, cold (2 workers)",
            fmt_seconds(cold),
            spread(runs.cold),
            f"{cold_vs_floor:.2f}× floor",
            f"≤ {COLD_VS_FLOOR:g}× floor",
            verdict(cold_vs_floor <= COLD_VS_FLOOR),
        ],
        [
            "cold index CPU time (user+sys, all processes)",
            fmt_seconds(median(runs.cold_cpu)),
            spread(runs.cold_cpu),
            f"{median(_ratios(runs.cold_cpu, runs.floor_cpu)):.2f}× floor CPU",
            "",
            "",
        ],
        [
            "repomap index, no change",
            fmt_seconds(median(runs.no_change)),
            spread(runs.no_change),
            f"{no_change_share:.1%} of cold",
            f"≤ {NO_CHANGE_VS_COLD:.0%} of cold",
            verdict(no_change_share <= NO_CHANGE_VS_COLD),
        ],
        [
            "repomap index, one file changed",
            fmt_seconds(median(runs.one_file)),
            spread(runs.one_file),
            f"{one_file_share:.1%} of cold",
            f"≤ {ONE_FILE_VS_COLD:.0%} of cold",
            verdict(one_file_share <= ONE_FILE_VS_COLD),
        ],
        [
            "peak RSS, cold index, process tree summed",
            fmt_bytes(tree_rss) if sampled else "n/a (no psutil)",
            f"{fmt_bytes(min(runs.cold_tree_rss))} – {fmt_bytes(max(runs.cold_tree_rss))}"
            if sampled
            else "",
            "",
            f"< {PEAK_RSS_BYTES / common.MB:g} MB",
            verdict(tree_rss < PEAK_RSS_BYTES) if sampled else "",
        ],
        [
            "peak RSS, cold index, largest single process",
            fmt_bytes(median(runs.cold_process_rss)) if sampled else "n/a (no psutil)",
            "",
            "",
            "",
            "",
        ],
        [
            "database (main + WAL, checkpointed; no embeddings)",
            fmt_bytes(db_bytes),
            "",
            f"{per_10k / common.MB:.2f} MB / 10k lines of code and docs "
            f"({per_10k_code / common.MB:.2f} per 10k code lines)",
            f"≤ {DB_BYTES_PER_10K_LINES / common.MB:g} MB / 10k lines",
            verdict(per_10k <= DB_BYTES_PER_10K_LINES),
        ],
        [
            "ctags -R (reference, whole tree)",
            fmt_seconds(median(runs.ctags)),
            spread(runs.ctags),
            f"{median(_ratios(runs.ctags, runs.floor)):.2f}× floor; "
            f"cold index = {median(_ratios(runs.cold, runs.ctags)):.1f}× ctags",
            "",
            "",
        ],
    ]
    rows += peer.rows(runs.peers, runs.cold, runs.floor, corpus.name, runs.cold_cpu)
    table = common.markdown_table(
        ["measure", "median", f"range of {run_count}", "ratio", "target", "result"],
        rows,
        "lrrlll",
    )
    notes = [
        f"- {run_count} run{'s' if run_count != 1 else ''}; ratios are medians of per-run ratios "
        "(each run measures floor, ctags and the three index runs back to back); page cache warm.",
        f"- languages: {', '.join(languages)}; one-file change: a comment line appended to "
        f"`{runs.changed_file}` (the median-sized file), then restored.",
        f"- machine: {os.cpu_count()} cores; 1-minute load average before each run: "
        + ", ".join(f"{load:.1f}" for load in runs.load)
        + " (other work on the machine inflates wall times; CPU seconds suffer less)",
        f"- copying the corpus to a private folder took {fmt_seconds(runs.copy_seconds)} "
        "(not in any figure).",
        f"- cold index: {_summary_line(runs.summary)}",
        "- database: embeddings are not in it (the runs index without `--embed`); their budget, "
        "≤ 1 KB per chunk, is measured by bench/embed.py. By table below.",
        "- peak RSS (the target row): the largest sum of VmRSS over `repomap index` and its "
        f"worker processes, sampled every {common.POLL_SECONDS * 1000:.0f} ms (pages shared by "
        "forked workers count once per process: an upper bound); largest single process: the "
        "largest VmHWM seen. Tree peak over all three index runs: "
        f"{fmt_bytes(median(runs.max_tree_rss))}.",
    ]
    notes += peer.notes(runs.peers)
    notes += [f"- **warning**: {warning}" for warning in sorted(set(runs.warnings))]
    text = f"## {corpus.name}: {corpus.label}\n\n{table}\n\n" + "\n".join(notes) + "\n"
    text += "\n" + table_breakdown(runs.table_bytes, indexed_lines) + "\n"
    if runs.profile:
        profile = common.markdown_table(
            ["function (cProfile, --workers 1)", "calls", "own time", "share", "cumulative"],
            runs.profile,
            "lrrrr",
        )
        text += f"\nWhere a cold index spends its time (one process; profiler overhead included):\n\n{profile}\n"
    return text


BREAKDOWN_ROWS = 16


def table_breakdown(sizes: dict[str, int], lines: int) -> str:
    """The database by table (dbstat: a table with its indexes, each FTS5 shadow table apart),
    largest first, each with its share and its bytes per 10k indexed lines."""
    total = sum(sizes.values()) or 1
    items = list(sizes.items())
    shown = items[:BREAKDOWN_ROWS]
    rest = items[BREAKDOWN_ROWS:]
    if rest:
        shown.append((f"{len(rest)} others", sum(size for _, size in rest)))
    rows = [
        [name, fmt_bytes(size), f"{size / total:.1%}",
         f"{size / max(lines, 1) * 10_000 / common.MB:.3f} MB"]
        for name, size in shown
    ]  # fmt: skip
    rows.append(["all", fmt_bytes(total), "100%",
                 f"{total / max(lines, 1) * 10_000 / common.MB:.3f} MB"])  # fmt: skip
    return "Database by table (dbstat; indexes with their table, FTS5 shadow tables apart):\n\n" + (
        common.markdown_table(["table", "bytes", "share", "per 10k lines"], rows, "lrrr")
    )


def _raw_value(value: object) -> object:
    """JSON for what json cannot write itself: dataclasses as dicts, the rest as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


def _ratios(numerators: list[float], denominators: list[float]) -> list[float]:
    """Per-run ratios: both figures of a pair were measured in the same run."""
    return [n / d for n, d in zip(numerators, denominators, strict=True)]


def _summary_line(summary: dict) -> str:
    if not summary:
        return "(no summary)"
    elements = summary.get("elements", {})
    parts = [
        f"{fmt_count(summary.get('files', 0))} files",
        *(f"{fmt_count(count)} {kind}" for kind, count in elements.items()),
        f"{fmt_count(summary.get('symbols', 0))} symbols",
        f"{fmt_count(summary.get('references', 0))} references",
        f"{summary.get('seconds')} s inside the run",
    ]
    docs = summary.get("docs")
    if docs:
        parts.append(f"docs: {docs.get('files')} files, {docs.get('sections')} sections")
    skipped = summary.get("skipped_by_reason") or {}
    if skipped:
        parts.append("skipped: " + ", ".join(f"{n} {reason}" for reason, n in skipped.items()))
    fallback = summary.get("fallback_files") or []
    if fallback:
        parts.append(
            f"{len(fallback)} via the fallback parser: "
            + ", ".join(f["path"] for f in fallback[:3])
        )
    return "; ".join(parts)


# --- the other benchmarks ----------------------------------------------------------------------


def _run_feature_benchmarks() -> None:
    """Each other bench/<feature>.py with a main(), in name order, with no arguments."""
    folder = Path(__file__).resolve().parent
    for path in sorted(folder.glob("*.py")):
        if path.stem in OWN_MODULES or path.stem.startswith("_"):
            continue
        module = importlib.import_module(path.stem)
        if not callable(getattr(module, "main", None)):
            continue
        _progress(f"running bench/{path.name}")
        saved, sys.argv = sys.argv, [str(path)]
        try:
            module.main()
        finally:
            sys.argv = saved


if __name__ == "__main__":
    sys.exit(main())
