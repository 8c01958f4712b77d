"""The index benchmark: repomap against a tree-sitter parse floor and ctags, per corpus.

    python bench/run.py [--runs N] [--corpus python,rust,cpp,kernel] [--root PATH] [--json]
                        [--all] [--peers aider|none]

For each corpus it copies the tree to a temporary folder (the one-file change edits the copy,
never the shared corpus), then in each run measures back to back: the floor (tree-sitter parse
of every file repomap indexes, one process, bytes read beforehand), `ctags -R`, `repomap index`
cold, again with nothing changed, and again after appending a comment to one mid-sized file,
then each pip-installable peer of bench/peer.py cold on the same files (--peers; aider's repo map).
It prints one markdown table per corpus with medians, each target beside its figure. See
bench/README.md.

The Linux kernel (`--corpus kernel`, never in the default set: one run takes 20-25 minutes) is
copied with hard links (`cp -al`; the one changed file gets bytes of its own first), indexed
with a `.repomapignore` of `!/*` written into the copy (the Debian tree's `.gitignore` holds
`/*`), and gets its own targets and rows: `repomap map`, search_text p95 (bench/search.py),
the ranking alone (bench/rank_alone.py), and a time limit for each peer.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
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
import search
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
RANK_ALONE = Path(__file__).resolve().parent / "rank_alone.py"
MAP_RUNS = 3  # `repomap map` runs per large-corpus run (median)


@dataclass(frozen=True)
class Large:
    """A corpus too large to copy or to measure with the others: how to index it and the
    targets of its own (issue 20 sets them for the Linux kernel)."""

    ignore: str  # the .repomapignore written at the root of the copy
    cold_seconds: float
    peak_rss: int  # bytes, the cold run's largest single process
    no_change_seconds: float
    map_seconds: float
    search_p95_ms: float
    rank_seconds: float  # compute_ranks + store_ranks, from rows handed over (rank_alone)
    search_per_class: int  # bench/search.py queries per class
    peer_timeout: float  # seconds; a peer still running then is stopped and reported so


LARGE = {
    "kernel": Large(
        ignore="!/*\n",  # the Debian tree's top-level .gitignore holds `/*`
        cold_seconds=180,
        peak_rss=1500 * common.MB,
        no_change_seconds=5,
        map_seconds=1,
        search_p95_ms=25,
        rank_seconds=10,
        search_per_class=50,
        peer_timeout=300,
    )
}


@dataclass
class Corpus:
    """One tree to measure and what repomap reads in it."""

    name: str
    label: str
    source: Path
    files: list[tuple[Path, str, int]] = field(default_factory=list)  # relative to source
    lines: int = 0
    size: int = 0
    large: Large | None = None


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
    large: LargeRuns | None = None  # a large corpus's own figures


@dataclass
class LargeRuns:
    """A large corpus's own figures, one entry per run (each measured on the cold run's index,
    after the no-change and one-file runs)."""

    map: list[float] = field(default_factory=list)  # `repomap map`, freshness check included
    map_no_refresh: list[float] = field(default_factory=list)
    search_p95: list[float] = field(default_factory=list)  # ms
    search_table: str = ""  # of the last run
    rank: list[float] = field(default_factory=list)  # compute + store, wall
    rank_cpu: list[float] = field(default_factory=list)
    rank_parts: dict = field(default_factory=dict)  # rank_alone's JSON, last run
    rank_failed: str = ""
    map_failed: str = ""


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    trees = corpora(args)
    command = " ".join(["python", "bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    print(
        f"# repomap index benchmark\n\n{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{args.runs} run{'s' if args.runs != 1 else ''} per corpus, medians; `{command}`\n",
        flush=True,
    )
    common.compile_bytecode()  # as an install does: no run pays for compiling changed modules
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
        help="comma-separated corpora (default python,rust,cpp; also "
        f"{','.join(common.LARGE_CORPORA)}, never by default: 20-25 minutes a run)",
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
    labels = {**common.CORPORA, **common.LARGE_CORPORA}
    return [
        Corpus(
            name,
            f"{labels[name]} {common.corpus_version(name)}".strip(),
            roots[name],
            large=LARGE.get(name),
        )
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
    large = corpus.large
    scratch = common.scratch_dir()
    try:
        tree = scratch / "tree"
        runs.copy_seconds = common.copy_tree(corpus.source, tree, hard_links=large is not None)
        progress(f"{corpus.name}: copied to {tree} in {fmt_seconds(runs.copy_seconds)}")
        if large is not None:
            (tree / ".repomapignore").write_text(large.ignore)  # a new file: the corpus keeps none
            runs.large = LargeRuns()
        found = _read_files(tree, corpus)
        changed, language = _mid_sized(found)
        runs.changed_file = str(changed.relative_to(tree))
        runs.peers = peer.start([n for n in peers.split(",") if n not in ("", "none")], progress)
        for number in range(1, run_count + 1):
            progress(f"{corpus.name}: run {number}/{run_count}")
            runs.load.append(os.getloadavg()[0])
            wall, cpu = floor_of_files([(path, language) for path, language, _ in found])
            runs.floor.append(wall)
            runs.floor_cpu.append(cpu)
            progress(f"{corpus.name}: floor {fmt_seconds(wall)}; ctags")
            runs.ctags.append(_ctags(tree, scratch).seconds)
            progress(f"{corpus.name}: ctags {fmt_seconds(runs.ctags[-1])}; repomap index")
            then = None
            if large is not None and runs.large is not None:
                then = functools.partial(
                    measure_large, tree=tree, large=large, runs=runs.large, progress=progress
                )
            _index_runs(tree, scratch / "index.db", changed, language, runs, then)
            progress(f"{corpus.name}: cold {fmt_seconds(runs.cold[-1])}; peers")
            peer.run_all(
                runs.peers,
                tree,
                [path for path, _, _ in corpus.files],
                scratch,
                timeout=large.peer_timeout if large else None,
            )
        if profile:
            progress(f"{corpus.name}: profiling a cold index with --workers 1")
            runs.profile = profile_index(tree, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return runs


def _read_files(tree: Path, corpus: Corpus) -> list[tuple[Path, str, int]]:
    """What `repomap index` reads under `tree`, each file with the language it is parsed as
    (a `.h`: languages.header_languages, then language_of_header on its bytes, as the
    pipeline does); fills corpus.files (relative paths), .size and .lines."""
    from repomap.languages import language_of_header

    found = []
    corpus.size = corpus.lines = 0
    for path, language, size in common.indexed_files(tree):
        source = path.read_bytes()
        rel_path = path.relative_to(tree)
        found.append((path, language_of_header(rel_path.as_posix(), language, source), size))
        corpus.size += len(source)
        corpus.lines += _line_count(source)
    corpus.files = [(path.relative_to(tree), language, size) for path, language, size in found]
    return found


FLOOR_BATCH_BYTES = 64 * common.MB  # sources held at once by floor_of_files


def floor_of_files(files: list[tuple[Path, str]]) -> tuple[float, float]:
    """parse_floor over files read FLOOR_BATCH_BYTES at a time (reading excluded): the
    kernel's sources would be 0.9 GB held at once."""
    wall = cpu = 0.0
    batch: list[tuple[bytes, str]] = []
    held = 0
    for number, (path, language) in enumerate(files, 1):
        source = path.read_bytes()
        batch.append((source, language))
        held += len(source)
        if held >= FLOOR_BATCH_BYTES or number == len(files):
            batch_wall, batch_cpu = parse_floor(batch)
            wall, cpu, batch, held = wall + batch_wall, cpu + batch_cpu, [], 0
    return wall, cpu


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


def _index_runs(
    tree: Path,
    db: Path,
    changed: Path,
    language: str,
    runs: Runs,
    then: Callable[[Path], None] | None = None,
) -> None:
    """Cold, no-change and one-file-change index runs on a fresh database; then `then(db)`
    before the database is removed."""
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

        common.own_file(changed)  # in a tree of hard links, the corpus's file stays as it is
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
        if then is not None:
            then(db)
    finally:
        common.remove_database(db)


def measure_large(
    db: Path, *, tree: Path, large: Large, runs: LargeRuns, progress: Callable[[str], None]
) -> None:
    """A large corpus's own figures on the index `db` of `tree`: `repomap map` (median of
    MAP_RUNS after a warm-up, with and without its freshness check), search_text's p95
    (bench/search.py) and the ranking alone (bench/rank_alone.py --written, a subprocess)."""
    progress(f"{tree}: repomap map")
    command = [*common.repomap_command(), "map", "--root", str(tree), "--db", str(db)]
    for times, extra in ((runs.map, []), (runs.map_no_refresh, ["--no-refresh"])):
        _map_time(command + extra, times, runs)
    progress(f"{tree}: search_text, {large.search_per_class} queries per class")
    p95, runs.search_table = search.latency(db, large.search_per_class)
    runs.search_p95.append(p95)
    progress(f"{tree}: the ranking alone")
    ranked = common.timed(
        [sys.executable, str(RANK_ALONE), str(db), "--runs", "1", "--written", "--json"]
    )
    try:
        figures = json.loads(ranked.stdout.strip().splitlines()[-1]) if ranked.stdout else {}
    except json.JSONDecodeError:
        figures = {}
    if ranked.returncode != 0 or "compute_wall" not in figures:
        runs.rank_failed = f"exit {ranked.returncode}: {peer.one_line(ranked.stderr)}"
        return
    runs.rank.append(figures["compute_wall"] + figures["store_wall"])
    runs.rank_cpu.append(figures["compute_CPU"] + figures["store_CPU"])
    runs.rank_parts = {**figures, "subprocess_seconds": ranked.seconds}


def _map_time(command: list[str], times: list[float], runs: LargeRuns) -> None:
    """The median of MAP_RUNS runs of `command` (a `repomap map`) after one warm-up."""
    common.timed(command)
    timed = [common.timed(command) for _ in range(MAP_RUNS)]
    failed = [run for run in timed if run.returncode != 0]
    if failed:
        runs.map_failed = f"exit {failed[0].returncode}: {peer.one_line(failed[0].stderr)}"
        return
    times.append(median(run.seconds for run in timed))


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
    large = corpus.large
    process_rss = median(runs.cold_process_rss)

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
            f"< {PEAK_RSS_BYTES / common.MB:g} MB" if large is None else "",
            verdict(tree_rss < PEAK_RSS_BYTES) if sampled and large is None else "",
        ],
        [
            "peak RSS, cold index, largest single process",
            fmt_bytes(process_rss) if sampled else "n/a (no psutil)",
            "",
            "",
            f"≤ {large.peak_rss / common.MB:g} MB" if large else "",
            verdict(process_rss <= large.peak_rss) if large and sampled else "",
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
    if large is not None and runs.large is not None:
        rows += large_rows(large, runs)
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
        f"- peak RSS (the {'tree' if large is None else 'first'} row): the largest sum of VmRSS over `repomap index` and its "
        f"worker processes, sampled every {common.POLL_SECONDS * 1000:.0f} ms (pages shared by "
        "forked workers count once per process: an upper bound); largest single process: the "
        "largest VmHWM seen. Tree peak over all three index runs: "
        f"{fmt_bytes(median(runs.max_tree_rss))}.",
    ]
    notes += peer.notes(runs.peers)
    if large is not None and runs.large is not None:
        notes += large_notes(large, runs.large)
    notes += [f"- **warning**: {warning}" for warning in sorted(set(runs.warnings))]
    text = f"## {corpus.name}: {corpus.label}\n\n{table}\n\n" + "\n".join(notes) + "\n"
    text += "\n" + table_breakdown(runs.table_bytes, indexed_lines) + "\n"
    if runs.large is not None and runs.large.search_table:
        text += f"\nsearch_text by query class (bench/search.py, last run):\n\n{runs.large.search_table}\n"
    if runs.profile:
        profile = common.markdown_table(
            ["function (cProfile, --workers 1)", "calls", "own time", "share", "cumulative"],
            runs.profile,
            "lrrrr",
        )
        text += f"\nWhere a cold index spends its time (one process; profiler overhead included):\n\n{profile}\n"
    return text


def large_rows(large: Large, runs: Runs) -> list[list[str]]:
    """A large corpus's own target rows (measure, median, range, ratio, target, result)."""
    extras = runs.large
    assert extras is not None

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "**FAIL**"

    def row(label: str, values: list[float], limit: float, failed: str = "") -> list[str]:
        if not values:
            return [label, f"not measured: {failed or 'no run'}", "", "", "", ""]
        value = median(values)
        return [
            label,
            fmt_seconds(value),
            f"{fmt_seconds(min(values))} – {fmt_seconds(max(values))}",
            "",
            f"≤ {limit:g} s",
            verdict(value <= limit),
        ]

    rows = [
        row("repomap index, cold, wall (2 workers)", runs.cold, large.cold_seconds),
        row("repomap index, no change", runs.no_change, large.no_change_seconds),
        row(
            f"`repomap map` (freshness check included; median of {MAP_RUNS})",
            extras.map,
            large.map_seconds,
            extras.map_failed,
        ),
        row(
            "`repomap map --no-refresh`",
            extras.map_no_refresh,
            large.map_seconds,
            extras.map_failed,
        ),
        row(
            "ranking alone: compute + store from handed-over rows (rank_alone --written)",
            extras.rank,
            large.rank_seconds,
            extras.rank_failed,
        ),
    ]
    if extras.rank:
        rows[-1][3] = f"CPU {fmt_seconds(median(extras.rank_cpu))}"
    p95 = median(extras.search_p95) if extras.search_p95 else None
    rows.append(
        [
            f"search_text p95, in process, {large.search_per_class} queries per class "
            "(all classes but 1-2 character literals)",
            f"{p95:.1f} ms" if p95 is not None else "not measured",
            "",
            "",
            f"≤ {large.search_p95_ms:g} ms",
            verdict(p95 <= large.search_p95_ms) if p95 is not None else "",
        ]
    )
    return rows


def large_notes(large: Large, extras: LargeRuns) -> list[str]:
    """Markdown bullet lines on how a large corpus was indexed and its own figures."""
    notes = [
        "- the tree was copied with hard links (`cp -al`; the one-file change's file got bytes "
        "of its own before it was edited, so the corpus is never written) and a "
        f"`.repomapignore` holding `{large.ignore.strip()}` written at its root: the Debian "
        "tree's top-level `.gitignore` holds `/*`, which ignores everything.",
        "- `repomap map` runs `repomap map --root TREE --db DB` (1024 tokens) after the "
        f"one-file run, one warm-up then {MAP_RUNS} timed; the target row is with the "
        "freshness check (the walk of the whole tree) a user gets by default.",
        f"- peers are stopped after {large.peer_timeout:g} s on this corpus.",
        "- peak RSS: the target applies to the largest single process (the writer), as "
        "`/usr/bin/time`'s maximum resident set size; the tree sum adds the workers.",
    ]
    parts = extras.rank_parts
    if parts:
        stages = parts.get("stages", {})
        slow = sorted(stages.items(), key=lambda item: -item[1][0])[:4]
        notes.append(
            f"- ranking alone (`python bench/rank_alone.py DB --runs 1 --written --json`, last "
            f"run): compute {parts['compute_wall']:.2f} s + store {parts['store_wall']:.2f} s "
            f"wall; handing the rows over first {parts['handover_wall']:.2f} s (not counted); "
            "largest stages (wall, CPU of one thread): "
            + ", ".join(f"{name} {wall:.2f} s / {cpu:.2f} s" for name, (wall, cpu) in slow)
            + f"; its peak RSS {fmt_bytes(parts['peak_rss'])}; the whole subprocess "
            f"{fmt_seconds(parts['subprocess_seconds'])}."
        )
    return notes


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
