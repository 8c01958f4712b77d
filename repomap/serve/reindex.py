"""`repomap serve --watch`: each re-index runs as a `repomap index` child process, niced.

The watcher and the decision to re-index stay in the server (`index/freshness.Refresher`, as
`repomap mcp` uses them); only the indexer's run moves out. In a thread of the server, the
indexer's Python code (the walk, the writer, the ranking) holds the GIL the event loop needs,
and its CPU competes with the requests': on two cores, p95 of text searches at 8 clients went
from ~40 ms to ~100-200 ms while edits were re-indexed (bench/serve_load.py). In a child
process at a lower priority (`nice` NICENESS, its worker processes too), the kernel gives the
server's requests the CPU first and no lock is shared. The child is `repomap index ROOT --db DB
--json` with the server's settings: it commits the text and symbols first, then embeds what
changed when the index has embeddings (as `repomap index` does), so the server runs no embedder
of its own. (The server's own embedder instead, with the model kept loaded, cost the text
searches more: 183 against 323-454 requests/s at 8 clients in bench/serve_load.py, same edits.)
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading

from repomap.config import Settings
from repomap.errors import IndexBusy, RepomapError
from repomap.index.pipeline import Summary

NICENESS = 5  # 10 starved the child on a loaded machine (others at load 6-9): edits waited
BUSY = "another `repomap index`"


class ChildIndexer:
    """A `Refresher.run_index` that runs `repomap index` in a child process; `stop()` ends a
    run in progress (the server is shutting down)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[str]] = set()
        self._stopped = False

    def __call__(self, settings: Settings) -> Summary:
        command = [
            sys.executable, "-m", "repomap.cli", "index", str(settings.root),
            "--db", str(settings.db_path), "--json", "--workers", str(settings.workers),
            *(["--max-file-size", str(settings.max_file_size)] if settings.max_file_size_set else []),
            *([] if settings.redact else ["--no-redact"]),
            *[arg for path in sorted(settings.reread) for arg in ("--reread", path)],
        ]  # fmt: skip
        with self._lock:
            if self._stopped:
                raise RepomapError("the server is shutting down")
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            self._running.add(child)
        try:
            # OSError: it has already ended, or the system forbids it: it runs as it is
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, child.pid, NICENESS)
            out, err = child.communicate()
        finally:
            with self._lock:
                self._running.discard(child)
        if child.returncode != 0:
            lines = err.strip().splitlines() or [f"repomap index exited {child.returncode}"]
            message = lines[-1].removeprefix("error: ")
            if BUSY in message:
                raise IndexBusy(message)
            raise RepomapError(message)
        return summary_of(json.loads(out)["results"][0])

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for child in running:
            child.terminate()  # `repomap index` rolls back its open batch on SIGTERM
        for child in running:
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()


def summary_of(data: dict) -> Summary:
    """The `--json` record of `repomap index` as the pipeline's Summary (what the notices use)."""
    return Summary(
        root=data["root"],
        db_path=data["db_path"],
        scanned=data["scanned"],
        unchanged=data["unchanged"],
        added=data["added"],
        modified=data["modified"],
        removed=data["removed"],
        symbols=data["symbols"],
        references=data["references"],
        files=data["files"],
        docs=data.get("docs") or {},
        seconds=data["seconds"],
        recovered_from=data.get("recovered_from"),
    )
