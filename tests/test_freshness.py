"""The MCP server's refresh: the watchers notice what can change the index, and the refresher
runs the real incremental indexer only then, bounded in time, quietly skipping a busy index."""

from __future__ import annotations

import fcntl
import sys
import time
from pathlib import Path

import pytest

from repomap import config
from repomap.errors import IndexNotFound
from repomap.index import pipeline as indexer
from repomap.index import watch
from repomap.index.freshness import Refresher
from repomap.store import reading

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")


def _symbols(settings: config.Settings) -> set[str]:
    with reading(settings.db_path) as db:
        return {row[0] for row in db.conn.execute("SELECT name FROM symbols")}


@pytest.fixture
def repo(make_repo) -> Path:
    return make_repo(
        {
            "pkg/a.py": "def alpha():\n    pass\n",
            "README.md": "# Title\n\ntext\n",
            "empty/.keep": "",
        }
    )


@linux_only
def test_inotify_reports_indexed_files_and_ignores_other_writes(repo: Path) -> None:
    watcher = watch.start_watcher(repo, poll_interval=60)
    assert watcher.method == "inotify"
    assert watcher.changes() == watch.Changes()
    (repo / "pkg" / "notes.log").write_text("noise\n")
    (repo / "pkg" / "__pycache__").mkdir()
    (repo / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert not watcher.changes().dirty
    (repo / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    assert watcher.changes() == watch.Changes(dirty=True)
    assert not watcher.changes().dirty  # drained
    (repo / "README.md").unlink()
    assert watcher.changes().dirty
    watcher.close()


@linux_only
def test_inotify_sees_files_in_directories_that_were_empty_or_new(repo: Path) -> None:
    watcher = watch.start_watcher(repo, poll_interval=60)
    (repo / "empty" / "b.py").write_text("def beta(): pass\n")
    assert watcher.changes().dirty
    (repo / "newpkg").mkdir()
    changes = watcher.changes()
    assert changes.dirty and changes.resync
    watcher.resync()
    (repo / "newpkg" / "c.py").write_text("def gamma(): pass\n")
    assert watcher.changes().dirty
    watcher.close()


def test_poller_compares_fingerprints_at_most_once_per_interval(repo: Path) -> None:
    poller = watch.Poller(repo, interval=0.0)
    poller.resync()
    assert not poller.changes().dirty
    (repo / "pkg" / "a.py").write_text("def alpha():\n    return 2\n")
    assert poller.changes().dirty
    assert not poller.changes().dirty
    slow = watch.Poller(repo, interval=3600)
    slow.resync()
    (repo / "pkg" / "b.py").write_text("def beta(): pass\n")
    assert not slow.changes().dirty  # not asked again before the interval


def test_first_call_builds_a_missing_index_and_says_so(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = config.resolve(repo, workers=1)
    runs = []
    real_run = indexer.run
    monkeypatch.setattr(indexer, "run", lambda *a, **k: runs.append(1) or real_run(*a, **k))
    refresher = Refresher(settings)
    notices = refresher.ensure_fresh()
    assert settings.db_path.exists()
    assert any("built the index" in notice and "first use" in notice for notice in notices)
    assert _symbols(settings) == {"alpha"}
    assert refresher.ensure_fresh() == []  # nothing changed (the new .repomap/ is no change)
    assert len(runs) == 1
    refresher.close()


def test_a_change_is_indexed_before_the_next_answer(repo: Path) -> None:
    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    refresher = Refresher(settings, poll_interval=0.0)
    refresher.ensure_fresh()
    (repo / "pkg" / "a.py").write_text("def renamed():\n    pass\n")
    notices = refresher.ensure_fresh()
    assert _symbols(settings) == {"renamed"}
    assert any("re-indexed 1 changed files" in notice for notice in notices)
    refresher.close()


def test_a_busy_index_is_skipped_quietly(repo: Path) -> None:
    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    refresher = Refresher(settings)
    lock_path = settings.db_path.with_name(settings.db_path.name + ".lock")
    with open(lock_path, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as another `repomap index` would
        (repo / "pkg" / "a.py").write_text("def other():\n    pass\n")
        notices = refresher.ensure_fresh()
    assert any("another `repomap index`" in notice for notice in notices)
    assert _symbols(settings) == {"alpha"}  # served from the index as it was
    refresher.close()


def test_a_slow_refresh_is_waited_for_only_so_long(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    real_run = indexer.run

    def slow_run(*args, **kwargs):
        time.sleep(1.0)
        return real_run(*args, **kwargs)

    refresher = Refresher(settings, wait=0.1)
    refresher.ensure_fresh()
    while refresher.state().running:
        time.sleep(0.05)
    monkeypatch.setattr(indexer, "run", slow_run)
    (repo / "README.md").write_text("# Changed\n")
    started = time.monotonic()
    notices = refresher.ensure_fresh()
    assert time.monotonic() - started < 0.9
    assert any("being updated in the background" in notice for notice in notices)
    while refresher.state().running:
        time.sleep(0.05)
    refresher.close()


def test_no_refresh_never_builds(repo: Path) -> None:
    settings = config.resolve(repo, workers=1)
    with pytest.raises(IndexNotFound, match="--no-refresh"):
        Refresher(settings, enabled=False).ensure_fresh()
    assert not settings.db_path.exists()


def test_a_kept_reader_sees_each_update_and_follows_a_rebuilt_file(repo: Path) -> None:
    from repomap.store import KeptReader, move_aside

    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    reader = KeptReader(settings.db_path)

    def names() -> set[str]:
        with reader.snapshot() as db:
            return {row[0] for row in db.conn.execute("SELECT name FROM symbols")}

    assert names() == {"alpha"}
    assert not reader._conn.in_transaction  # nothing held between snapshots: checkpoints run
    (repo / "pkg" / "a.py").write_text("def beta():\n    pass\n")
    indexer.run(settings)
    assert names() == {"beta"}
    move_aside(settings.db_path)  # as recovery from a damaged index does
    indexer.run(settings)  # a new file at the same path
    (repo / "pkg" / "a.py").write_text("def gamma():\n    pass\n")
    indexer.run(settings)
    assert names() == {"gamma"}
    reader.close()
