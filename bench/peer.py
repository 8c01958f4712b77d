"""Peers measured in the same run as repomap: pip-installable tools that index a whole tree.

Each peer lives in its own venv under ~/.cache/repomap-bench-peers/<name>/venv (or
$REPOMAP_BENCH_PEERS/<name>/venv), created on first use with `pip install <package>==<pinned>`;
repomap never depends on it. A peer that cannot be installed or run is reported as
"unavailable: <reason>" and the benchmark carries on. A peer runs without a network where the
system allows it (`unshare -rn`: a user namespace with no network interface but loopback), so
its figure cannot include a download.

    python = peer.prepare(peer.AIDER, progress)        # Path, or raises PeerUnavailable
    run = peer.measure(peer.AIDER, python, tree, files, scratch)   # one cold run

aider (aider-chat): bench/peers/aider_repomap.py drives `aider.repomap.RepoMap` over the files
repomap indexes, with a fresh tags cache: tags of every file (tree-sitter), the reference graph
and PageRank. See bench/README.md, "Peers in the same run".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import common

PEERS_DIR = Path(
    os.environ.get("REPOMAP_BENCH_PEERS", Path.home() / ".cache" / "repomap-bench-peers")
).expanduser()
DRIVERS = Path(__file__).resolve().parent / "peers"
INSTALL_TIMEOUT = 900  # seconds for `pip install` of a peer
COLD_VS_PEER = 0.5  # issue 20: cold index <= 0.5x the fastest pip-installable peer, on Django
TARGET_CORPORA = {"python"}  # where that target is set


class PeerUnavailable(Exception):
    """A peer could not be installed or run; str() is the one-line reason."""


@dataclass(frozen=True)
class Peer:
    name: str
    package: str
    version: str
    driver: Path  # run with the peer venv's python: ROOT FILE_LIST CACHE_DIR, prints JSON
    label: str  # what the table row says it does; {version} is the measured version

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


AIDER = Peer(
    "aider",
    "aider-chat",
    "0.86.2",
    DRIVERS / "aider_repomap.py",
    "peer: aider-chat {version} repo map, cold (tags + PageRank, 1 process)",
)
PEERS = {peer.name: peer for peer in (AIDER,)}


@dataclass
class PeerRuns:
    """One peer's figures on one corpus, one entry per run (or why there are none)."""

    name: str
    version: str = ""
    unavailable: str = ""
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    tree_rss: list[int] = field(default_factory=list)
    stats: dict = field(default_factory=dict)  # the driver's JSON of the last run
    offline: bool = False
    python: Path | None = None  # of the peer's venv, once prepared
    stopped_after: float | None = None  # seconds: a run out of its time limit, stopped


def start(names: list[str], progress) -> list[PeerRuns]:
    """A PeerRuns for each named peer, its venv ready (installed if need be) or `unavailable`."""
    started = []
    for name in names:
        runs = PeerRuns(name)
        if name not in PEERS:
            runs.unavailable = f"unknown peer (known: {', '.join(PEERS)})"
        else:
            try:
                runs.python = prepare(PEERS[name], progress)
            except PeerUnavailable as error:
                runs.unavailable = str(error)
        started.append(runs)
    return started


def run_all(
    peers: list[PeerRuns],
    tree: Path,
    files: list[Path],
    scratch: Path,
    timeout: float | None = None,
) -> None:
    """One cold run of each available peer; a failure, or a run still going after `timeout`
    seconds (then stopped), makes the peer unavailable on this corpus (its earlier runs
    dropped, so every figure kept pairs with a repomap run)."""
    for runs in peers:
        if runs.python is None or runs.unavailable:
            continue
        try:
            measure(PEERS[runs.name], runs.python, tree, files, scratch, runs, timeout)
        except PeerUnavailable as error:
            runs.unavailable = str(error)
            runs.seconds.clear()
            runs.cpu_seconds.clear()
            runs.tree_rss.clear()


def prepare(peer: Peer, progress) -> Path:
    """The Python of `peer`'s venv, installing it first when missing or of another version."""
    home = PEERS_DIR / peer.name
    venv = home / "venv"
    python = venv / "bin" / "python"
    marker = venv / "installed.txt"  # written last: a half-made venv is made again
    if python.exists() and marker.exists() and marker.read_text().strip() == peer.requirement:
        return python
    progress(f"installing peer {peer.requirement} into {venv} (once)")
    shutil.rmtree(venv, ignore_errors=True)
    home.mkdir(parents=True, exist_ok=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            peer.requirement,
        ],
    ]
    for step in steps:
        try:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise PeerUnavailable(f"{' '.join(step[-3:])}: {one_line(str(error))}") from None
        if done.returncode != 0:
            what = "pip install " + peer.requirement if "pip" in step else "python -m venv"
            raise PeerUnavailable(
                f"{what} failed (exit {done.returncode}): {one_line(done.stderr or done.stdout)}"
            )
    marker.write_text(peer.requirement + "\n")
    return python


def measure(
    peer: Peer,
    python: Path,
    tree: Path,
    files: list[Path],
    scratch: Path,
    runs: PeerRuns,
    timeout: float | None = None,
) -> None:
    """One cold run of `peer` over `files` (relative to `tree`), appended to `runs`; its cache
    goes to a new folder in `scratch`, removed afterwards. Raises PeerUnavailable on failure
    or when the run was stopped after `timeout` seconds (runs.stopped_after says so)."""
    listing = scratch / f"{peer.name}-files.txt"
    listing.write_text("".join(f"{path}\n" for path in files))
    cache = scratch / f"{peer.name}-cache"
    shutil.rmtree(cache, ignore_errors=True)
    offline = offline_prefix()
    command = [*offline, str(python), str(peer.driver), str(tree), str(listing), str(cache)]
    try:
        run = common.timed(command, timeout=timeout)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if run.timed_out:
        runs.stopped_after = run.seconds
        raise PeerUnavailable(
            f"not run to the end: stopped after {run.seconds:.0f} s, the time limit on this "
            f"corpus (peak RSS by then {common.fmt_bytes(run.tree_peak_rss or 0)})"
        )
    if run.returncode != 0:
        raise PeerUnavailable(
            f"{peer.name} failed (exit {run.returncode}): {one_line(run.stderr or run.stdout)}"
        )
    runs.stats = parse_output(run.stdout)
    runs.version = str(runs.stats.get("aider") or runs.stats.get("version") or peer.version)
    runs.seconds.append(run.seconds)
    runs.cpu_seconds.append(run.cpu_seconds)
    runs.tree_rss.append(run.tree_peak_rss or 0)
    runs.offline = bool(offline)


def offline_prefix() -> list[str]:
    """["unshare", "-rn"] when this system lets an unprivileged run drop the network, else []."""
    if shutil.which("unshare") is None:
        return []
    try:
        ok = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ["unshare", "-rn"] if ok.returncode == 0 else []


def parse_output(stdout: str) -> dict:
    """The driver's result: the last line of stdout that is a JSON object."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(result, dict):
                return result
    raise PeerUnavailable(f"no JSON result in the peer's output: {one_line(stdout) or '(empty)'}")


def one_line(text: str, width: int = 200) -> str:
    """The last non-blank line of `text` (where pip and tracebacks put the cause), shortened."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def rows(
    peers: list[PeerRuns],
    cold: list[float],
    floor: list[float],
    corpus: str,
    cold_cpu: list[float] | None = None,
) -> list[list[str]]:
    """Table rows of run.py (measure, median, range, ratio, target, result), one per peer: its
    cold median and `repomap cold / peer cold` (median of per-run ratios; the same of CPU
    seconds when `cold_cpu` is given); the target and its verdict on the fastest peer's row, on
    the corpora where the target is set."""
    measured = [runs for runs in peers if runs.seconds]
    fastest = min(measured, key=lambda runs: common.median(runs.seconds), default=None)
    table = []
    for runs in peers:
        peer = PEERS.get(runs.name)
        version = runs.version or (peer.version if peer else "")
        label = peer.label.format(version=version) if peer else f"peer: {runs.name}"
        if not runs.seconds:
            why = runs.unavailable if runs.stopped_after else f"unavailable: {runs.unavailable}"
            table.append([label, why, "", "", "", ""])
            continue
        ratio = common.median(_ratios(cold, runs.seconds))
        vs_floor = common.median(_ratios(runs.seconds, floor))
        cpu = ""
        if cold_cpu and runs.cpu_seconds:
            cpu = f" (CPU {common.median(_ratios(cold_cpu, runs.cpu_seconds)):.2f}×)"
        target = verdict = ""
        if runs is fastest and corpus in TARGET_CORPORA:
            target = f"cold index ≤ {COLD_VS_PEER:g}× peer"
            verdict = "PASS" if ratio <= COLD_VS_PEER else "**FAIL**"
        table.append(
            [
                label,
                common.fmt_seconds(common.median(runs.seconds)),
                f"{common.fmt_seconds(min(runs.seconds))} – {common.fmt_seconds(max(runs.seconds))}",
                f"{vs_floor:.2f}× floor; cold index = {ratio:.2f}× peer{cpu}",
                target,
                verdict,
            ]
        )
    return table


def notes(peers: list[PeerRuns]) -> list[str]:
    """Markdown bullet lines: what each measured peer did, from its driver's figures."""
    lines = []
    for runs in peers:
        if not runs.seconds:
            continue
        stats = runs.stats
        lines.append(
            f"- peer {runs.name} {runs.version}: {fmt(stats.get('files'))} files given, "
            f"{fmt(stats.get('tagged_files'))} with tags, {fmt(stats.get('definitions'))} "
            f"definitions, {fmt(stats.get('references'))} references, "
            f"{fmt(stats.get('ranked'))} ranked entries; inside the process (last run): tags "
            f"{stats.get('tags_seconds')} s, graph + PageRank {stats.get('rank_seconds')} s, "
            f"imports {stats.get('import_seconds')} s; CPU "
            f"{common.fmt_seconds(common.median(runs.cpu_seconds))} (one process); peak RSS "
            f"{common.fmt_bytes(common.median(runs.tree_rss))}; "
            + ("no network (unshare -rn)" if runs.offline else "network not cut off")
            + (
                f"; litellm loaded: {stats.get('litellm_loaded')}"
                if "litellm_loaded" in stats
                else ""
            )
        )
    return lines


def fmt(value) -> str:
    return common.fmt_count(value) if isinstance(value, int) else "?"


def _ratios(numerators: list[float], denominators: list[float]) -> list[float]:
    return [n / d for n, d in zip(numerators, denominators, strict=True)]
