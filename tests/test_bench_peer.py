"""bench/peer.py: peers are read, reported and given up on as it says; the aider driver runs
cold, offline and outside the measured tree (when the peer's venv is installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("psutil")  # bench/common.py samples process memory with it

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import peer  # noqa: E402  (bench/ is a folder of scripts, not a package)


def test_parse_output_takes_the_last_json_object_line_past_noise():
    stdout = 'Scanning repo\n{"files": 1}\nnot json {\n{"files": 2, "aider": "0.86.2"}\n\n'
    assert peer.parse_output(stdout) == {"files": 2, "aider": "0.86.2"}


@pytest.mark.parametrize("stdout", ["", "Traceback (most recent call last):\n  boom\n", "[1, 2]\n"])
def test_parse_output_without_a_json_object_is_unavailable(stdout):
    with pytest.raises(peer.PeerUnavailable, match="no JSON result"):
        peer.parse_output(stdout)


def test_one_line_is_the_last_non_blank_line_shortened():
    assert peer.one_line("Collecting x\nERROR: No matching distribution\n  \n") == (
        "ERROR: No matching distribution"
    )
    long = peer.one_line("x" * 500, width=50)
    assert len(long) == 50 and long.endswith("…")
    assert peer.one_line("") == ""


def _runs(name: str, seconds: list[float]) -> peer.PeerRuns:
    return peer.PeerRuns(name, version="9.9", seconds=seconds, cpu_seconds=seconds)


def test_rows_give_the_ratio_and_the_verdict_on_django_against_the_fastest_peer():
    slow = _runs("slow", [20.0, 30.0, 40.0])
    fast = _runs("aider", [10.0, 20.0, 8.0])
    cold = [4.0, 12.0, 4.0]  # per-run ratios to the fast peer: 0.4, 0.6, 0.5
    rows = peer.rows([slow, fast], cold, [1.0, 2.0, 2.0], "python")
    assert [row[0] for row in rows] == [
        "peer: slow",
        "peer: aider-chat 9.9 repo map, cold (tags + PageRank, 1 process)",
    ]
    assert rows[0][4:] == ["", ""]  # only the fastest peer carries the target
    assert rows[1][1] == "10.00 s"
    assert "cold index = 0.50× peer" in rows[1][3]
    assert "10.00× floor" in rows[1][3]  # 10/1, 20/2, 8/2 -> median 10
    assert rows[1][4:] == ["cold index ≤ 0.5× peer", "PASS"]
    with_cpu = peer.rows([fast], cold, [1.0, 2.0, 2.0], "python", cold_cpu=[20.0, 20.0, 4.0])
    assert "0.50× peer (CPU 1.00×)" in with_cpu[0][3]  # 2.0, 1.0, 0.5 -> median 1
    over = peer.rows([fast], [6.0, 12.0, 6.0], [1.0, 1.0, 1.0], "python")
    assert over[0][5] == "**FAIL**"


def test_rows_elsewhere_have_the_ratio_but_no_target():
    [row] = peer.rows([_runs("aider", [10.0])], [4.0], [1.0], "rust")
    assert "cold index = 0.40× peer" in row[3]
    assert row[4:] == ["", ""]


def test_an_unavailable_peer_is_a_row_with_its_reason():
    gone = peer.PeerRuns("aider", unavailable="pip install aider-chat==0.86.2 failed: no network")
    [row] = peer.rows([gone], [4.0], [1.0], "python")
    assert row[1] == "unavailable: pip install aider-chat==0.86.2 failed: no network"
    assert row[4:] == ["", ""]
    assert peer.notes([gone]) == []


def test_a_peer_that_pip_cannot_install_is_unavailable_and_installed_again_next_time(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(peer, "PEERS_DIR", tmp_path)
    bogus = peer.Peer("bogus", "not a requirement", "1", BENCH / "peers" / "none.py", "bogus")
    with pytest.raises(peer.PeerUnavailable, match=r"^pip install not a requirement==1 failed"):
        peer.prepare(bogus, lambda message: None)
    assert (tmp_path / "bogus" / "venv" / "bin" / "python").exists()
    assert not (tmp_path / "bogus" / "venv" / "installed.txt").exists()  # not taken as ready


def test_run_reports_an_unknown_peer_and_still_measures(make_repo, tmp_path):
    root = make_repo({"pkg/a.py": "def f():\n    return 1\n"})
    result = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--root", str(root), "--runs", "1"]
        + ["--peers", "nosuch"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "| peer: nosuch" in result.stdout
    assert "unavailable: unknown peer (known: aider)" in result.stdout
    assert "repomap index, cold" in result.stdout


AIDER_PYTHON = peer.PEERS_DIR / "aider" / "venv" / "bin" / "python"


@pytest.mark.skipif(
    not (peer.PEERS_DIR / "aider" / "venv" / "installed.txt").exists(),
    reason="aider's venv is not installed (python bench/run.py installs it)",
)
def test_the_aider_driver_tags_and_ranks_every_file_cold_offline_and_outside_the_tree(
    make_repo, tmp_path
):
    root = make_repo(
        {
            "pkg/core.py": "class Engine:\n    def start(self):\n        return 1\n",
            "pkg/use.py": "from pkg.core import Engine\n\n\ndef run():\n    return Engine().start()\n",
            "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
        }
    )
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    listing = tmp_path / "files.txt"
    listing.write_text("pkg/core.py\npkg/use.py\nsrc/lib.rs\n")
    cache = tmp_path / "cache"
    command = [str(AIDER_PYTHON), str(peer.AIDER.driver), str(root), str(listing), str(cache)]
    done = subprocess.run(
        [*peer.offline_prefix(), *command], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = peer.parse_output(done.stdout)
    assert result["files"] == result["tagged_files"] == 3
    assert result["definitions"] >= 4  # Engine, start, run, add
    assert result["references"] >= 2  # Engine and start, used in use.py
    assert result["litellm_loaded"] is False
    assert cache.is_dir()  # the tags cache went where it was told
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "would not be cold" in again.stderr
