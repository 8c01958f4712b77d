"""Faults while indexing: `repomap index` killed at random points, readers racing a writer, two
writers at once. The index must stay whole: it opens, passes SQLite's and FTS5's checks, answers
queries, holds every file either wholly or not at all, and the next run completes it to exactly
what a clean index of the same tree holds."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from conftest import run_cli
from index_dump import check_integrity, connect, file_dumps, full_dump
from synthetic_repo import change_repo, write_repo

from repomap import store
from repomap.errors import ExitCode
from repomap.index.workers import Ahead, run_all
from repomap.search import text as query
from repomap.search.symbols import search_symbols

FILES = 900  # three batches of 400 files: kills land inside and between transactions
SEED = int(os.environ.get("REPOMAP_CRASH_SEED", "7"))


def _index_command(root: Path, db: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "repomap.cli", "index", str(root), "--db", str(db), *extra]


def _start_index(root: Path, db: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        _index_command(root, db, "--workers", "2", "--json", *extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # no pipes: an orphaned worker would hold them open
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill takes the workers too
    )


def _kill_after(process: subprocess.Popen, seconds: float, group: bool = True) -> bool:
    """SIGKILL the run (and its workers) after `seconds`; False if it finished first."""
    try:
        process.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        if group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.wait()
        return True


def _clean_index(root: Path, db: Path) -> float:
    started = time.monotonic()
    result = subprocess.run(
        _index_command(root, db, "--workers", "2"), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return time.monotonic() - started


@dataclass(frozen=True)
class Trees:
    before: Path  # the repository as first indexed
    after: Path  # the same after a day of edits (change_repo)
    before_db: Path  # clean indexes of each
    after_db: Path
    before_dump: dict
    after_dump: dict
    seconds: float  # how long the clean index of `before` took here, now


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> Trees:
    base = tmp_path_factory.mktemp("trees")
    before, after = base / "before", base / "after"
    write_repo(before, FILES)
    shutil.copytree(before, after)
    change_repo(after, FILES)
    seconds = _clean_index(before, base / "before.db")
    _clean_index(after, base / "after.db")
    return Trees(
        before,
        after,
        base / "before.db",
        base / "after.db",
        full_dump(base / "before.db"),
        full_dump(base / "after.db"),
        seconds,
    )


def _assert_whole_files(db: Path, *clean_dumps: dict) -> int:
    """Every file in the index has exactly the rows a clean index has for its bytes."""
    with closing(connect(db)) as conn:
        found = file_dumps(conn)
    for path, rows in found.items():
        expected = [d["files"][path] for d in clean_dumps if path in d["files"]]
        matching = [e for e in expected if e[0][1] == rows[0][1]]  # same hash
        assert matching, f"{path}: hash {rows[0][1]} is in no clean index"
        assert rows == matching[0], f"{path} is half-written"
    return len(found)


def _assert_answers_queries(db: Path) -> None:
    with store.reading(db) as conn:
        search_symbols(conn, "record", None, None, None, 5)
        query.search_text(conn, "connection", limit=5, log=False)
        query.search_text(conn, "Failed", mode="literal", limit=5, log=False)


def _assert_same_as_clean(db: Path, clean: dict) -> None:
    got = full_dump(db)
    assert got["files"].keys() == clean["files"].keys()
    for path, rows in clean["files"].items():
        assert got["files"][path] == rows, path
    for key in ("declarations", "file_ranks", "symbol_ranks", "name_stats"):
        assert got[key] == clean[key], key


def _crash_repeatedly(
    root: Path,
    db: Path,
    kills: int,
    window: float,
    rng: random.Random,
    *clean: dict,
    extra: tuple[str, ...] = (),
) -> list[tuple[float, int]]:
    """Kill `repomap index` (with `extra` arguments) `kills` times at random moments; check the
    index after each."""
    history = []
    for _ in range(kills):
        delay = rng.uniform(0.2, 1.0) * window
        killed = _kill_after(_start_index(root, db, *extra), delay)
        if not db.exists():
            history.append((round(delay, 2), -1))
            continue
        check_integrity(db)
        whole = _assert_whole_files(db, *clean)
        if whole:
            _assert_answers_queries(db)
        history.append((round(delay, 2), whole if killed else -2))
    return history


@pytest.mark.slow
def test_index_killed_at_random_points_then_resumed_equals_a_clean_index(trees, tmp_path):
    rng = random.Random(SEED)
    root = tmp_path / "repo"
    shutil.copytree(trees.before, root)
    db = tmp_path / "crash.db"
    history = _crash_repeatedly(root, db, 4, trees.seconds, rng, trees.before_dump)
    counts = [files for _, files in history if files >= 0]  # -2: that run finished first
    assert counts == sorted(counts), f"a restart lost what a killed run wrote: {history}"
    assert any(0 < files < len(trees.before_dump["files"]) for files in counts), history
    resumed = subprocess.run(_index_command(root, db, "--workers", "2"), capture_output=True)
    assert resumed.returncode == 0, resumed.stderr
    check_integrity(db)
    _assert_same_as_clean(db, trees.before_dump)


@pytest.mark.slow
def test_forced_run_killed_at_random_points_keeps_whole_files_then_completes(trees, tmp_path):
    """`index --force` empties the code files' rows at its start and writes them again batch by
    batch: a kill leaves whole files, of the old bytes or the new, and the next run (forced or
    not) brings the index to what a clean index holds."""
    rng = random.Random(SEED + 2)
    root = tmp_path / "repo"
    shutil.copytree(trees.before, root)
    db = tmp_path / "crash.db"
    shutil.copy(trees.before_db, db)
    change_repo(root, FILES)
    history = _crash_repeatedly(
        root, db, 3, trees.seconds, rng, trees.before_dump, trees.after_dump, extra=("--force",)
    )
    assert any(files >= 0 for _, files in history), history
    resumed = subprocess.run(_index_command(root, db, "--workers", "2"), capture_output=True)
    assert resumed.returncode == 0, resumed.stderr
    check_integrity(db)
    _assert_same_as_clean(db, trees.after_dump)


@pytest.mark.slow
def test_update_killed_at_random_points_keeps_old_or_new_files_whole_then_completes(
    trees, tmp_path
):
    rng = random.Random(SEED + 1)
    root = tmp_path / "repo"
    shutil.copytree(trees.before, root)  # mtimes kept: the copied index sees nothing changed
    db = tmp_path / "crash.db"
    shutil.copy(trees.before_db, db)
    change_repo(root, FILES)
    _crash_repeatedly(root, db, 3, trees.seconds / 2, rng, trees.before_dump, trees.after_dump)
    resumed = subprocess.run(_index_command(root, db, "--workers", "2"), capture_output=True)
    assert resumed.returncode == 0, resumed.stderr
    check_integrity(db)
    _assert_same_as_clean(db, trees.after_dump)


def test_a_killed_index_does_not_leave_its_workers_holding_the_lock(make_repo, tmp_path):
    """The kernel kills the parent (the OOM killer picks one process): a worker still parsing
    must not keep the next `repomap index` out."""
    slow = "; ".join(f"name_{i} = {i}" for i in range(80_000)) + "\n"  # 1.7 MB: seconds to parse
    root = make_repo({"slow.py": slow, **{f"m{i}.py": f"X{i} = {i}\n" for i in range(20)}})
    db = tmp_path / "index.db"
    process = _start_index(root, db)
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + 60
    while len(parent.children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a worker is parsing slow.py (the largest file goes first)
    workers = parent.children()
    assert _kill_after(process, 0, group=False)
    try:
        assert any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers)
        (root / "slow.py").unlink()  # the next run is quick; the orphan still parses it
        result = subprocess.run(
            _index_command(root, db, "--workers", "2", "--json"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["results"][0]["files"] == 20
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # any orphaned worker


def _group(pgid: int) -> list[psutil.Process]:
    """The processes still alive in a process group (a run and the workers it forked)."""
    found = []
    for process in psutil.process_iter():
        with suppress(psutil.Error):
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
    return found


@pytest.mark.parametrize(
    "signal_number, to_group, exit_code, message",
    [
        (signal.SIGINT, True, 130, "interrupted"),  # Ctrl-C: the terminal signals the group
        (signal.SIGTERM, False, 143, "terminated"),  # `kill PID`
        (signal.SIGTERM, True, 143, "terminated"),  # a service manager stopping the group
    ],
)
def test_a_signal_stops_index_and_its_workers_and_the_next_run_completes(
    tmp_path, signal_number, to_group, exit_code, message
):
    """Workers were left running (SIGTERM) or printed tracebacks (Ctrl-C); now the run stops
    them, keeps what it committed, exits 128 + the signal with one line."""
    slow = "; ".join(f"name_{i} = {i}" for i in range(80_000)) + "\n"  # seconds to parse
    root = tmp_path / "repo"
    write_repo(root, 300)
    (root / "slow_a.py").write_text(slow)
    (root / "slow_b.py").write_text(slow)
    db = tmp_path / "index.db"
    stderr_path = tmp_path / "stderr"
    with open(stderr_path, "w") as stderr:  # a file, not a pipe a surviving worker holds open
        process = subprocess.Popen(
            _index_command(root, db, "--workers", "2"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        parent = psutil.Process(process.pid)
        deadline = time.monotonic() + 60
        while len(parent.children()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # both workers parse a slow file (the largest go first)
        assert process.poll() is None, "the run ended before the signal"
        (os.killpg if to_group else os.kill)(process.pid, signal_number)
        assert process.wait(timeout=60) == exit_code
        gone, alive = psutil.wait_procs(_group(process.pid), timeout=5)
        assert alive == []
        assert stderr_path.read_text() == (
            f"error: {message}; the index keeps every file written so far\n"
        )
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # any worker left behind
    check_integrity(db)
    _clean_index(root, tmp_path / "clean.db")
    resumed = subprocess.run(
        _index_command(root, db, "--workers", "2"), capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    check_integrity(db)
    assert full_dump(db) == full_dump(tmp_path / "clean.db")


# --- readers and writers at the same time ------------------------------------------------------


@dataclass
class ReaderLog:
    rounds: int = 0
    during_write: int = 0  # rounds that started and ended while the writer ran
    errors: list = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.errors = []


def _loop(log: ReaderLog, writing: subprocess.Popen, stop: threading.Event, read) -> None:
    while not stop.is_set():
        running = writing.poll() is None
        try:
            read(log)
        except Exception as error:  # noqa: BLE001 - every failure is the finding
            log.errors.append(f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
        log.rounds += 1
        log.during_write += running and writing.poll() is None


def _editor_reader(db: Path, trees: Trees):
    """An editor's own connection: plain sqlite3, default 5 s timeout, whole-file snapshots."""

    def read(log: ReaderLog) -> None:
        with closing(sqlite3.connect(db)) as conn:
            snapshot = file_dumps(conn)
        for path, rows in snapshot.items():
            if rows not in (
                trees.before_dump["files"].get(path),
                trees.after_dump["files"].get(path),
            ):
                raise AssertionError(f"{path} is half-replaced")

    return read


def _api_reader(db: Path):
    def read(log: ReaderLog) -> None:
        _assert_answers_queries(db)

    return read


def _cli_reader(db: Path, root: Path):
    def read(log: ReaderLog) -> None:
        for args in (("search-text", "connection pool"), ("symbols", "record")):
            # --no-refresh: a reader only (by default it would re-index the changed files
            # itself, racing the writer under test for the lock)
            result = run_cli(*args, "--db", db, "--root", root, "--json", "--no-refresh",
                             timeout=60)  # fmt: skip
            if result.returncode not in (0, 1):  # 1: nothing found
                raise AssertionError(f"{args[0]}: {result.stderr.strip()}")
            json.loads(result.stdout)

    return read


def _mcp_reader(db: Path, root: Path):
    import anyio
    from mcp.client import Client

    from repomap.config import resolve
    from repomap.serve.mcp_server import build_server

    server = build_server(resolve(root, db), refresh=False)
    calls = [
        ("search_text", {"query": "connection pool"}),
        ("search_symbols", {"query": "record"}),
        ("outline", {"path": "py/pkg0"}),
    ]

    async def session() -> list:
        async with Client(server) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    def read(log: ReaderLog) -> None:
        for (name, _), result in zip(calls, anyio.run(session), strict=True):
            if result.is_error:
                raise AssertionError(f"{name}: {result.content[0].text}")

    return read


@pytest.mark.slow
def test_readers_never_see_a_locked_database_or_a_half_replaced_file(trees, tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(trees.before, root)
    db = tmp_path / "index.db"
    shutil.copy(trees.before_db, db)
    change_repo(root, FILES)
    readers = {
        "editor": _editor_reader(db, trees),
        "api": _api_reader(db),
        "cli": _cli_reader(db, root),
        "mcp": _mcp_reader(db, root),
    }
    logs = {name: ReaderLog() for name in readers}
    stop = threading.Event()
    writing = _start_index(root, db)
    threads = [
        threading.Thread(target=_loop, args=(logs[name], writing, stop, read), daemon=True)
        for name, read in readers.items()
    ]
    for thread in threads:
        thread.start()
    assert writing.wait(timeout=300) == 0
    stop.set()
    for thread in threads:
        thread.join(timeout=120)
    assert {name: log.errors for name, log in logs.items()} == {name: [] for name in logs}
    assert all(log.during_write > 0 for log in logs.values()), logs
    _assert_same_as_clean(db, trees.after_dump)


def test_a_second_index_of_the_same_database_exits_busy_and_the_first_completes(
    make_repo, tmp_path
):
    slow = "; ".join(f"name_{i} = {i}" for i in range(60_000)) + "\n"
    files = {f"m{i}.py": f"def f{i}():\n    'doc {i}'\n" for i in range(40)}
    root = make_repo({"slow.py": slow, **files})
    clean = make_repo({"slow.py": slow, **files}, root=tmp_path / "clean")
    _clean_index(clean, tmp_path / "clean.db")
    db = tmp_path / "index.db"
    first = _start_index(root, db)
    parent = psutil.Process(first.pid)
    deadline = time.monotonic() + 60
    while len(parent.children()) < 2 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # workers run inside the lock: from now on it is held
    second = subprocess.run(
        _index_command(root, db, "--workers", "2"), capture_output=True, text=True, timeout=120
    )
    assert first.poll() is None, "the first run ended before the second started"
    assert second.returncode == ExitCode.BUSY
    assert second.stderr == (
        f"error: another `repomap index` is updating {db.resolve()}; try again when it ends\n"
    )
    assert first.wait(timeout=120) == 0
    check_integrity(db)
    assert full_dump(db) == full_dump(tmp_path / "clean.db")


# --- a worker process that dies ----------------------------------------------------------------


def _dies_on_3_and_11(item: int) -> int:
    if item in (3, 11):  # what the OOM killer or a segfault in a parser does
        os.kill(os.getpid(), signal.SIGKILL)
    return item * 10


def test_run_all_names_the_items_that_kill_their_process_and_does_all_the_others():
    results = list(run_all(_dies_on_3_and_11, range(40), 2, on_crash=lambda item: -item))
    assert sorted(r for r in results if r >= 0) == [i * 10 for i in range(40) if i not in (3, 11)]
    assert sorted(r for r in results if r < 0) == [-11, -3]


def _first_is_slow(item: int) -> int:
    if item == 0:
        time.sleep(0.5)  # the other worker finishes many tasks meanwhile
    return item


def test_run_all_yields_results_in_the_items_order_not_the_order_they_finish():
    """The index numbers files in the order results come: completion order made ids differ
    between two runs of one tree."""
    assert list(run_all(_first_is_slow, range(60), 2, on_crash=lambda item: -1)) == list(range(60))


def _large_result(item: int) -> bytes:
    return bytes(20_000_000)  # seconds of the worker's time go to sending it through a pipe


def test_stopping_while_workers_send_large_results_does_not_hang():
    """A worker killed halfway through sending a result left the pool's reader waiting for the
    rest forever: `repomap index` on a full disk hung with its workers killed."""
    for attempt in range(4):
        stop = threading.Event()
        results = Ahead(run_all(_large_result, range(20), 2, on_crash=len, stop=stop), 2, stop)
        assert len(next(results)) == 20_000_000
        time.sleep(0.05 * attempt)  # the kill lands at another point of a send each time
        closer = threading.Thread(target=results.close, daemon=True)
        closer.start()
        closer.join(timeout=30)
        assert not closer.is_alive(), f"close() hung (attempt {attempt})"


def test_results_are_taken_ahead_of_a_busy_consumer_up_to_the_limit():
    """The workers keep extracting while the writer is busy; no more than `limit` wait."""
    taken: list[int] = []

    def produce():
        for i in range(50):
            taken.append(i)
            yield i

    with Ahead(produce(), 10) as results:
        assert next(results) == 0
        deadline = time.monotonic() + 10
        while len(taken) < 12 and time.monotonic() < deadline:  # 10 waiting, 1 taken, 1 held
            time.sleep(0.01)
        time.sleep(0.1)
        assert len(taken) == 12
        assert list(results) == list(range(1, 50))


def test_taking_ahead_hands_an_error_to_the_consumer_and_stops_when_closed():
    def failing():
        yield 1
        raise OSError("no more processes")

    with Ahead(failing(), 4) as results:
        assert next(results) == 1
        with pytest.raises(OSError, match="no more processes"):
            next(results)
    closed = threading.Event()

    def endless():
        try:
            while True:
                yield 0
        finally:
            closed.set()  # a pool's generator shuts its pool down here

    results = Ahead(endless(), 4)
    assert next(results) == 0
    results.close()  # returns, though the producer never ends
    assert closed.is_set()
    with pytest.raises(StopIteration):
        next(results)


def test_a_worker_killed_mid_run_neither_hangs_the_index_nor_loses_its_files(tmp_path):
    """multiprocessing.Pool waited forever for a dead worker's files, holding the lock."""
    root = tmp_path / "repo"
    write_repo(root, 300)
    _clean_index(root, tmp_path / "clean.db")
    db = tmp_path / "index.db"
    process = _start_index(root, db)
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + 60
    while len(parent.children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    parent.children()[0].kill()
    assert process.poll() is None, "the run ended before a worker could be killed"
    assert process.wait(timeout=120) == 0
    check_integrity(db)
    assert full_dump(db) == full_dump(tmp_path / "clean.db")


def test_every_test_docs_reliability_names_exists():
    """docs/reliability.md's third column stays true as tests are renamed."""
    import re

    tests = Path(__file__).parent
    text = (tests.parent / "docs" / "reliability.md").read_text()
    named = re.findall(r"`(?:(test_\w+\.py)::|::)(test_\w+)`", text)
    assert len(named) > 50
    missing, file = [], None
    for named_file, test in named:
        file = named_file or file
        if f"def {test}(" not in (tests / file).read_text():
            missing.append(f"{file}::{test}")
    assert missing == []
