"""Settings resolved once: flag > environment variable > default."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

INDEX_DIR = ".repomap"
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024  # bytes; larger files are skipped as "too large"
# Chunks in a vector scope from which it is searched through an HNSW sidecar (store/ann.py)
# rather than exactly; REPOMAP_ANN_THRESHOLD sets it (tests set it low to exercise the sidecar).
DEFAULT_ANN_THRESHOLD = 1_000_000


class Settings(NamedTuple):
    root: Path
    db_path: Path
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    workers: int = 2
    search_log: bool = True
    redact: bool = True  # credentials in text elements become [REDACTED]

    @property
    def uses_default_db(self) -> bool:
        return self.db_path == default_db_path(self.root)


def default_db_path(root: Path) -> Path:
    return root / INDEX_DIR / "index.db"


def indexed_ancestor(start: Path) -> Path:
    """The nearest folder from `start` up that holds an index (`.repomap/index.db`), else
    `start`. The search stops at a repository's top (a folder with `.git`), so an index in a
    folder above a repository is never updated from inside it."""
    for folder in (start, *start.parents):
        # os.path, not Path: a folder this user may not enter answers False, not PermissionError
        if os.path.isfile(os.path.join(folder, INDEX_DIR, "index.db")):
            return folder
        if os.path.exists(os.path.join(folder, ".git")):
            break
    return start


def resolve(
    root: str | Path | None = None,
    db: str | Path | None = None,
    max_file_size: int | None = None,
    workers: int | None = None,
    redact: bool | None = None,
    find_index: bool = False,
) -> Settings:
    """Settings from explicit arguments, then REPOMAP_* environment variables, then defaults.

    `find_index`: for the commands that only read an index, a missing ROOT is the nearest
    indexed folder upward (indexed_ancestor) rather than the current one. Commands that write
    (`index`, `migrate`), serve (`mcp`) or read files by path never look upward: run inside a
    new project below an indexed home folder, they must not take on the whole home folder.
    """
    root_value = root or os.environ.get("REPOMAP_ROOT")
    db_value = db or os.environ.get("REPOMAP_DB")
    if root_value:
        root_path = Path(root_value).resolve()
    elif db_value:
        root_path = Path.cwd().resolve()
    elif find_index:  # like git: a query run in a subfolder uses the index around it
        root_path = indexed_ancestor(Path.cwd().resolve())
    else:
        root_path = Path.cwd().resolve()
    db_path = Path(db_value).resolve() if db_value else default_db_path(root_path)
    size = max_file_size or int(os.environ.get("REPOMAP_MAX_FILE_SIZE") or DEFAULT_MAX_FILE_SIZE)
    count = workers or int(os.environ.get("REPOMAP_WORKERS") or min(2, os.cpu_count() or 1))
    log = os.environ.get("REPOMAP_SEARCH_LOG", "1").lower() not in ("0", "false", "off", "no")
    if redact is None:
        redact = os.environ.get("REPOMAP_REDACT", "1").lower() not in ("0", "false", "off", "no")
    return Settings(root_path, db_path, size, max(1, count), log, redact)


def ann_threshold() -> int:
    """Chunks in a scope from which the local vector store builds and uses an HNSW sidecar."""
    value = os.environ.get("REPOMAP_ANN_THRESHOLD", "").strip()
    if not value:
        return DEFAULT_ANN_THRESHOLD
    try:
        threshold = int(value.replace("_", ""))
    except ValueError:
        threshold = -1
    if threshold < 1:
        from repomap.errors import BadArgument

        raise BadArgument(
            f"REPOMAP_ANN_THRESHOLD must be a whole number of chunks, at least 1, not {value!r}"
        )
    return threshold
