"""Noticing that files under ROOT changed, cheaply enough to ask before every MCP tool call.

Two ways, chosen once per root:

- `FileWatcher` (the `watchfiles` library: inotify on Linux, FSEvents on macOS, ...): one
  recursive watch of ROOT, folders created later included. The library's thread collects events
  as they come; `changes()` creates a marker file in a private folder watched alongside and
  takes what was collected up to the marker's event, so everything the kernel reported before
  the call is in its answer (a file written just before a tool call is seen by that call), in
  two or three milliseconds. Only what can change the index counts (watch()'s `watch_filter`):
  a file with a suffix repomap indexes (code, `.md`, `.txt`, data files) or an ignore file written, created,
  deleted or moved, and a folder created, moved in, deleted or moved away (those, and ignore
  files, also ask for a new walk: `resync()`). Events in folders the ignore rules exclude are
  dropped once a walk has confirmed that the folder is excluded (the first one counts: see
  `FileWatcher._where`).
- `Poller` (when watchfiles cannot watch: no inotify, out of watches, an unreadable folder, or
  its watch failed later): a fingerprint of the walk (path, size, mtime of each file with an
  indexed suffix), taken at most once every `interval` seconds and compared with the previous
  one.

Both are baselined *before* the index is brought up to date, so a change made while the index
runs is either seen by that run's own walk or reported by the next `changes()`.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from repomap.index.discover import ALWAYS_SKIPPED_DIRS, IGNORE_FILES, Walk, walk
from repomap.languages import is_read

log = logging.getLogger(__name__)

# Directories whose contents never change the index (caches tools write beside code).
NOISE_DIRS = ALWAYS_SKIPPED_DIRS | {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}

# watchfiles.watch() arguments for a generator advanced on demand by `changes()`: each step
# sleeps `STEP_MS` (the library's thread delivers what the kernel queued meanwhile), and with
# nothing collected it gives up after `TIMEOUT_MS` and yields an empty set.
STEP_MS = 1
TIMEOUT_MS = 1
DEBOUNCE_MS = 0  # return what was collected after one more step: never wait for a quiet moment
MARKER_SECONDS = 1.0  # no event for the marker in this long: the watch is broken, poll instead


def is_indexed_name(name: str) -> bool:
    """Whether a file of this name can change the index: one the walk reads (languages.is_read,
    its own rule: a suffix list kept here missed `logging.h.in`) or an ignore file."""
    return name in IGNORE_FILES or is_read(name)


@dataclass(frozen=True, slots=True)
class Changes:
    dirty: bool = False  # the index may be out of date
    resync: bool = False  # folders or ignore rules changed: take a new walk (`Watcher.resync`)


class Watcher:
    """What both ways offer: a baseline, then whether anything changed since."""

    method = "none"
    # `changes()` neither walks nor waits more than a few milliseconds: safe on the event loop.
    event_driven = False

    def changes(self) -> Changes:  # pragma: no cover - overridden
        raise NotImplementedError

    def resync(self, walked: Walk | None = None) -> None:
        """Take a new baseline from `walked`, or from a new walk."""

    def close(self) -> None:
        pass


class WatchFailed(RuntimeError):
    """watchfiles stopped watching; the caller should poll instead."""


# --- watchfiles ------------------------------------------------------------------------------


class FileWatcher(Watcher):
    """A recursive watchfiles watch of ROOT, read on demand.

    The walk's folders (`resync`) say which events count: one in a folder the walk kept does;
    one in a folder the walk did not see is a new folder or an excluded one, so it counts and
    the folder is remembered; the next `resync` files it as excluded if its walk skipped it
    too, and from then on events under it are dropped (until a later walk keeps it)."""

    method = "watchfiles"
    event_driven = True

    def __init__(
        self,
        root: Path,
        skip_dirs: frozenset[Path] = frozenset(),
        *,
        quiet_ms: int = STEP_MS,
        timeout_ms: int = TIMEOUT_MS,
        group_ms: int = DEBOUNCE_MS,
    ) -> None:
        """Start watching (the watches exist when this returns); OSError or RuntimeError when
        watchfiles cannot: no inotify, out of watches, an unreadable folder.

        The defaults suit `changes()`, asked on demand. `wait()` (repomap watch) wants a batch
        per burst instead: `quiet_ms` without a new event ends a batch (at most `group_ms`
        long), and with nothing at all `wait()` returns after `timeout_ms`."""
        self.root = root.resolve()
        self.skip_dirs = skip_dirs
        self._root = str(self.root)
        self._prefix = os.path.join(self._root, "")
        # A skipped path drops its own events (the index's search log) and, a folder, every
        # event under it.
        self._skip_exact = frozenset(str(path.resolve()) for path in skip_dirs)
        self._skip = tuple(os.path.join(path, "") for path in self._skip_exact)
        self._lock = threading.Lock()
        self._known: frozenset[str] = frozenset({""})  # folders the last walk kept
        self._excluded: set[str] = set()  # folders a walk skipped although they exist
        self._unseen: set[str] = set()  # folders events came from that no walk has judged yet
        self._failed: str | None = None
        # The markers' folder: in the same kernel queue as ROOT's events, so the marker's event
        # comes after every event before it.
        self._markers = os.path.realpath(tempfile.mkdtemp(prefix="repomap-watch-"))
        # Removed by close(), or when the watcher is collected or the interpreter exits.
        self._remove_markers = weakref.finalize(self, shutil.rmtree, self._markers, True)
        self._marker_prefix = os.path.join(self._markers, "")
        self._marked = 0
        self._events = watchfiles.watch(
            self.root,
            self._markers,
            # A batch the filter empties is not yielded, but the marker's always is: waiting
            # for it never waits for a quiet moment among events that do not count.
            watch_filter=self._wanted,
            debounce=group_ms,
            step=quiet_ms,
            rust_timeout=timeout_ms,
            yield_on_timeout=True,
            debug=False,
            force_polling=False,  # where notifications fail, `Poller` walks only on demand
            recursive=True,
            ignore_permission_denied=False,  # True would also hide running out of watches
        )
        # Starts the watch (raises when it cannot). What it yields happened before this
        # returns, so before the indexer's walk, which sees it: dropped.
        started = False
        try:
            next(self._events)
            started = True
        finally:
            if not started:
                self._remove_markers()

    def resync(self, walked: Walk | None = None) -> None:
        """Take the kept folders from `walked` (taken before any `changes()` call: at start)
        or from a new walk; WatchFailed when watchfiles stopped watching."""
        with self._lock:
            if self._failed is not None:
                raise WatchFailed(self._failed)
            # Judged against a walk that starts after they were seen: a folder created during
            # the walk waits for the next resync, instead of being filed as excluded.
            judged = self._excluded | self._unseen
            self._unseen = set()
        walked = walked or walk(self.root, self.skip_dirs)
        known = frozenset(walked.dirs)
        excluded = {rel for rel in judged if rel not in known and os.path.isdir(self._prefix + rel)}
        with self._lock:
            self._known = known
            self._excluded = excluded

    def changes(self) -> Changes:
        with self._lock:
            batch = self._take()
            if batch is None:
                return Changes(dirty=True, resync=True)  # resync() raises: poll instead
            dirty = resync = False
            for change, path in batch:
                counts = (
                    None if path.startswith(self._marker_prefix) else self._counts(change, path)
                )
                if counts is not None:
                    dirty = True
                    resync = resync or counts
            return Changes(dirty, resync)

    def wait(self) -> tuple[Changes, int]:
        """Block until a debounced batch of events arrives (or `timeout_ms` passes: nothing);
        what it means for the index, and how many events that count it held. WatchFailed when
        watchfiles stopped watching."""
        with self._lock:
            if self._failed is not None:
                raise WatchFailed(self._failed)
            try:
                batch = next(self._events)
            except StopIteration:
                self._fail("the watch ended")
                raise WatchFailed(self._failed or "") from None
            except (OSError, RuntimeError) as error:  # RuntimeError: WatchfilesRustInternalError
                self._fail(f"{type(error).__name__}: {error}")
                raise WatchFailed(self._failed or "") from None
            dirty = resync = False
            count = 0
            for change, path in batch:
                if path.startswith(self._marker_prefix):
                    continue
                counts = self._counts(change, path)
                if counts is not None:
                    count += 1
                    dirty = True
                    resync = resync or counts
            return Changes(dirty, resync), count

    def _take(self) -> set[tuple[watchfiles.Change, str]] | None:
        """The events reported before this call, up to a new marker's; None once watchfiles has
        stopped watching."""
        if self._failed is not None:
            return None
        self._marked += 1
        marker = os.path.join(self._markers, str(self._marked))
        batch: set[tuple[watchfiles.Change, str]] = set()
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            deadline = time.monotonic() + MARKER_SECONDS
            while (watchfiles.Change.added, marker) not in batch:
                if time.monotonic() > deadline:
                    self._fail(f"no event for {marker} in {MARKER_SECONDS:.0f} s")
                    return None
                batch |= next(self._events)
            os.unlink(marker)
        except StopIteration:
            self._fail("the watch ended")
        except (OSError, RuntimeError) as error:  # RuntimeError: WatchfilesRustInternalError
            self._fail(f"{type(error).__name__}: {error}")
        return None if self._failed is not None else batch

    def _fail(self, reason: str) -> None:
        self._failed = f"watchfiles stopped watching {self.root} ({reason})"
        log.warning("%s", self._failed)

    def _wanted(self, change: watchfiles.Change, path: str) -> bool:
        """watch_filter: a marker's creation, or an event that can change the index (called by
        watch() inside `_take`, with the lock held)."""
        if path.startswith(self._marker_prefix):
            return change == watchfiles.Change.added
        return self._counts(change, path) is not None

    def _counts(self, change: watchfiles.Change, path: str) -> bool | None:
        """None when the event cannot change the index, else whether a new walk is due."""
        if path == self._root:
            return True  # ROOT itself deleted or moved
        skipped = path.startswith(self._skip) or path in self._skip_exact
        if skipped or not path.startswith(self._prefix):
            return None
        rel = path[len(self._prefix) :].replace(os.sep, "/")
        parts = rel.split("/")
        if any(part in NOISE_DIRS for part in parts):
            return None
        name = parts[-1]
        new_folder = False
        if is_indexed_name(name):
            folder_event = name in IGNORE_FILES  # the rules that pick folders changed
        elif change == watchfiles.Change.added:
            if not os.path.isdir(path):
                return None
            folder_event = new_folder = True  # created or moved in, maybe with files already
        elif change == watchfiles.Change.deleted and rel in self._known:
            folder_event = True  # a kept folder deleted or moved away
        else:
            return None
        where = self._where(parts)
        if where == "excluded":
            return None
        if new_folder and rel not in self._known:
            self._unseen.add(rel)  # the next walk says whether it is kept or excluded
        return folder_event or where == "unseen"

    def _where(self, parts: list[str]) -> str:
        """'kept' when the event's folder is one the last walk kept; else the shallowest of its
        folders the walk did not keep is 'excluded' (a walk skipped it) or 'unseen'."""
        if "/".join(parts[:-1]) in self._known:
            return "kept"
        folder = ""
        for part in parts[:-1]:
            folder = f"{folder}/{part}" if folder else part
            if folder not in self._known:
                break
        if folder in self._excluded:
            return "excluded"
        self._unseen.add(folder)
        return "unseen"

    def close(self) -> None:
        with self._lock:
            self._events.close()  # leaves watch()'s `with RustNotify(...)`: the watch stops
            self._remove_markers()
            if self._failed is None:
                self._failed = f"watching {self.root} was closed"


# --- polling ---------------------------------------------------------------------------------


def fingerprint(walked: Walk) -> dict[str, tuple[int, int]]:
    """(size, mtime) of each walked file that can change the index."""
    return {
        found.rel_path: (found.size, found.mtime_ns)
        for found in walked.files
        if is_indexed_name(found.rel_path.rsplit("/", 1)[-1])
    }


class Poller(Watcher):
    method = "polling"

    def __init__(
        self, root: Path, interval: float, skip_dirs: frozenset[Path] = frozenset()
    ) -> None:
        self.root = root
        self.interval = interval
        self.skip_dirs = skip_dirs
        self.baseline: dict[str, tuple[int, int]] | None = None
        self.checked = 0.0

    def resync(self, walked: Walk | None = None) -> None:
        walked = walked or walk(self.root, self.skip_dirs)
        self.baseline = fingerprint(walked)
        self.checked = time.monotonic()

    def changes(self) -> Changes:
        if self.baseline is not None and time.monotonic() - self.checked < self.interval:
            return Changes()
        previous = self.baseline
        self.resync()
        return Changes(dirty=previous is None or previous != self.baseline)


def start_watcher(
    root: Path, poll_interval: float, skip_dirs: frozenset[Path] = frozenset()
) -> Watcher:
    """A FileWatcher when watchfiles can watch ROOT, else a Poller; baselined."""
    walked = walk(root, skip_dirs)
    try:
        watcher = FileWatcher(root, skip_dirs)
    except (OSError, RuntimeError) as error:  # RuntimeError: WatchfilesRustInternalError
        log.warning(
            "cannot watch %s for changes (%s: %s); polling every %.1f s instead",
            root, type(error).__name__, error, poll_interval,
        )  # fmt: skip
    else:
        watcher.resync(walked)
        return watcher
    poller = Poller(root, poll_interval, skip_dirs)
    poller.resync(walked)
    return poller
