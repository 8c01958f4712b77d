"""Shared fixtures: real files under tmp_path, a real migrated SQLite index, the real CLI."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from repomap import config
from repomap.index import pipeline as indexer

# CI runs the property tests on hypothesis' fixed example sequence, so a run is repeatable and a
# failure found locally at random is a test to add, not a CI coin toss.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# A property's getter and setter: two definitions sharing a file and a qualified name (show --nth).
GETTER_AND_SETTER = (
    "class Box:\n"
    "    @property\n"
    "    def size(self):\n"
    "        return self._size\n"
    "\n"
    "    @size.setter\n"
    "    def size(self, value):\n"
    "        self._size = max(value, 0)\n"
)
CORPORA = Path(os.environ.get("REPOMAP_CORPORA", Path.home() / ".cache" / "repomap-corpora"))
# The model's folded graph (embed/graph_cache.py) is made once per test process in a folder of
# its own, not in the user's cache; the CLI's subprocesses inherit the variable.
if "REPOMAP_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="repomap-test-cache-")
    os.environ["REPOMAP_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, True)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REPOMAP_DB", "REPOMAP_ROOT", "REPOMAP_MAX_FILE_SIZE", "REPOMAP_WORKERS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write {relative path: text or bytes} under a fresh root; text is dedented."""

    def make(files: dict[str, str | bytes], root: Path | None = None) -> Path:
        return write_tree(root or tmp_path / "repo", files)

    return make


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write {relative path: text or bytes} under `root`; text is dedented."""
    for rel_path, body in files.items():
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    return root


# The tree the CLI search tests (click and the fast path) index once per module.
CLI_FILES = {
    "src/pool.py": '''
        """Connection pooling."""

        # TODO: the ConnectionPool should expire idle connections
        def get():
            raise ValueError("Failed to open %s: %d" % (1, 2))
        ''',
    "src/other.py": "# TODO: nothing about pools here\n",
}


def indexed_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """`files` written under `root` and indexed into its default database, in one process."""
    write_tree(root, files)
    indexer.run(config.resolve(root, workers=1))
    return root


@pytest.fixture
def index() -> Callable[..., indexer.Summary]:
    """Index a root into its default database, in-process, like `repomap index ROOT`."""

    def run(
        root: Path, db: Path | None = None, force: bool = False, workers: int = 1
    ) -> indexer.Summary:
        return indexer.run(config.resolve(root, db, workers=workers), force=force)

    return run


def run_cli(
    *args: str | Path, cwd: Path | None = None, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """The real `repomap` CLI in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "repomap.cli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
