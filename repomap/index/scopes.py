"""Branch scopes (`scope.mode = git | env`): one index per scope under
ROOT/.repomap/scopes/<name>/, a registry of them, and the commands that remove index state.

- seed(): a scope indexed for the first time starts as a copy of the scope indexed most
  recently (SQLite's backup), so the incremental indexer re-reads only the files that differ
  (a checkout changes the mtime of exactly those) and the embedding stage finds every vector
  whose text did not change in the copied cache: a new branch costs what changed.
- The registry (ROOT/.repomap/scopes/registry.json: per scope folder its name, mode, model id,
  last indexed time and counts) is rewritten after each run; `status` and `prune` read it.
- clean() removes index state only: files under ROOT/.repomap/, or an index named by --db and
  its -wal, -shm, .lock and moved-aside copies, after checking it is a SQLite file.
- prune() lists git scopes whose branch is gone (`git branch --list`, and remote branches when
  there are any) or that were not indexed for `older_than` days; it deletes only with apply.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from repomap import config, store
from repomap.config import Settings
from repomap.errors import BadArgument, RepomapError
from repomap.store.health import copy_index

REGISTRY = "registry.json"
INDEX_FILES = ("", "-wal", "-shm", ".lock")  # an index and the files SQLite and the lock add


@dataclass(frozen=True, slots=True)
class ScopeInfo:
    folder: str  # the folder name under .repomap/scopes/ (the sanitized name)
    name: str  # the branch or $REPOMAP_SCOPE it was made for
    mode: str
    db_path: str
    model_id: str | None = None
    indexed_at: str | None = None
    files: int = 0
    symbols: int = 0
    chunks: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _registry_path(root: Path) -> Path:
    return config.scopes_dir(root) / REGISTRY


def read_registry(root: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_registry_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def scopes(root: Path) -> list[ScopeInfo]:
    """Every branch scope under ROOT: the registry's, and folders holding an index it lacks."""
    registry = read_registry(root)
    found = []
    folder = config.scopes_dir(root)
    names = set(registry)
    if folder.is_dir():
        names |= {entry.name for entry in folder.iterdir() if (entry / "index.db").is_file()}
    for name in sorted(names):
        entry = registry.get(name, {})
        found.append(
            ScopeInfo(
                name,
                str(entry.get("name", name)),
                str(entry.get("mode", "git")),
                str(folder / name / "index.db"),
                entry.get("model_id"),
                entry.get("indexed_at"),
                int(entry.get("files", 0)),
                int(entry.get("symbols", 0)),
                int(entry.get("chunks", 0)),
            )
        )
    return found


def record(settings: Settings) -> None:
    """After a run in a branch scope: its entry in the registry (written whole, atomically)."""
    if settings.scope_mode == "fixed" or not settings.uses_default_db:
        return
    with store.reading(settings.db_path) as db:
        entry = {
            "name": settings.scope,
            "mode": settings.scope_mode,
            "model_id": db.scalar(
                "SELECT m.name FROM vector_scopes s JOIN embedding_models m ON m.id = s.model "
                "WHERE s.name = 'main'"
            ),
            "indexed_at": store.get_meta(db, "indexed_at"),
            "files": db.scalar("SELECT count(*) FROM files"),
            "symbols": db.scalar("SELECT count(*) FROM symbols"),
            "chunks": db.scalar("SELECT count(*) FROM chunks"),
        }
    registry = read_registry(settings.root)
    registry[settings.db_path.parent.name] = entry
    _write_registry(settings.root, registry)


def _write_registry(root: Path, registry: dict[str, dict[str, Any]]) -> None:
    path = _registry_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{REGISTRY}.{os.getpid()}")
    partial.write_text(json.dumps(registry, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(path)


def seed(settings: Settings) -> str | None:
    """A scope without an index starts as a copy of the scope indexed most recently; the name
    of the scope copied, or None (no other scope, or not a branch scope)."""
    if settings.scope_mode == "fixed" or not settings.uses_default_db:
        return None
    if settings.db_path.exists():
        return None
    candidates = [
        info
        for info in scopes(settings.root)
        if Path(info.db_path) != settings.db_path and Path(info.db_path).is_file()
    ]
    fixed = config.default_db_path(settings.root)
    if not candidates and not fixed.is_file():
        return None
    if candidates:
        source = max(candidates, key=lambda info: info.indexed_at or "")
        source_path, name = Path(source.db_path), source.name
    else:
        source_path, name = fixed, config.DEFAULT_SCOPE
    store.prepare_folder(settings.db_path)
    try:
        copy_index(source_path, settings.db_path)
    except RepomapError:
        return None  # a damaged source: this scope is built from scratch instead
    return name


def cached_elsewhere(settings: Settings, model_id: str, hashes: set[str]) -> dict[str, Any]:
    """Vectors for these text hashes from the other scopes' embedding caches (the cache is
    shared by content: a text embedded on one branch is never embedded again on another)."""
    from repomap.store.vectors import EmbeddingCache

    found: dict[str, Any] = {}
    others = [Path(info.db_path) for info in scopes(settings.root)]
    others.append(config.default_db_path(settings.root))
    for path in others:
        wanted = hashes - found.keys()
        if not wanted:
            break
        if path == settings.db_path or not path.is_file():
            continue
        try:
            with store.reading(path) as db:
                found.update(EmbeddingCache(db).cached(model_id, wanted))
        except RepomapError:  # an outdated or damaged scope has nothing to lend
            continue
    return found


# --- clean and prune -------------------------------------------------------------------------


def index_files(db_path: Path) -> list[Path]:
    """An index file and what belongs to it: -wal, -shm, the lock, its vector files
    (store/vector_file.py), moved-aside copies."""
    from repomap.store import vector_file  # numpy: not for every command that reads scopes

    found = [db_path.with_name(db_path.name + suffix) for suffix in INDEX_FILES]
    found = [path for path in found if path.exists()]
    found += vector_file.files(db_path)
    if db_path.parent.is_dir():
        found += sorted(db_path.parent.glob(f"{db_path.name}.corrupt-*"))
    return found


def clean(settings: Settings, scope: str | None, everything: bool, dry_run: bool) -> list[Path]:
    """Remove index state (never a source file); the paths removed (or that would be)."""
    root = settings.root
    own = root / config.INDEX_DIR
    if everything:
        targets = sorted(own.iterdir()) if own.is_dir() else []
        if settings.db_path.exists() and not settings.db_path.is_relative_to(own):
            targets += _named_index(settings.db_path)
    elif scope is not None:
        path = config.db_path_for_scope(root, scope)
        folder = path.parent
        targets = [folder] if folder.parent == config.scopes_dir(root) and folder.is_dir() else []
        targets = targets or index_files(path)
        if not targets:
            raise BadArgument(f"no index for scope {scope!r} under {own}")
    else:
        path = settings.db_path
        targets = index_files(path) if path.is_relative_to(own) else _named_index(path)
    if not dry_run:
        for path in targets:
            _remove(path)
        if scope is not None and not everything:
            registry = read_registry(root)
            if registry.pop(config.sanitize_scope(scope), None) is not None:
                _write_registry(root, registry)
    return targets


def _named_index(db_path: Path) -> list[Path]:
    """An index named by --db, outside ROOT/.repomap: removed only when it is a SQLite file."""
    if db_path.exists() and not store.has_sqlite_header(db_path):
        raise BadArgument(f"{db_path} is not a SQLite index; repomap clean leaves it alone")
    return index_files(db_path)


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError as error:
        raise RepomapError(f"cannot remove {path} ({error.strerror or error})") from None


@dataclass(frozen=True, slots=True)
class Prunable:
    scope: ScopeInfo
    reason: str


def branches(root: Path) -> set[str] | None:
    """Local branches and remote branches (also without their remote's name), or None when git
    cannot say (not a repository, no git)."""
    git = shutil.which("git")
    if git is None:
        return None
    names: set[str] = set()
    for args in (["branch", "--list"], ["branch", "--remotes"]):
        try:
            done = subprocess.run(
                [git, *args, "--format=%(refname:short)"],
                cwd=root, capture_output=True, text=True, timeout=30, check=True,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        for line in done.stdout.splitlines():
            name = line.strip()
            if name:
                names.add(name)
                if args[-1] == "--remotes" and "/" in name:
                    names.add(name.split("/", 1)[1])
    return names


def prunable(settings: Settings, older_than: timedelta) -> list[Prunable]:
    """Scopes whose branch no longer exists, or not indexed for `older_than`; never the current
    one."""
    known = branches(settings.root)
    cutoff = datetime.now(timezone.utc) - older_than
    found = []
    for info in scopes(settings.root):
        if Path(info.db_path) == settings.db_path:
            continue
        if info.mode == "git" and known is not None and info.name not in known:
            found.append(Prunable(info, f"branch {info.name!r} no longer exists"))
            continue
        when = _parse_time(info.indexed_at)
        if when is None or when < cutoff:
            age = "never indexed" if when is None else f"last indexed {info.indexed_at}"
            found.append(Prunable(info, f"{age}, older than {older_than.days} days"))
    return found


def prune(settings: Settings, older_than: timedelta, apply: bool) -> list[Prunable]:
    found = prunable(settings, older_than)
    if apply:
        registry = read_registry(settings.root)
        for item in found:
            _remove(Path(item.scope.db_path).parent)
            registry.pop(item.scope.folder, None)
        _write_registry(settings.root, registry)
    return found


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def parse_age(text: str) -> timedelta:
    """`30d`, `12h`, `2w` (or a bare number of days) as a duration; BadArgument otherwise."""
    units = {"d": 1.0, "w": 7.0, "h": 1 / 24}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "d")
    try:
        days = float(number) * units[unit]
    except ValueError:
        raise BadArgument(
            f"--older-than takes a duration like 30d, 12h or 2w, not {text!r}"
        ) from None
    if days < 0:
        raise BadArgument(f"--older-than cannot be negative ({text})")
    return timedelta(days=days)
