"""The MCP server's refresh: the watchers notice what can change the index, and the refresher
runs the real incremental indexer only then, bounded in time, quietly skipping a busy index."""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from repomap import config
from repomap.errors import IndexNotFound
from repomap.index import pipeline as indexer
from repomap.index import watch
from repomap.index.freshness import Refresher
from repomap.store import reading

# The watcher tests expect a change to be reported by the very next changes(): watchfiles on
# inotify, where one kernel queue keeps ROOT's events and the marker's in order.
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
def test_watcher_reports_indexed_files_and_ignores_other_writes(repo: Path) -> None:
    watcher = watch.start_watcher(repo, poll_interval=60)
    assert watcher.method == "watchfiles" and watcher.event_driven
    assert watcher.changes() == watch.Changes()
    (repo / "pkg" / "notes.log").write_text("noise\n")
    (repo / "pkg" / "__pycache__").mkdir()
    (repo / "pkg" / "__pycache__" / "a.cpython-311.py").write_text("")
    (repo / ".repomap").mkdir()
    (repo / ".repomap" / "index.md").write_text("")
    assert watcher.changes() == watch.Changes()
    (repo / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    assert watcher.changes() == watch.Changes(dirty=True)  # seen at once, no waiting
    assert watcher.changes() == watch.Changes()  # taken
    (repo / "README.md").unlink()
    assert watcher.changes() == watch.Changes(dirty=True)
    (repo / "pkg" / "a.py").rename(repo / "pkg" / "b.py")
    assert watcher.changes() == watch.Changes(dirty=True)
    (repo / "pkg" / ".gitignore").write_text("*.log\n")
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)  # the rules changed
    watcher.close()


@linux_only
def test_watcher_sees_files_in_folders_that_were_empty_or_created_later(
    repo: Path, tmp_path: Path
) -> None:
    watcher = watch.start_watcher(repo, poll_interval=60)
    (repo / "empty" / "b.py").write_text("def beta(): pass\n")
    assert watcher.changes() == watch.Changes(dirty=True)
    (repo / "newpkg" / "deeper").mkdir(parents=True)
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    (repo / "newpkg" / "deeper" / "c.py").write_text("def gamma(): pass\n")
    assert watcher.changes().dirty  # watched without a resync in between
    watcher.resync()
    (repo / "newpkg" / "deeper" / "c.py").write_text("def delta(): pass\n")
    assert watcher.changes() == watch.Changes(dirty=True)  # a kept folder now
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "d.py").write_text("def moved_in(): pass\n")
    outside.rename(repo / "moved")  # files arrive with the folder, without events of their own
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    (repo / "pkg").rename(repo / "renamed")
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    shutil.rmtree(repo / "empty")
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    watcher.close()


@linux_only
def test_watcher_drops_events_in_folders_the_ignore_rules_exclude(make_repo) -> None:
    repo = make_repo({"a.py": "", ".gitignore": "build/\nout/\n", "build/gen.py": ""})
    watcher = watch.start_watcher(repo, poll_interval=60)
    # The first event from a folder no walk kept counts (it could be new); the walk that
    # follows files it as excluded, and its events stop counting.
    (repo / "build" / "gen.py").write_text("x = 1\n")
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    watcher.resync()
    (repo / "build" / "gen.py").write_text("x = 2\n")
    (repo / "build" / "sub").mkdir()
    (repo / "build" / "sub" / "more.py").write_text("")
    assert watcher.changes() == watch.Changes()
    (repo / "out").mkdir()  # created later, excluded from the start
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    watcher.resync()
    (repo / "out" / "x.py").write_text("")
    assert watcher.changes() == watch.Changes()
    (repo / ".gitignore").write_text("out/\n")  # build/ is kept from now on
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    watcher.resync()
    (repo / "build" / "gen.py").write_text("x = 3\n")
    assert watcher.changes() == watch.Changes(dirty=True)
    (repo / "out" / "x.py").write_text("y = 1\n")
    assert watcher.changes() == watch.Changes()
    watcher.close()


@linux_only
def test_a_watch_that_fails_asks_for_a_resync_which_says_so(repo: Path) -> None:
    watcher = watch.start_watcher(repo, poll_interval=60)
    # watchfiles stops on a file name that is not UTF-8 (the walk skips such files).
    os.close(os.open(bytes(repo / "pkg") + b"/bad\xff.py", os.O_CREAT | os.O_WRONLY))
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)
    with pytest.raises(watch.WatchFailed, match="stopped watching"):
        watcher.resync()
    assert watcher.changes() == watch.Changes(dirty=True, resync=True)  # until replaced
    watcher.close()


def test_watchfiles_unable_to_start_means_polling(
    repo: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def out_of_watches(*args, **kwargs):
        raise OSError(errno.ENOSPC, "OS file watch limit reached")
        yield  # a generator, like watchfiles.watch

    monkeypatch.setattr(watch.watchfiles, "watch", out_of_watches)
    watcher = watch.start_watcher(repo, poll_interval=0.0)
    assert watcher.method == "polling" and not watcher.event_driven
    assert "polling every 0.0 s instead" in caplog.text
    (repo / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    assert watcher.changes().dirty


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


def test_an_index_made_by_another_repomap_is_read_again_and_said_so(repo: Path) -> None:
    """After an upgrade the MCP server's first answer said "re-indexed 38 changed files (0
    added, 37 modified ...)" of files nobody had changed (a search user's report)."""
    import sqlite3

    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    db = sqlite3.connect(settings.db_path)
    with db:  # as an older repomap left it
        db.execute("UPDATE meta SET value = '1' WHERE key = 'extractor_version'")
    db.close()
    refresher = Refresher(settings, poll_interval=0.0)
    notices = refresher.ensure_fresh()
    assert any(
        notice.startswith("re-read every file (1 code files, 1 docs)")
        and f"made with extractor version 1 (now {indexer.EXTRACTOR_VERSION})" in notice
        for notice in notices
    ), notices
    assert not any("changed file" in notice for notice in notices)
    assert refresher.ensure_fresh() == []
    refresher.close()


def _refreshed_after_an_edit(repo: Path, settings: config.Settings) -> Refresher:
    """Index, start a refresher, rename pkg/a.py's function: the next answer sees it."""
    indexer.run(settings)
    refresher = Refresher(settings, poll_interval=0.0)
    refresher.ensure_fresh()
    (repo / "pkg" / "a.py").write_text("def renamed():\n    pass\n")
    notices = refresher.ensure_fresh()
    assert _symbols(settings) == {"renamed"}
    assert any("re-indexed 1 changed file" in notice for notice in notices)
    return refresher


def test_a_change_is_indexed_before_the_next_answer(repo: Path) -> None:
    _refreshed_after_an_edit(repo, config.resolve(repo, workers=1)).close()


@linux_only
@pytest.mark.parametrize("where", ["root", "above"])
def test_a_change_is_indexed_when_the_index_file_lies_in_or_above_root(
    repo: Path, where: str
) -> None:
    # `--db ROOT/x.db` (or a folder holding ROOT): the index's folder was skipped by the
    # watcher, and with it every event of the tree; answers stayed stale with no notice.
    db_path = (repo if where == "root" else repo.parent) / "x.db"
    settings = config.resolve(repo, db_path, workers=1)
    logs = {repo.resolve() / "x-search-log.jsonl", repo.resolve() / "x-search-log.1.jsonl"}
    assert settings.index_skipped == (logs if where == "root" else frozenset())
    refresher = _refreshed_after_an_edit(repo, settings)
    # The search log an answer writes beside the index is no data file to re-index.
    (db_path.parent / "x-search-log.jsonl").write_text('{"kind": "search"}\n')
    assert refresher.ensure_fresh() == []
    with reading(settings.db_path) as db:
        assert db.conn.execute("SELECT count(*) FROM data_files").fetchone() == (0,)
    refresher.close()


def test_an_index_folder_inside_root_is_skipped(repo: Path) -> None:
    settings = config.resolve(repo, repo / "build" / "x.db", workers=1)
    assert settings.index_skipped == frozenset({(repo / "build").resolve()})


@linux_only
def test_a_file_in_a_folder_made_after_the_refresher_started_is_indexed_and_watched(
    repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    refresher = Refresher(settings)
    assert refresher.ensure_fresh() == []
    assert refresher.state().method == "watchfiles"
    (repo / "later" / "deeper").mkdir(parents=True)
    (repo / "later" / "deeper" / "c.py").write_text("def gamma():\n    pass\n")
    assert not refresher.is_fresh()
    notices = refresher.ensure_fresh()
    assert _symbols(settings) == {"alpha", "gamma"}
    assert any("re-indexed 1 changed file (1 added" in notice for notice in notices)
    assert refresher.is_fresh()
    # The new folder is watched like the others: an edit inside it is seen and indexed.
    (repo / "later" / "deeper" / "c.py").write_text("def delta():\n    pass\n")
    assert not refresher.is_fresh()
    refresher.ensure_fresh()
    assert _symbols(settings) == {"alpha", "delta"}
    assert refresher.is_fresh()
    assert refresher.state().method == "watchfiles"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    refresher.close()


@linux_only
def test_a_refresher_whose_watch_fails_polls_instead(
    repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    refresher = Refresher(settings, poll_interval=0.0)
    refresher.ensure_fresh()
    assert refresher.state().method == "watchfiles"
    os.close(os.open(bytes(repo / "pkg") + b"/bad\xff.py", os.O_CREAT | os.O_WRONLY))
    (repo / "pkg" / "b.py").write_text("def beta():\n    pass\n")
    refresher.ensure_fresh()
    assert refresher.state().method == "polling"
    assert "stopped watching" in caplog.text and "polling instead" in caplog.text
    assert _symbols(settings) == {"alpha", "beta"}
    (repo / "pkg" / "b.py").write_text("def gamma():\n    pass\n")
    refresher.ensure_fresh()
    assert _symbols(settings) == {"alpha", "gamma"}
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


def test_a_bug_in_a_refresh_is_raised_to_the_log_said_and_retried(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A blanket except turned any bug in a refresh into a notice, and the changes it was
    indexing were dropped: a bug (like the one that left new folders unwatched) hid there."""
    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    refresher = Refresher(settings, poll_interval=0.0)
    refresher.ensure_fresh()
    raised: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: raised.append(hook.exc_value))
    real_run = indexer.run

    def broken_run(*args, **kwargs):
        raise TypeError("'bool' object is not callable")

    monkeypatch.setattr(indexer, "run", broken_run)
    (repo / "pkg" / "a.py").write_text("def renamed():\n    pass\n")
    notices = refresher.ensure_fresh()
    assert [type(error) for error in raised] == [TypeError]  # to the log, with its traceback
    assert any("unexpected error" in notice for notice in notices)
    assert "unexpected error" in refresher.state().last_error
    monkeypatch.setattr(indexer, "run", real_run)  # fixed: the change is still due
    assert any("re-indexed 1 changed file" in notice for notice in refresher.ensure_fresh())
    assert _symbols(settings) == {"renamed"}
    assert refresher.state().last_error is None
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


def test_a_kept_reader_keeps_what_it_read_until_the_index_changes(repo: Path) -> None:
    """Store.per_content: a server's reader loads a value once per index content and again
    after any commit; a one-query connection loads it each time."""
    from repomap import store
    from repomap.store import KeptReader

    settings = config.resolve(repo, workers=1)
    indexer.run(settings)
    reader = KeptReader(settings.db_path)
    loads: list[int] = []

    def symbols(db: store.Store) -> int:
        loads.append(1)
        return int(db.scalar("SELECT count(*) FROM symbols"))

    for _ in range(3):
        with reader.snapshot() as db:
            assert db.per_content("symbols", lambda: symbols(db)) == 1
    assert len(loads) == 1
    (repo / "pkg" / "b.py").write_text("def beta():\n    pass\n")
    indexer.run(settings)
    for _ in range(2):
        with reader.snapshot() as db:
            assert db.per_content("symbols", lambda: symbols(db)) == 2
    assert len(loads) == 2
    reader.close()
    for _ in range(2):
        with store.reading(settings.db_path) as db:
            assert db.per_content("symbols", lambda: symbols(db)) == 2
    assert len(loads) == 4
