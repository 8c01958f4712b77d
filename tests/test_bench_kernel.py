"""bench/run.py --corpus kernel: a large corpus is fetched with --large, copied with hard links
that are never written through, indexed through its own .repomapignore, and measured against
its own targets; peers out of time are stopped and said so."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("psutil")  # bench/common.py samples process memory with it

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import common  # noqa: E402  (bench/ is a folder of scripts, not a package)
import peer  # noqa: E402
import run  # noqa: E402


def test_timed_stops_a_command_out_of_time_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time; "
        "child = subprocess.Popen(['sleep', '30']); "
        f"open({str(pid_file)!r}, 'w').write(str(child.pid)); time.sleep(30)"
    )
    started = time.perf_counter()
    result = common.timed([sys.executable, "-c", script], timeout=1.0)
    assert result.timed_out
    assert result.returncode == -9
    assert time.perf_counter() - started < 10
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)  # the whole process group went, not only the leader


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_timed_in_time_is_not_timed_out():
    result = common.timed([sys.executable, "-c", "pass"], timeout=30.0).check()
    assert not result.timed_out and result.returncode == 0


def test_own_file_breaks_a_hard_link_and_keeps_bytes_mode_and_times(tmp_path):
    original = tmp_path / "corpus.c"
    original.write_bytes(b"int x;\n")
    os.utime(original, ns=(1_000_000_000, 2_000_000_000))
    linked = tmp_path / "copy.c"
    os.link(original, linked)
    common.own_file(linked)
    assert linked.stat().st_nlink == original.stat().st_nlink == 1
    assert linked.read_bytes() == b"int x;\n"
    assert linked.stat().st_mtime_ns == 2_000_000_000
    assert stat.S_IMODE(linked.stat().st_mode) == stat.S_IMODE(original.stat().st_mode)
    linked.write_bytes(b"int y;\n")
    assert original.read_bytes() == b"int x;\n"
    common.own_file(linked)  # a file of its own already: left as it is
    assert linked.read_bytes() == b"int y;\n"


def test_a_large_corpus_is_fetched_with_large_under_the_scripts_name(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    script = tmp_path / "shared" / "corpora" / "get-corpora.sh"  # ../shared from the project
    script.parent.mkdir(parents=True)
    called = tmp_path / "called.txt"
    script.write_text(f'echo "$@" >> {called}\n')
    corpora = tmp_path / "corpora"
    monkeypatch.setattr(common, "PROJECT_ROOT", project)
    monkeypatch.setattr(common, "CORPORA_DIR", corpora)
    assert common.materialize(["kernel"]) == {"kernel": corpora / "large"}
    assert common.materialize(["rust"]) == {"rust": corpora / "rust"}
    assert called.read_text().splitlines() == ["--large --only large", "--only rust"]
    with pytest.raises(SystemExit, match="unknown corpus linux"):
        common.materialize(["linux"])


def test_a_peer_out_of_time_is_stopped_and_its_row_says_so(tmp_path, monkeypatch):
    driver = tmp_path / "slow_driver.py"
    driver.write_text("import time\ntime.sleep(30)\nprint('{}')\n")
    slow = peer.Peer("slow", "slow-package", "1.0", driver, "peer: slow {version}")
    monkeypatch.setattr(peer, "PEERS", {"slow": slow})
    tree = tmp_path / "tree"
    tree.mkdir()
    runs = peer.PeerRuns("slow", python=Path(sys.executable))
    started = time.perf_counter()
    peer.run_all([runs], tree, [Path("a.c")], tmp_path, timeout=1.0)
    assert time.perf_counter() - started < 10
    assert runs.stopped_after is not None and runs.stopped_after < 10
    assert runs.unavailable.startswith("not run to the end: stopped after 1 s")
    assert runs.seconds == []
    [row] = peer.rows([runs], [4.0], [1.0], "kernel")
    assert row[1] == runs.unavailable  # said as it is, not as "unavailable: ..."


def _snapshot(root: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def test_a_large_corpus_is_indexed_through_its_ignore_file_and_measured_against_its_targets(
    make_repo,
):
    files = {
        ".gitignore": "/*\n",  # as the Debian kernel tree's: everything ignored
        "kernel/sched.c": "/** Pick the next task. */\nint pick_next(void) { return 0; } /* a */\n"
        'const char *name = "sched";\n',
        "kernel/fork.c": '#include "sched.h"\nint do_fork(void) { return pick_next(); }\n',
        "kernel/sched.h": "int pick_next(void);\n#define MAX_TASKS 64\n",
        "include/cpp.h": "namespace scheduling { int weight(); }\n",
        "lib/sort.c": "/* sort helpers for tasks */\nvoid sort(int *a, int n) { }\n",
    }
    root = make_repo(files)
    before = _snapshot(root)
    corpus = run.Corpus("kernel", "Linux kernel (test)", root, large=run.LARGE["kernel"])
    runs = run.measure(corpus, 1, lambda message: None, peers="none")
    assert _snapshot(root) == before
    assert not (root / ".repomapignore").exists()
    assert all(path.stat().st_nlink == 1 for path in root.rglob("*") if path.is_file())
    languages = {str(path): language for path, language, _ in corpus.files}
    assert languages == {
        "kernel/sched.c": "c",
        "kernel/fork.c": "c",
        "kernel/sched.h": "c",
        "include/cpp.h": "cpp",  # C++ syntax: read (and parsed for the floor) as C++
        "lib/sort.c": "c",
    }
    assert runs.summary["files"] == 5  # found only through the copy's `!/*`
    assert runs.warnings == []
    extras = runs.large
    assert extras is not None
    assert (extras.map_failed, extras.rank_failed) == ("", "")
    assert len(extras.map) == len(extras.map_no_refresh) == len(extras.rank) == 1
    assert extras.rank_parts["counts"]["files"] == 5
    assert len(extras.search_p95) == 1 and extras.search_p95[0] > 0
    text = run.report(corpus, runs, 1)
    for row in ("`repomap map`", "search_text p95", "ranking alone", "≤ 1500 MB", "≤ 180 s"):
        assert row in text
    assert "search_text by query class" in text
    # cold × floor, no change, one file, largest process, database; the six rows of its own
    assert text.count("PASS") + text.count("FAIL") == 11


def test_the_floor_parses_every_file_once_in_batches_with_its_language(tmp_path, monkeypatch):
    files = []
    for number, (suffix, language) in enumerate([(".c", "c"), (".h", "cpp"), (".c", "c")]):
        path = tmp_path / f"f{number}{suffix}"
        path.write_bytes(b"int f%d(void);\n" % number)
        files.append((path, language))
    parsed: list[list[tuple[bytes, str]]] = []
    real = run.parse_floor

    def recording(sources: list[tuple[bytes, str]]) -> tuple[float, float]:
        parsed.append(list(sources))
        return real(sources)

    monkeypatch.setattr(run, "parse_floor", recording)
    monkeypatch.setattr(run, "FLOOR_BATCH_BYTES", 20)  # two files a batch
    wall, cpu = run.floor_of_files(files)
    assert [len(batch) for batch in parsed] == [2, 1]
    assert [item for batch in parsed for item in batch] == [
        (path.read_bytes(), language) for path, language in files
    ]
    assert wall > 0 and cpu >= 0
