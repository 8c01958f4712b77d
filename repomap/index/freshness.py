"""Keeping the MCP server's index up to date: an incremental `repomap index`, only when needed.

`Refresher(settings).ensure_fresh()` is called before every tool answers. It returns notices
for the answer (what it built or re-indexed, or why the answer may miss recent changes) and
raises only when there is no index to answer from.

- The first call starts a watcher (`repomap.index.watch`: watchfiles, or polling where
  watchfiles cannot watch) and then runs the incremental indexer (`repomap.index.run`, the same
  pipeline as `repomap index`), which catches up with whatever changed while no server was
  running, and builds the index when there is none ("built on first use").
- Later calls ask the watcher, which costs two or three milliseconds; only when it saw a change
  that can affect the index does the indexer run again. When it saw folders come or go, or an
  ignore file change, the run first takes a new walk for the watcher (`_resync`).
- Every run happens in a background thread, and a call waits for it at most `wait` seconds
  (`first_wait` while there is no index at all). A call that stops waiting answers from the
  index as it is (readers never block on the writer, and each file is replaced atomically)
  and says so; the next call waits again. Another process indexing the same database
  (IndexBusy) is skipped quietly: the answer says its results may miss recent changes.
- `enabled=False` (`repomap mcp --no-refresh`) never writes: a missing index is an error.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repomap import store
from repomap.config import Settings
from repomap.errors import IndexBusy, IndexNotFound, IndexOutdated, RepomapError
from repomap.index import watch

if TYPE_CHECKING:
    from repomap.index.pipeline import Summary

log = logging.getLogger(__name__)

WAIT_SECONDS = 5.0  # a call waits this long for a refresh before answering without it
FIRST_WAIT_SECONDS = 120.0  # ... and this long when there is no index to answer from
POLL_SECONDS = 2.0  # where watchfiles cannot watch: a stat walk at most this often


@dataclass(frozen=True, slots=True)
class RefreshState:
    """What index_status reports about the refresh."""

    enabled: bool
    method: str  # watchfiles | polling | off | not started
    running: bool
    last_run_at: str | None  # UTC, ISO 8601
    last_run_seconds: float | None
    last_changed_files: int
    last_error: str | None


class Refresher:
    # What brings the index up to date: None is `pipeline.run`, in this process; `repomap serve
    # --watch` sets a function that runs `repomap index` as a child process instead.
    run_index: Callable[[Settings], Summary] | None = None

    def __init__(
        self,
        settings: Settings,
        enabled: bool = True,
        wait: float = WAIT_SECONDS,
        first_wait: float = FIRST_WAIT_SECONDS,
        poll_interval: float = POLL_SECONDS,
    ) -> None:
        self.settings = settings
        self.enabled = enabled
        self.wait = wait
        self.first_wait = first_wait
        self.poll_interval = poll_interval
        self._lock = threading.Lock()
        self._watcher: watch.Watcher | None = None
        self._thread: threading.Thread | None = None
        self._started_at = 0.0
        self._building = False  # the running thread builds an index that did not exist
        self._pending: list[str] = []  # notices of finished runs, for the next answer
        self._reread: set[str] = set()  # files the next run reads though their stat is as indexed
        # Changes seen by is_fresh(), not yet indexed (`_resync_due`: a new walk for the watcher)
        self._dirty = self._resync_due = False
        self._last: tuple[str, float, int] | None = None  # (at, seconds, changed files)
        self._last_error: str | None = None
        self._skip_dirs = settings.index_skipped

    # --- the call path -----------------------------------------------------------------------

    def is_fresh(self) -> bool:
        """True when an answer needs no refresh and no wait (watchfiles only: a few
        milliseconds, never a walk)."""
        if not self.enabled:
            return True
        with self._lock:
            watcher = self._watcher
            if watcher is None or not watcher.event_driven:
                return False  # the first call, or a poller whose check may walk the tree
            if self._thread is not None and self._thread.is_alive():
                return False
            changes = watcher.changes()
            self._dirty = self._dirty or changes.dirty
            self._resync_due = self._resync_due or changes.resync
            return not self._dirty and self.settings.db_path.exists()

    def ensure_fresh(self, wait: bool = True) -> list[str]:
        """Bring the index up to date if files changed (bounded wait); notices for the answer.

        `wait=False` starts a refresh that is due without waiting for it (the caller cannot
        block; the answer then says the index is being updated)."""
        if not self.enabled:
            if not self.settings.db_path.exists():
                raise IndexNotFound(
                    f"no index at {self.settings.db_path}; run `repomap index "
                    f"{self.settings.root}`, or start `repomap mcp` without --no-refresh"
                )
            return []
        with self._lock:
            thread = self._thread
            if thread is None or not thread.is_alive():
                thread = self._start_if_needed()
            building = self._building
        if thread is not None and wait:
            thread.join(self.first_wait if building else self.wait)
        with self._lock:
            notices, self._pending = self._pending, []
            running = self._thread is not None and self._thread.is_alive()
            if not self.settings.db_path.exists():
                if running:
                    elapsed = time.monotonic() - self._started_at
                    raise RepomapError(
                        f"repomap is still building the index of {self.settings.root} "
                        f"(first use, {elapsed:.0f} s so far); call again in a minute"
                    )
                raise RepomapError(
                    f"could not build the index of {self.settings.root}: {self._last_error}"
                )
            if running:
                notices.append(
                    "the index is being updated in the background; these results may not "
                    "include the latest changes yet"
                )
        return notices

    def _start_if_needed(self) -> threading.Thread | None:
        """Called with the lock held: start a refresh thread when one is due, else None."""
        if self._watcher is None:  # the first call: watch, then catch up (or build)
            self._building = not self._index_usable()
            return self._start(first=True, resync=False)
        if not self.settings.db_path.exists():  # a failed build, or the index was deleted
            self._building = True
            return self._start(first=False, resync=False)
        changes = self._watcher.changes()
        dirty, resync = self._dirty or changes.dirty, self._resync_due or changes.resync
        if not dirty:
            return None
        self._dirty = self._resync_due = False
        self._building = False
        return self._start(first=False, resync=resync)

    def refresh_now(self, reread: str | None = None) -> list[str]:
        """Run the indexer now (a file was found changed before the watcher said so); bounded.
        `reread`: a file to read again though its size and mtime are as indexed."""
        if not self.enabled:
            return []
        with self._lock:
            if reread is not None:
                self._reread.add(reread)
            thread = self._thread
            if thread is None or not thread.is_alive():
                resync = self._resync_due
                if self._watcher is not None:  # this run covers what the watcher has seen
                    resync = resync or self._watcher.changes().resync
                self._dirty = self._resync_due = False
                self._building = False
                thread = self._start(first=self._watcher is None, resync=resync)
        thread.join(self.wait)
        with self._lock:
            notices, self._pending = self._pending, []
        return notices

    def _index_usable(self) -> bool:
        """An index exists at the current schema (else the first run builds or migrates it)."""
        try:
            with store.reading(self.settings.db_path):
                return True
        except (IndexNotFound, IndexOutdated):
            return False
        except RepomapError:
            return self.settings.db_path.exists()  # corrupt: index.run recovers it

    def _start(self, first: bool, resync: bool) -> threading.Thread:
        self._started_at = time.monotonic()
        self._thread = threading.Thread(
            target=self._run,
            args=(first, resync),
            name=f"repomap-refresh {self.settings.root}",
            daemon=True,
        )
        self._thread.start()
        return self._thread

    # --- the refresh thread ------------------------------------------------------------------

    def _run(self, first: bool, resync: bool) -> None:
        # The watcher is baselined before the indexer walks: a change made meanwhile is seen
        # by that walk or reported by the watcher next time, never lost.
        try:
            if first:
                watcher = watch.start_watcher(
                    self.settings.root, self.poll_interval, self._skip_dirs
                )
                with self._lock:
                    self._watcher = watcher
            elif resync:
                self._resync()
        except OSError:  # the walk failed (ROOT gone or unreadable): the next call starts over
            log.exception("watching %s for changes failed", self.settings.root)
        finished = False
        try:
            notice = self._index()
            finished = True
        finally:
            if not finished:  # a bug: raised on to threading.excepthook, which logs it
                self._failed()
        with self._lock:
            if notice:
                self._pending.append(notice)

    def _failed(self) -> None:
        """A run ended by an error no run should meet. It is not swallowed (a blanket except
        once hid that new folders were never watched); the changes stay due, so the next call
        tries again, and the next answer says the index may be stale."""
        with self._lock:
            self._dirty = True
            self._last_error = "an unexpected error; its traceback is in the server's log"
            self._pending.append(
                f"could not update the index ({self._last_error}); answering from the index "
                "as it is"
            )

    def _resync(self) -> None:
        """A new walk for the watcher; a watcher that stopped watching is replaced by polling."""
        watcher = self._watcher
        if watcher is None:  # only a first run has none, and it starts one with a new walk
            return
        try:
            watcher.resync()
        except watch.WatchFailed as error:
            log.warning("%s; polling instead", error)
            poller = watch.Poller(self.settings.root, self.poll_interval, self._skip_dirs)
            poller.resync()
            with self._lock:
                self._watcher = poller
            watcher.close()

    def _index(self) -> str | None:
        """Run the incremental indexer; the notice the next answer carries, if any."""
        from repomap.index import pipeline as index

        started = time.perf_counter()
        if (moved := self._scope_moved()) is not None:
            return moved
        with self._lock:
            reread, self._reread = frozenset(self._reread), set()
        try:
            summary = (self.run_index or index.run)(self.settings._replace(reread=reread))
        except IndexBusy:
            self._last_error = None
            return (
                "another `repomap index` is updating the index; these results may not include "
                "the latest changes"
            )
        except RepomapError as error:  # what a run can meet: a full disk, a damaged index...
            self._last_error = str(error)
            return f"could not update the index ({error}); answering from the index as it is"
        self._last_error = None
        seconds = time.perf_counter() - started
        docs = summary.docs
        code_changes = summary.added + summary.modified + summary.removed
        doc_changes = docs.get("added", 0) + docs.get("modified", 0) + docs.get("removed", 0)
        self._last = (_now(), seconds, code_changes + doc_changes)
        if summary.recovered_from:
            return (
                f"the index was damaged: it was moved aside to {summary.recovered_from} and "
                f"rebuilt in {seconds:.1f} s"
            )
        if self._building:
            return (
                f"built the index of {self.settings.root} on first use: {summary.files} code "
                f"files, {docs.get('files', 0)} docs, {summary.symbols} symbols in {seconds:.1f} s"
            )
        if summary.reread:  # an upgrade: every file read again, none of them changed
            return (
                f"re-read every file ({summary.files} code files, {docs.get('files', 0)} docs) "
                f"in {seconds:.1f} s: the index was made with {summary.reread}"
            )
        if code_changes or doc_changes:
            return (
                f"re-indexed {code_changes + doc_changes} changed "
                f"{'file' if code_changes + doc_changes == 1 else 'files'} ({summary.added} added, "
                f"{summary.modified} modified, {summary.removed} removed code files; "
                f"{doc_changes} docs) in {seconds:.2f} s"
            )
        return None

    def _scope_moved(self) -> str | None:
        """With branch scopes, a checkout to another branch since the server started: the
        files now belong to another scope, so they are not written into this one's index."""
        if self.settings.scope_mode == "fixed" or not self.settings.uses_default_db:
            return None
        from repomap import config

        try:
            now = config.resolve(self.settings.root)
        except RepomapError:
            return None
        if now.db_path == self.settings.db_path:
            return None
        return (
            f"the checkout is now scope {now.scope!r} (the server answers from scope "
            f"{self.settings.scope!r}, not updated meanwhile); restart the server to answer "
            "from the current branch"
        )

    # --- status ------------------------------------------------------------------------------

    def state(self) -> RefreshState:
        running = self._thread is not None and self._thread.is_alive()
        method = "off" if not self.enabled else "not started"
        if self._watcher is not None:
            method = self._watcher.method
        last = self._last
        return RefreshState(
            self.enabled,
            method,
            running,
            last[0] if last else None,
            round(last[1], 3) if last else None,
            last[2] if last else 0,
            self._last_error,
        )

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")
