"""Records: commit history and data files (index/history.py, index/records.py).

    python bench/records.py history [--commits 50000] [--runs 3]
    python bench/records.py real REPOSITORY [--runs 3]
    python bench/records.py data [--corpora python,rust,cpp] [--runs 3]

history: a synthetic repository of N commits made with `git fast-import` (each changes one of
500 files; one in five has a body; four authors, one non-ASCII), then
  - the whole history indexed into a fresh index (git log + parse + write), median of --runs;
  - one new commit read incrementally (`update_history` after `git commit`), median of 9;
  - literal `search_commits` latency over 300 queries (words of subjects, author names, paths,
    strings found nowhere, which scan every commit), p50/p95/max.
real: a real repository's history (a copy of REPOSITORY's HEAD history is read, not written
to): indexed whole into a fresh index, median of --runs.
data: per corpus, the data files' share of a cold index: `update_data` alone (walk excluded)
against a cold `repomap index` of the same tree (which includes it), median of --runs.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import common

from repomap import config, store
from repomap.index.discover import walk
from repomap.index.history import update_history
from repomap.index.records import update_data
from repomap.search.records import search_commits

AUTHORS = [("Ada Lovelace", "ada@example.org"), ("Zoë Lefèvre", "zoe@example.org"),
           ("Linus T", "lt@example.org"), ("Grace Hopper", "grace@example.org")]  # fmt: skip
WORDS = ["timeout", "retry", "parser", "cache", "index", "query", "writer", "reader", "lock", "socket", "buffer", "config", "migration", "schema", "token", "session", "worker", "queue", "thread", "pool"]  # fmt: skip


def fast_import_stream(commits: int, seed: int = 7) -> bytes:
    """A git fast-import stream of `commits` commits on refs/heads/main."""
    rng = random.Random(seed)
    out: list[bytes] = []
    when = 1_500_000_000
    for number in range(1, commits + 1):
        name, email = AUTHORS[number % len(AUTHORS)]
        when += rng.randint(30, 3600)
        subject = f"{rng.choice(WORDS)}: {' '.join(rng.choices(WORDS, k=5))} #{number}"
        body = f"\n\n{' '.join(rng.choices(WORDS, k=30))}\n" if number % 5 == 0 else "\n"
        message = (subject + body).encode()
        content = f"value = {number}\n".encode()
        out.append(b"commit refs/heads/main\n")
        out.append(f"author {name} <{email}> {when} +0000\n".encode())
        out.append(f"committer {name} <{email}> {when} +0000\n".encode())
        out.append(b"data %d\n%s\n" % (len(message), message))
        path = f"src/pkg{number % 20}/mod{number % 500}.py"
        out.append(b"M 644 inline %s\ndata %d\n%s\n" % (path.encode(), len(content), content))
    return b"".join(out)


def make_repository(root: Path, commits: int) -> float:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    started = time.perf_counter()
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"],
                   input=fast_import_stream(commits), check=True)  # fmt: skip
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "main"], check=True)
    return time.perf_counter() - started


def _cpu() -> float:
    """CPU seconds of this process and its finished children (git), user and system."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def index_history(root: Path, db_path: Path) -> tuple[float, int, float]:
    """(wall seconds, commits added, CPU seconds) of one update_history."""
    db = store.open_index(db_path)
    try:
        cpu = _cpu()
        started = time.perf_counter()
        summary = update_history(store.Writer(db), root)
        return time.perf_counter() - started, summary.added, _cpu() - cpu
    finally:
        db.conn.close()


def history(commits: int, runs: int) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="repomap-bench-history-"))
    root = scratch / "repo"
    made = make_repository(root, commits)
    print(f"synthetic history: {commits} commits made by git fast-import in {made:.1f} s")
    full = []
    full_cpu = []
    for run in range(runs):
        db_path = scratch / f"full{run}.db"
        seconds, added, cpu = index_history(root, db_path)
        assert added == commits, (added, commits)
        full.append(seconds)
        full_cpu.append(cpu)
    db_path = scratch / "full0.db"
    one = []
    env = {**os.environ, "GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@x"}  # fmt: skip
    for number in range(9):
        (root / "new.txt").write_text(f"{number}\n", encoding="utf-8")
        subprocess.run(["git", "-C", str(root), "add", "new.txt"], check=True, env=env)
        subprocess.run(["git", "-C", str(root), "commit", "-qm", f"bench: new commit {number}"],
                       check=True, env=env)  # fmt: skip
        seconds, added, _ = index_history(root, db_path)
        assert added == 1
        one.append(seconds)
    load = os.getloadavg()[0]
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} cores")
    rng = random.Random(11)
    queries = (
        [rng.choice(WORDS) for _ in range(100)]
        + [f"#{rng.randint(1, commits)}" for _ in range(50)]
        + [name for name, _ in AUTHORS] * 12
        + [f"mod{rng.randint(0, 499)}.py" for _ in range(50)]
        + [f"absent-{n}" for n in range(52)]
    )
    latencies = []
    with store.reading(db_path) as db:
        for query in queries:
            started = time.perf_counter()
            search_commits(db, query, limit=20)
            latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    p95 = latencies[int(len(latencies) * 0.95) - 1]
    print(common.markdown_table(
        ["measure", "result"],
        [
            [f"index {commits} commits (fresh index), median of {runs}",
             f"{statistics.median(full):.2f} s ({', '.join(f'{s:.2f}' for s in full)}); "
             f"CPU {statistics.median(full_cpu):.2f} s"],
            ["one new commit, median of 9", f"{statistics.median(one) * 1000:.0f} ms "
             f"(max {max(one) * 1000:.0f} ms)"],
            [f"literal search_commits, {len(queries)} queries",
             f"p50 {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms, "
             f"max {latencies[-1]:.1f} ms"],
        ],
    ))  # fmt: skip


def real(repository: Path, runs: int) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="repomap-bench-real-"))
    walls, cpus = [], []
    added = 0
    for run in range(runs):
        seconds, added, cpu = index_history(repository, scratch / f"real{run}.db")
        walls.append(seconds)
        cpus.append(cpu)
    load = os.getloadavg()[0]
    print(common.markdown_table(
        ["repository", "commits", "index (median)", "CPU (median)", "load"],
        [[str(repository), str(added), f"{statistics.median(walls):.2f} s",
          f"{statistics.median(cpus):.2f} s", f"{load:.1f}"]],
    ))  # fmt: skip


def data(corpora: list[str], runs: int) -> None:
    roots = common.materialize(corpora)
    rows = []
    for name, root in roots.items():
        scratch = Path(tempfile.mkdtemp(prefix="repomap-bench-data-"))
        walked = walk(root)
        alone = []
        summary = None
        for run in range(runs):
            db = store.open_index(scratch / f"data{run}.db")
            try:
                started = time.perf_counter()
                summary = update_data(
                    store.Writer(db), walked.files, config.DEFAULT_MAX_FILE_SIZE, False, "now"
                )
                alone.append(time.perf_counter() - started)
            finally:
                db.conn.close()
        cold = []
        for run in range(runs):
            db_path = scratch / f"cold{run}.db"
            done = common.timed(
                [*common.repomap_command(), "index", str(root), "--db", str(db_path), "--json"]
            )
            cold.append(done.seconds)
        assert summary is not None
        share = statistics.median(alone) / statistics.median(cold) * 100
        rows.append([
            f"{name} ({common.CORPORA[name]})", str(summary.files), str(summary.records),
            f"{statistics.median(alone) * 1000:.0f} ms", f"{statistics.median(cold):.2f} s",
            f"{share:.1f}%",
        ])  # fmt: skip
    print(common.markdown_table(
        ["corpus", "data files", "records", "data step alone", "cold index", "share"], rows
    ))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("history")
    one.add_argument("--commits", type=int, default=50_000)
    one.add_argument("--runs", type=int, default=3)
    three = sub.add_parser("real")
    three.add_argument("repository", type=Path)
    three.add_argument("--runs", type=int, default=3)
    two = sub.add_parser("data")
    two.add_argument("--corpora", default="python,rust,cpp")
    two.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.what == "history":
        history(args.commits, args.runs)
    elif args.what == "real":
        real(args.repository, args.runs)
    else:
        data(args.corpora.split(","), args.runs)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
