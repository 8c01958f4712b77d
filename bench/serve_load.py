"""`repomap serve` under load: requests/s and p50/p95 at 1, 8 and 32 concurrent clients.

    python bench/serve_load.py                      # Django, 10 s per cell
    python bench/serve_load.py --seconds 5 --clients 1,8
    python bench/serve_load.py --db ~/.cache/repomap-bench-emb/relevance/python.db

The corpus tree is copied into a scratch folder (edits land in the copy, never the shared
corpus), with an index beside it: a copy of `--db` when given (by default the embedded Django
index bench/relevance.py keeps under ~/.cache/repomap-bench-emb, when it exists), brought up to
date by `repomap index`, else a new lexical index. That set-up is printed and kept out of the
figures. Then the real `repomap serve` runs as a subprocess and this script drives it over
HTTP/1.1 keep-alive connections (asyncio, one connection per client, each sending its next
request as soon as the last answer is read), for three kinds of request:

- text: `GET /api/text?q=...&topK=20` (two-word and one-word queries about the code);
- symbols: `GET /api/symbols?q=...&topK=20` (names and prefixes);
- hybrid: `POST /api/search {"q": question, "topK": 10, "mode": "hybrid"}` (plain questions;
  the query's embedding included), or lexical when the index has no embeddings (said).

Two phases, each cell (kind x clients) run for `--seconds` after a one-second warm-up:

- idle: `repomap serve` on the index, nothing else running;
- re-index: `repomap serve --watch`, while a thread edits 4 files of the tree every second (a
  comment appended), so the server's watcher starts re-index runs (a niced `repomap index`
  child each, which also embeds what changed) all along; the share of the phase's time a
  re-index ran is read from the server's update lines.

The rate limit stays on but high (`--rate-limit 1000000 --rate-limit-window 1`: the bucket is
checked on every request); a last cell (`--rate-limit 100 --rate-limit-window 1`, 8 clients,
text) shows the intended 429s. Every answer other than 200 (or an intended 429) and every
connection error counts as failed. Latency is each request's wall time in the client; CPU is
the server's and this client's user + system seconds per request. The machine is shared: the
header gives its load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import common

TEXT_QUERIES = [
    "connection pool", "cache timeout", "deprecated", "transaction atomic", "database migration",
    "csrf token", "password", "template loader", "timezone aware", "queryset", "middleware",
    "signal receiver", "foreign key", "unique constraint", "http response", "form validation",
    "static files", "session expired", "select_related", "url resolver",
]  # fmt: skip
SYMBOL_QUERIES = [
    "QuerySet", "get_object_or_404", "HttpResponse", "render", "Model.save", "ForeignKey",
    "ModelAdmin", "reverse", "Signal", "cache", "Field", "Form", "get_q", "path", "timezone",
    "Paginator", "login", "csrf", "Template", "serialize",
]  # fmt: skip
QUESTIONS = [
    "where is the password hashed", "how are sessions signed",
    "where are database connections closed", "how does the template engine load templates",
    "where is the csrf token checked", "how are migrations applied",
    "where is the cache key built", "how are urls resolved to views",
    "where are form fields cleaned", "how does pagination count pages",
]  # fmt: skip
EDITED_FILES = 4
EDIT_SECONDS = 1.0
DEFAULT_DB = Path.home() / ".cache" / "repomap-bench-emb" / "relevance" / "python.db"
UPDATE_LINE = re.compile(r"re-indexed (\d+) changed files .* in ([0-9.]+) s")


@dataclass
class Cell:
    kind: str
    clients: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: int = 0
    server_cpu: float = 0.0
    client_cpu: float = 0.0

    @property
    def done(self) -> int:
        return len(self.latencies)

    def failed(self, intended: set[int] = frozenset()) -> int:  # type: ignore[assignment]
        bad = sum(
            n for status, n in self.statuses.items() if status != 200 and status not in intended
        )
        return bad + self.errors


def request_bytes(kind: str, number: int, mode: str) -> bytes:
    if kind == "text":
        query = TEXT_QUERIES[number % len(TEXT_QUERIES)]
        return (
            f"GET /api/text?q={quote(query)}&topK=20 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        )
    if kind == "symbols":
        query = SYMBOL_QUERIES[number % len(SYMBOL_QUERIES)]
        return f"GET /api/symbols?q={quote(query)}&topK=20 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    body = json.dumps({"q": QUESTIONS[number % len(QUESTIONS)], "topK": 10, "mode": mode}).encode()
    return (
        b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


async def _client(port: int, kind: str, mode: str, start: int, stop_at: float, warm_until: float,
                  cell: Cell) -> None:  # fmt: skip
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    number = start
    try:
        while (now := time.perf_counter()) < stop_at:
            writer.write(request_bytes(kind, number, mode))
            number += 1
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
                body = await reader.readexactly(length)
            except (asyncio.IncompleteReadError, ConnectionError, AttributeError, ValueError):
                cell.errors += 1
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                continue
            if now < warm_until:
                continue
            cell.latencies.append(time.perf_counter() - now)
            cell.statuses[status] = cell.statuses.get(status, 0) + 1
            if status == 200 and number % 50 == 0 and not json.loads(body).get("results"):
                cell.errors += 1  # an empty answer to a query known to match is a failure too
    finally:
        writer.close()


def run_cell(
    port: int, server_pid: int, kind: str, clients: int, seconds: float, mode: str
) -> Cell:
    import psutil

    cell = Cell(kind, clients)
    server = psutil.Process(server_pid)

    async def drive() -> None:
        began = time.perf_counter()
        warm_until = began + 1.0
        stop_at = warm_until + seconds
        await asyncio.sleep(0)
        await asyncio.gather(
            *(_client(port, kind, mode, i * 7, stop_at, warm_until, cell) for i in range(clients))
        )

    # CPU over the measured part only would need a sample at warm-up's end: take both ends of
    # the whole cell and scale by the share of requests measured (the warm-up's second is ~1/11).
    cpu_before = sum(server.cpu_times()[:2])
    client_before = time.process_time()
    wall = time.perf_counter()
    asyncio.run(drive())
    wall = time.perf_counter() - wall
    cell.seconds = seconds
    share = seconds / wall if wall else 1.0
    cell.server_cpu = (sum(server.cpu_times()[:2]) - cpu_before) * share
    cell.client_cpu = (time.process_time() - client_before) * share
    return cell


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """`repomap serve` as a subprocess; its stdout (update lines) collected by a thread."""

    def __init__(self, root: Path, *args: str) -> None:
        self.port = _free_port()
        self.process = subprocess.Popen(
            [*common.repomap_command(), "serve", str(root), "--port", str(self.port), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[tuple[float, str]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"repomap serve exited: {self.process.stderr.read()}")
            try:
                if self.get("/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("repomap serve did not start")

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append((time.perf_counter(), line.rstrip("\n")))

    def get(self, path: str) -> tuple[int, dict]:
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"{}")
        finally:
            connection.close()

    def stop(self) -> str:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return self.process.stderr.read()


class Editor(threading.Thread):
    """Appends a comment to EDITED_FILES files of the tree every EDIT_SECONDS, in turn."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__(daemon=True)
        self.files = files
        self.stop_event = threading.Event()
        self.edits = 0

    def run(self) -> None:
        while not self.stop_event.wait(EDIT_SECONDS):
            for offset in range(EDITED_FILES):
                path = self.files[(self.edits + offset) % len(self.files)]
                with open(path, "a", encoding="utf-8") as file:
                    file.write(f"# serve_load edit {self.edits}: connection pool timeout\n")
            self.edits += 1


def phase(served: Served, kinds: list[str], clients: list[int], seconds: float,
          mode: str) -> list[Cell]:  # fmt: skip
    cells = []
    for kind in kinds:
        for count in clients:
            cell = run_cell(served.port, served.process.pid, kind, count, seconds, mode)
            cells.append(cell)
            print(f"  {kind:8} {count:3} clients: {cell.done / seconds:7.1f} req/s, "
                  f"p95 {common.percentile(cell.latencies, 95) * 1000:7.1f} ms, "
                  f"statuses {cell.statuses}, errors {cell.errors}", flush=True)  # fmt: skip
    return cells


def rows(name: str, cells: list[Cell], mode: str) -> list[list[str]]:
    out = []
    for cell in cells:
        done = max(cell.done, 1)
        out.append([
            name,
            "hybrid" if cell.kind == "hybrid" and mode == "hybrid" else
            ("search (lexical)" if cell.kind == "hybrid" else cell.kind),
            str(cell.clients),
            f"{cell.done / cell.seconds:.0f}",
            f"{common.percentile(cell.latencies, 50) * 1000:.1f}",
            f"{common.percentile(cell.latencies, 95) * 1000:.1f}",
            f"{cell.server_cpu / done * 1000:.2f} + {cell.client_cpu / done * 1000:.2f}",
            str(cell.failed()),
        ])  # fmt: skip
    return out


def prepare(corpus: Path, db: Path | None, scratch: Path) -> Path:
    tree = scratch / "tree"
    print(f"copying {corpus} ({common.copy_tree(corpus, tree):.1f} s)", flush=True)
    if db is not None and db.exists():
        (tree / ".repomap").mkdir(exist_ok=True)
        shutil.copyfile(db, tree / ".repomap" / "index.db")
        print(f"index: a copy of {db}", flush=True)
    started = time.perf_counter()
    run = subprocess.run(
        [*common.repomap_command(), "index", str(tree), "--json"], capture_output=True, text=True
    )
    if run.returncode != 0:
        raise SystemExit(f"repomap index failed: {run.stderr}")
    print(f"index brought up to date in {time.perf_counter() - started:.1f} s", flush=True)
    return tree


def edited_files(tree: Path) -> list[Path]:
    """Mid-sized Python files under django/ (a stable choice: by path)."""
    files = sorted(p for p in (tree / "django").rglob("*.py") if 4000 < p.stat().st_size < 20000)
    return files[:: max(1, len(files) // 40)][:40]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="python", choices=sorted(common.CORPORA))
    parser.add_argument("--db", type=Path, default=DEFAULT_DB if DEFAULT_DB.exists() else None)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--kinds", default="text,symbols,hybrid", help="requests to measure")
    parser.add_argument("--skip-idle", action="store_true", help="only the re-index phase")
    args = parser.parse_args(argv)
    clients = [int(c) for c in args.clients.split(",")]
    corpus = common.materialize([args.corpus])[args.corpus]
    db = args.db if args.corpus == "python" else None
    scratch = common.scratch_dir("repomap-serve-load-")
    try:
        tree = prepare(corpus, db, scratch)
        loads = os.getloadavg()
        served = Served(tree, "--rate-limit", "1000000", "--rate-limit-window", "1")
        _, status = served.get("/api/status")
        coverage = status["roots"][0]["embedding"].get("coverage") or 0
        mode = "hybrid" if coverage > 0 else "lexical"
        print(f"\n{common.CORPORA[args.corpus]}: {status['roots'][0]['files']} files, "
              f"embeddings {coverage:.0%} -> search mode {mode}; load {loads[0]:.1f}",
              flush=True)  # fmt: skip
        table: list[list[str]] = []
        kinds = args.kinds.split(",")
        if not args.skip_idle:
            print("idle:", flush=True)
            table += rows("idle", phase(served, kinds, clients, args.seconds, mode), mode)
        err = served.stop()
        if "Traceback" in err:
            print(err)

        served = Served(tree, "--watch", "--rate-limit", "1000000", "--rate-limit-window", "1")
        time.sleep(2)  # the watch loop's first round (a no-op catch-up) is not measured
        editor = Editor(edited_files(tree))
        print("re-index (serve --watch, 4 files edited every second):", flush=True)
        began = time.perf_counter()
        editor.start()
        cells = phase(served, kinds, clients, args.seconds, mode)
        editor.stop_event.set()
        editor.join()
        ended = time.perf_counter()
        updates = [UPDATE_LINE.search(line) for at, line in served.lines if began <= at <= ended]
        busy = sum(float(m.group(2)) for m in updates if m)
        table += rows("re-index", cells, mode)
        err = served.stop()
        if "Traceback" in err:
            print(err)

        served = Served(tree, "--rate-limit", "100", "--rate-limit-window", "1")
        limited = run_cell(served.port, served.process.pid, "text", 8, 5.0, mode)
        served.stop()

        print(f"\n`repomap serve` on {common.CORPORA[args.corpus]} ({args.seconds:g} s per cell, "
              f"load average {loads[0]:.1f} at the start; search mode: {mode})\n")  # fmt: skip
        print(common.markdown_table(
            ["phase", "request", "clients", "req/s", "p50 ms", "p95 ms",
             "CPU ms/request server + client", "failed"],
            table, "lllrrrrr",
        ))  # fmt: skip
        print(f"\nre-index phase: {editor.edits} rounds of {EDITED_FILES} edited files; "
              f"{sum(1 for m in updates if m)} re-index runs reported took {busy:.1f} s of the "
              f"phase's {ended - began:.1f} s ({busy / (ended - began):.0%})")  # fmt: skip
        print(f"rate limit 100/s, 8 clients, 5 s of text searches: statuses {limited.statuses}, "
              f"{limited.errors} errors, {limited.failed({429})} failed other than 429")  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
