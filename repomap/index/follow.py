"""`repomap watch` (and `repomap mcp --watch`): keep an index up to date as files change.

One loop per ROOT: index once (catching up with what changed while nothing watched), then wait
for filesystem events (index/watch.py's FileWatcher: watchfiles, with the same filter the MCP
server's freshness check uses) and run the incremental indexer once per debounced batch.

- A batch ends after `quiet_ms` without a new event (at most GROUP_MS long), so an editor's
  save (a temp file written, then renamed over the original) is one batch, and a `git checkout`
  that rewrites thousands of files is one batch too: its events come faster than the quiet time.
  Events that arrive while the indexer runs wait in the kernel's queue for the next batch.
- New or deleted folders, and ignore files, take a new walk for the watcher (`resync`), as in
  the MCP server; the indexer's own walk finds the files in a new folder.
- With `scope.mode = git`, the branch is read again (from .git/HEAD, every `timeout`): a
  checkout to another branch switches to that branch's index, even when no file changed.
- Embeddings follow in the background (BackgroundEmbedder), when the index has them: an
  edit is searchable by words as soon as the lexical run ends.

Each run's outcome is handed to `report` as an Update (the CLI prints one line per update).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repomap import config
from repomap.config import Settings
from repomap.errors import IndexBusy, RepomapError
from repomap.index import pipeline, watch
from repomap.index.embedding import BackgroundEmbedder

log = logging.getLogger(__name__)

GROUP_MS = 10_000  # the longest one batch may grow while events keep coming
TIMEOUT_MS = 500  # wake up this often without events: stop asked? branch switched?


@dataclass(frozen=True, slots=True)
class Update:
    at: str  # UTC, ISO 8601
    scope: str
    events: int  # filesystem events in the batch (0: the first run, or a branch switch)
    added: int
    modified: int
    removed: int
    docs_changed: int
    files: int
    seconds: float
    error: str | None = None
    first: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        if self.error:
            return f"{self.at} [{self.scope}] could not update the index: {self.error}"
        what = "indexed" if self.first else "re-indexed"
        return (
            f"{self.at} [{self.scope}] {what}: {self.added} added, {self.modified} modified, "
            f"{self.removed} removed, {self.docs_changed} docs changed ({self.files} files) "
            f"in {self.seconds:.2f} s"
        )


def follow(
    root: Path,
    db_path: Path | None,
    report: Callable[[Update], None],
    stop: threading.Event,
    quiet_ms: int | None = None,
    embed: bool | None = None,
) -> None:
    """Index ROOT, then re-index it after every batch of changes until `stop` is set."""
    settings = config.resolve(root, db_path)
    quiet = quiet_ms if quiet_ms is not None else config.setting(settings.root, "watch.debounce_ms")
    skip = frozenset({settings.root / config.INDEX_DIR})
    watcher = watch.FileWatcher(
        settings.root, skip, quiet_ms=quiet, timeout_ms=TIMEOUT_MS, group_ms=GROUP_MS
    )
    embedders: dict[Path, BackgroundEmbedder] = {}
    try:
        watcher.resync()
        _run(settings, 0, report, embedders, embed, first=True)
        while not stop.is_set():
            try:
                changes, events = watcher.wait()
            except watch.WatchFailed as error:
                raise RepomapError(str(error)) from None
            current = config.resolve(root, db_path)
            switched = current.db_path != settings.db_path
            settings = current
            if not changes.dirty and not switched:
                continue
            if changes.resync:
                watcher.resync()
            _run(settings, events, report, embedders, embed, first=switched)
    finally:
        watcher.close()
        for embedder in embedders.values():
            embedder.close()


def _run(
    settings: Settings,
    events: int,
    report: Callable[[Update], None],
    embedders: dict[Path, BackgroundEmbedder],
    embed: bool | None,
    first: bool,
) -> None:
    started = time.perf_counter()
    at = _now()
    try:
        summary = pipeline.run(settings)
    except IndexBusy as busy:
        report(Update(at, settings.scope, events, 0, 0, 0, 0, 0, 0.0, str(busy), first))
        return
    except RepomapError as error:
        report(Update(at, settings.scope, events, 0, 0, 0, 0, 0, 0.0, str(error), first))
        return
    docs = summary.docs
    docs_changed = docs.get("added", 0) + docs.get("modified", 0) + docs.get("removed", 0)
    seconds = time.perf_counter() - started
    report(
        Update(
            at,
            settings.scope,
            events,
            summary.added,
            summary.modified,
            summary.removed,
            docs_changed,
            summary.files + docs.get("files", 0),
            round(seconds, 3),
            None,
            first,
        )  # fmt: skip
    )
    changed = summary.added + summary.modified + summary.removed + docs_changed
    if (changed or first) and (embed or (embed is None and pipeline.has_embeddings(settings))):
        embedder = embedders.get(settings.db_path)
        if embedder is None:
            embedder = embedders[settings.db_path] = BackgroundEmbedder(
                functools.partial(_embed, settings)
            )
        embedder.kick()


def _embed(settings: Settings, stop: threading.Event, progress: Callable[[int, int], None]) -> None:
    pipeline.embed(settings, stop=stop, progress=progress)


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
