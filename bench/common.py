"""Shared helpers for repomap's benchmarks: corpora, timed subprocesses with peak memory,
statistics and markdown tables.

Every script in bench/ runs as `python bench/<name>.py` from the project root, so bench/ is on
sys.path and a feature benchmark starts with `import common`:

    import common

    roots = common.materialize(["python"])           # {"python": Path(...)}, fetched if missing
    files = common.indexed_files(roots["python"])    # what `repomap index` reads, with languages
    run = common.timed([*common.repomap_command(), "index", str(root), "--db", str(db), "--json"])
    print(common.markdown_table(["measure", "median"], [["cold", common.fmt_seconds(run.seconds)]]))

Sizes are decimal: 1 MB = 1,000,000 bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
GET_CORPORA = Path("..") / "shared" / "corpora" / "get-corpora.sh"  # relative to PROJECT_ROOT
CORPORA_DIR = Path(
    os.environ.get("REPOMAP_CORPORA", Path.home() / ".cache" / "repomap-corpora")
).expanduser()
CORPORA = {  # name -> what it is (get-corpora.sh pins the versions; MANIFEST.tsv records them)
    "python": "Django",
    "rust": "Rust standard library",
    "cpp": "LLVM headers",
}
# Named only on request, never in a default set: one run takes many minutes. get-corpora.sh
# makes them with --large, under its own folder name.
LARGE_CORPORA = {"kernel": "Linux kernel"}
SCRIPT_NAMES = {"kernel": "large"}  # corpus -> get-corpora.sh's name (and folder), if it differs
MB = 1_000_000
POLL_SECONDS = 0.05  # psutil sampling period for the process tree's RSS


# --- corpora -----------------------------------------------------------------------------------


def materialize(names: Iterable[str]) -> dict[str, Path]:
    """Run get-corpora.sh for `names` (idempotent, fast when present); {name: corpus root}.
    A large corpus (LARGE_CORPORA) adds --large."""
    names = list(names)
    known = {**CORPORA, **LARGE_CORPORA}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SystemExit(f"unknown corpus {', '.join(unknown)}; choose from {', '.join(known)}")
    script = PROJECT_ROOT / GET_CORPORA
    roots = {name: CORPORA_DIR / SCRIPT_NAMES.get(name, name) for name in names}
    if not script.exists():
        if all(root.is_dir() for root in roots.values()):  # a checkout elsewhere (a worktree)
            return roots
        raise SystemExit(f"{script.resolve()} is missing; it materializes the corpora")
    large = ["--large"] if any(name in LARGE_CORPORA for name in names) else []
    subprocess.run(
        [
            "bash",
            str(GET_CORPORA),
            *large,
            "--only",
            ",".join(SCRIPT_NAMES.get(n, n) for n in names),
        ],
        cwd=PROJECT_ROOT,
        env={**os.environ, "REPOMAP_CORPORA": str(CORPORA_DIR)},
        stdout=sys.stderr,  # its summary table would mix with ours on stdout
        check=True,
    )
    return roots


def corpus_version(name: str) -> str:
    """The version get-corpora.sh recorded for corpus `name`, or "" if unknown."""
    try:
        lines = (CORPORA_DIR / "MANIFEST.tsv").read_text().splitlines()
    except OSError:
        return ""
    name = SCRIPT_NAMES.get(name, name)
    for line in lines[1:]:
        fields = line.split("\t")
        if fields[0] == name and len(fields) > 3:
            return fields[3]
    return ""


def indexed_files(root: Path, max_file_size: int | None = None) -> list[tuple[Path, str, int]]:
    """(path, language, size) of each file `repomap index` reads under `root`, by its own rules:
    discover.walk + code_files, minus files over the size limit (default: repomap's)."""
    from repomap.config import DEFAULT_MAX_FILE_SIZE
    from repomap.index.discover import code_files, walk

    limit = max_file_size or DEFAULT_MAX_FILE_SIZE
    return [
        (found.path, language, found.size)
        for found, language in code_files(walk(root))
        if found.size <= limit
    ]


def copy_tree(source: Path, target: Path, hard_links: bool = False) -> float:
    """Copy `source` to `target`; seconds taken. A real copy, so edits stay in it, or with
    `hard_links` (`cp -al`: no bytes copied, for a tree of gigabytes) a tree of links to the
    same files: then a file must go through own_file() before it is edited."""
    started = time.perf_counter()
    subprocess.run(["cp", "-al" if hard_links else "-a", str(source), str(target)], check=True)
    return time.perf_counter() - started


def own_file(path: Path) -> None:
    """Make `path` a file of its own if it is a hard link (same bytes and times), so writing
    to it leaves the file it was linked to untouched."""
    if path.stat().st_nlink == 1:
        return
    private = path.with_name(path.name + ".repomap-bench-own")
    shutil.copy2(path, private)  # bytes, mode and times
    os.replace(private, path)  # the link is replaced, not written through


def scratch_dir(prefix: str = "repomap-bench-") -> Path:
    """A fresh temporary folder; the caller removes it (shutil.rmtree) in a `finally`."""
    return Path(tempfile.mkdtemp(prefix=prefix))


# --- running repomap ---------------------------------------------------------------------------


def repomap_command() -> list[str]:
    """The installed `repomap` console script of this interpreter's environment."""
    script = Path(sys.executable).parent / "repomap"
    if script.exists():
        return [str(script)]
    found = shutil.which("repomap")
    return [found] if found else [sys.executable, "-m", "repomap.cli"]


def compile_bytecode(*trees: Path) -> None:
    """Compile the .pyc files of the repomap being measured (its package, extractors and
    migrations) and of any other `trees`, as `pip install` does. With PYTHONDONTWRITEBYTECODE
    set (as on the shared host) a tree whose __pycache__ is stale compiles every changed module
    in every run: ~20 ms of a 200 ms no-change run that no installed copy pays."""
    import compileall

    import repomap.extractors
    import repomap.migrations

    modules = (repomap, repomap.extractors, repomap.migrations)
    packages = [Path(str(module.__file__)).parent for module in modules]
    for tree in [*packages, *trees]:
        compileall.compile_dir(str(tree), quiet=1)


def database_bytes(db_path: Path, checkpoint: bool = True) -> int:
    """Size of an index on disk: main file plus WAL, after a TRUNCATE checkpoint."""
    if checkpoint:
        from repomap.store import open_index

        db = open_index(db_path)
        try:
            db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.conn.close()
    wal = db_path.with_name(db_path.name + "-wal")
    return db_path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


TABLE_BYTES_SQL = """SELECT coalesce(m.tbl_name, s.name) AS owner, sum(s.pgsize) AS bytes
FROM dbstat AS s LEFT JOIN sqlite_master AS m ON m.name = s.name
GROUP BY owner ORDER BY bytes DESC"""


def table_bytes(db_path: Path) -> dict[str, int]:
    """Bytes per table (its indexes included; FTS5 shadow tables apart), largest first."""
    from repomap.store import open_index

    db = open_index(db_path, readonly=True)
    try:
        return dict(db.conn.execute(TABLE_BYTES_SQL).fetchall())
    finally:
        db.conn.close()


def doc_lines(db_path: Path) -> int:
    """Lines of the doc files (Markdown, text) an index holds: indexed lines, as code's are."""
    from repomap.store import open_index

    db = open_index(db_path, readonly=True)
    try:
        return int(db.scalar("SELECT coalesce(sum(line_count), 0) FROM doc_files") or 0)
    finally:
        db.conn.close()


def remove_database(db_path: Path) -> None:
    """Delete an index and the files SQLite and repomap keep beside it."""
    for suffix in ("", "-wal", "-shm", ".lock"):
        db_path.with_name(db_path.name + suffix).unlink(missing_ok=True)


# --- timing ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timed:
    """One finished subprocess: wall time, CPU time, exit code, output and memory peaks."""

    seconds: float
    returncode: int
    stdout: str
    stderr: str
    max_process_rss: int | None  # bytes: the largest VmHWM of any process of the tree
    tree_peak_rss: int | None  # bytes: the largest sampled sum of RSS over the whole tree
    cpu_seconds: float  # user + system time of the command and its waited-for descendants
    timed_out: bool = False  # stopped (SIGKILL to its process group) when `timeout` ran out

    def json(self) -> dict:
        """stdout parsed as JSON (for `--json` commands)."""
        return json.loads(self.stdout)

    def check(self) -> Timed:
        """Self, or SystemExit with the command's stderr when it failed."""
        if self.returncode != 0:
            raise SystemExit(f"command failed (exit {self.returncode}):\n{self.stderr.strip()}")
        return self


def timed(
    command: Sequence[str],
    cwd: Path | None = None,
    env: dict | None = None,
    timeout: float | None = None,
) -> Timed:
    """Run `command`, timing its wall clock and CPU and sampling the memory of its process tree.
    After `timeout` seconds its process group is killed and the result says `timed_out`.

    Every POLL_SECONDS a thread lists the command and all its descendants (psutil) and reads
    each one's /proc/PID/status. `tree_peak_rss` is the largest sum of VmRSS seen at one instant:
    pages shared by forked workers count once per process, so it is an upper bound.
    `max_process_rss` is the largest VmHWM (the kernel's own peak RSS of one process) seen.
    Both miss what happens in a process's last period. Both are None without psutil.
    wait4's ru_maxrss is not used: Linux carries the pre-exec RSS of the forked child, i.e. of
    this (possibly large) Python process, into it.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=timeout is not None,  # its own process group, to kill at once
        )
        sampler = _TreeSampler(process.pid)
        stopped = threading.Event()
        killer = None
        if timeout is not None:
            killer = threading.Timer(timeout, _kill_group, (process.pid, stopped))
            killer.start()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        if killer is not None:
            killer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        tree_peak, process_peak = sampler.stop()
        out.seek(0)
        err.seek(0)
        return Timed(
            seconds,
            process.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            process_peak,
            tree_peak,
            usage.ru_utime + usage.ru_stime,
            stopped.is_set(),
        )


def _kill_group(pid: int, stopped: threading.Event) -> None:
    """SIGKILL to the process group `pid` leads (a timed() command out of time)."""
    stopped.set()
    with contextlib.suppress(ProcessLookupError):  # it ended as the timer fired
        os.killpg(pid, signal.SIGKILL)


class _TreeSampler:
    """Background thread: peak RSS sum over a process tree, and the largest per-process peak."""

    def __init__(self, pid: int) -> None:
        try:
            import psutil
        except ImportError:
            self.thread = None
            return
        self.psutil = psutil
        self.peak_sum = 0
        self.peak_one = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(pid,), daemon=True)
        self.thread.start()

    def _run(self, pid: int) -> None:
        psutil = self.psutil
        try:
            top = psutil.Process(pid)
        except psutil.Error:
            return
        while not self.done.is_set():
            try:
                pids = [pid, *(child.pid for child in top.children(recursive=True))]
            except psutil.Error:
                return
            total = 0
            for each in pids:
                rss, hwm = _memory(each)
                total += rss
                self.peak_one = max(self.peak_one, hwm)
            self.peak_sum = max(self.peak_sum, total)
            self.done.wait(POLL_SECONDS)

    def stop(self) -> tuple[int | None, int | None]:
        if self.thread is None:
            return None, None
        self.done.set()
        self.thread.join()
        return self.peak_sum, self.peak_one


def _memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a live process in bytes; zeros once it has gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass  # exited between the listing and the read
    return rss, hwm


# --- statistics --------------------------------------------------------------------------------


def median(values: Iterable[float]) -> float:
    """The median (the mean of the middle two for an even count)."""
    return statistics.median(list(values))


def percentile(values: Iterable[float], p: float) -> float:
    """The p-th percentile (0..100), interpolating linearly between ranks like numpy's default."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, not {p}")
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


# --- formatting --------------------------------------------------------------------------------


def markdown_table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], align: str | None = None
) -> str:
    """A GitHub markdown table; `align` is one letter per column, "l" or "r" (default left)."""
    rows = [[str(cell).replace("|", "\\|") for cell in row] for row in rows]
    align = (align or "l" * len(headers)).ljust(len(headers), "l")
    widths = [
        max([len(header), 3, *(len(row[i]) for row in rows)]) for i, header in enumerate(headers)
    ]

    def line(cells: Sequence[str]) -> str:
        padded = (
            cell.rjust(width) if a == "r" else cell.ljust(width)
            for cell, width, a in zip(cells, widths, align, strict=True)
        )
        return "| " + " | ".join(padded) + " |"

    rule = "| " + " | ".join(
        "-" * (w - 1) + ":" if a == "r" else "-" * w for w, a in zip(widths, align, strict=True)
    )
    return "\n".join([line(headers), rule + " |", *(line(row) for row in rows)])


def fmt_seconds(seconds: float) -> str:
    """`2.43 s`, `87 ms`, `0.4 ms`."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.01:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds * 1000:.1f} ms"


def fmt_bytes(count: float) -> str:
    """`12.3 MB`, `845 kB` (decimal units)."""
    if count >= MB:
        return f"{count / MB:.1f} MB"
    return f"{count / 1000:.0f} kB"


def fmt_count(count: int) -> str:
    """`456,123`."""
    return f"{count:,}"
