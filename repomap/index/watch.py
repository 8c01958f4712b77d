"""Noticing that files under ROOT changed, cheaply enough to ask before every MCP tool call.

Two ways, chosen once per root:

- `Inotify` (Linux): one inotify watch per directory `discover.walk` descends into. Events
  queue in the kernel, and `changes()` drains them without blocking, so asking costs a
  system call, with no thread and no polling. Only events that can change the index count:
  a file with a suffix repomap indexes (code, `.md`, `.txt`) or an ignore file written, created,
  deleted or moved, and a directory created, deleted or moved (that one also asks for the
  watches to be brought up to date, `resync()`, from a new walk). A full event queue counts as
  a change of everything.
- `Poller` (anywhere, and when inotify is unavailable or out of watches): a fingerprint of the
  walk (path, size, mtime of each file with an indexed suffix), taken at most once every
  `interval` seconds and compared with the previous one.

Both are baselined *before* the index is brought up to date, so a change made while the index
runs is either seen by that run's own walk or reported by the next `changes()`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from repomap.extractors import LANGUAGE_BY_SUFFIX
from repomap.index.discover import ALWAYS_SKIPPED_DIRS, IGNORE_FILES, Walk, walk

log = logging.getLogger(__name__)

DOC_SUFFIXES = (".md", ".markdown", ".txt")  # docs.DOC_FORMATS; docs.py imports index.py
INDEXED_SUFFIXES = frozenset((*LANGUAGE_BY_SUFFIX, *DOC_SUFFIXES))
# Directories whose coming and going never changes the index (caches tools write beside code).
NOISE_DIRS = ALWAYS_SKIPPED_DIRS | {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}

IN_MODIFY = 0x2
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_ISDIR = 0x40000000
IN_ONLYDIR = 0x01000000
WATCH_MASK = (
    IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
)  # fmt: skip
DIR_EVENTS = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, name length
READ_SIZE = 1 << 16


def is_indexed_name(name: str) -> bool:
    """Whether a file of this name can change the index (an indexed suffix or an ignore file)."""
    if name in IGNORE_FILES:
        return True
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in INDEXED_SUFFIXES


@dataclass(frozen=True, slots=True)
class Changes:
    dirty: bool = False  # the index may be out of date
    resync: bool = False  # directories came or went: watch a new walk's directories


class Watcher:
    """What both ways offer: a baseline, then whether anything changed since."""

    method = "none"

    def changes(self) -> Changes:  # pragma: no cover - overridden
        raise NotImplementedError

    def resync(self, walked: Walk | None = None) -> None:
        """Take a new baseline (watches or fingerprint) from `walked`, or from a new walk."""

    def close(self) -> None:
        pass


# --- inotify ---------------------------------------------------------------------------------


class _Libc:
    def __init__(self) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.init1 = libc.inotify_init1
        self.init1.argtypes = [ctypes.c_int]
        self.add_watch = libc.inotify_add_watch
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]


class WatchLimit(OSError):
    """The kernel refused another watch (fs.inotify.max_user_watches)."""


class Inotify(Watcher):
    method = "inotify"

    def __init__(self, root: Path, skip_dirs: frozenset[Path] = frozenset()) -> None:
        self.root = root
        self.skip_dirs = skip_dirs
        self._libc = _Libc()
        fd = self._libc.init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self.watches = 0

    def resync(self, walked: Walk | None = None) -> None:
        walked = walked or walk(self.root, self.skip_dirs)
        for rel_dir in walked.dirs:
            path = os.fsencode(self.root / rel_dir if rel_dir else self.root)
            if self._libc.add_watch(self.fd, path, WATCH_MASK) >= 0:
                self.watches += 1  # an existing watch counts again: an estimate, for status
                continue
            code = ctypes.get_errno()
            if code == errno.ENOSPC:
                raise WatchLimit(code, "out of inotify watches (fs.inotify.max_user_watches)")
            # ENOENT: removed since the walk; EACCES: unreadable. Neither can hold indexed files.

    def changes(self) -> Changes:
        dirty = resync = False
        while True:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                break
            except InterruptedError:
                continue
            for mask, name in _events(data):
                if mask & IN_Q_OVERFLOW or mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                    dirty = resync = True
                elif mask & IN_ISDIR:
                    if mask & DIR_EVENTS and name not in NOISE_DIRS:
                        dirty = resync = True
                elif is_indexed_name(name):
                    dirty = True
        return Changes(dirty, resync)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _events(data: bytes):
    offset = 0
    while offset + EVENT_HEADER.size <= len(data):
        _, mask, _, length = EVENT_HEADER.unpack_from(data, offset)
        start = offset + EVENT_HEADER.size
        name = data[start : start + length].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        offset = start + length
        yield mask, name


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
    """Inotify when the kernel offers it and has watches to spare, else a Poller; baselined."""
    walked = walk(root, skip_dirs)
    try:
        watcher: Watcher = Inotify(root, skip_dirs)
    except (OSError, AttributeError) as error:  # not Linux, or no inotify in this libc
        log.info("inotify unavailable (%s); polling %s every %.1f s", error, root, poll_interval)
    else:
        try:
            watcher.resync(walked)
            return watcher
        except WatchLimit as error:
            watcher.close()
            log.warning("%s; polling %s every %.1f s instead", error, root, poll_interval)
    poller = Poller(root, poll_interval, skip_dirs)
    poller.resync(walked)
    return poller
