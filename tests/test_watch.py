"""`repomap watch`: real filesystem events on a real tree, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
WAIT = 60.0  # generous: the machine is shared


class Watching:
    """A `repomap watch --json` process and the updates it printed."""

    def __init__(self, root: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "repomap.cli", "watch", str(root), "--json", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def next_update(self, timeout: float = WAIT) -> dict:
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"no update in {timeout} s; stderr: {self._stderr()}") from None

    def until(self, check: Callable[[dict], bool], timeout: float = WAIT) -> list[dict]:
        """Updates until one passes `check` (all of them, that one last)."""
        seen, deadline = [], time.monotonic() + timeout
        while True:
            update = self.next_update(max(0.1, deadline - time.monotonic()))
            seen.append(update)
            if check(update):
                return seen

    def quiet(self, seconds: float) -> list[dict]:
        """The updates printed in the next `seconds`."""
        found, deadline = [], time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                found.append(json.loads(self.lines.get(timeout=left)))
            except queue.Empty:
                break
        return found

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return "(running)"
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def watching() -> Iterator[Callable[..., Watching]]:
    started: list[Watching] = []

    def start(root: Path, *args: str) -> Watching:
        started.append(Watching(root, *args))
        return started[-1]

    yield start
    for each in started:
        each.stop()


def _found(root: Path, word: str) -> list[str]:
    done = run_cli("search-text", word, "--root", root, "--json", "--no-refresh")
    assert done.returncode in (0, 1), done.stderr
    return [hit["file_path"] for hit in json.loads(done.stdout)["results"]]


@pytest.mark.slow
def test_edits_renames_deletes_and_folders_are_searchable_after_one_update_each(
    make_repo, watching
) -> None:
    root = make_repo({"pkg/a.py": "# first aardvark\n", "docs/guide.md": "# Guide\n\nbison\n"})
    watch = watching(root)
    first = watch.next_update()
    assert first["first"] and first["added"] == 1 and first["error"] is None

    (root / "pkg" / "a.py").write_text("# edited cheetah\n")
    watch.until(lambda u: u["modified"] == 1)
    assert _found(root, "cheetah") == ["pkg/a.py"] and _found(root, "aardvark") == []

    # an editor's save: the new text in a temp file, renamed over the original
    temp = root / "pkg" / ".a.py.swp"
    temp.write_text("# saved dugong\n")
    os.replace(temp, root / "pkg" / "a.py")
    watch.until(lambda u: u["modified"] == 1)
    assert _found(root, "dugong") == ["pkg/a.py"]

    # a new folder holding files already (moved in whole), then deleted
    staging = root.parent / "staging"
    (staging / "deep").mkdir(parents=True)
    (staging / "deep" / "b.py").write_text("# moved elephant\n")
    os.rename(staging, root / "newpkg")
    watch.until(lambda u: u["added"] == 1)
    assert _found(root, "elephant") == ["newpkg/deep/b.py"]
    shutil.rmtree(root / "newpkg")
    watch.until(lambda u: u["removed"] == 1)
    assert _found(root, "elephant") == []

    (root / "docs" / "guide.md").write_text("# Guide\n\nflamingo\n")
    watch.until(lambda u: u["docs_changed"] == 1)
    done = run_cli("search-docs", "flamingo", "--root", root, "--json", "--no-refresh")
    assert json.loads(done.stdout)["count"] == 1


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})  # fmt: skip


@pytest.mark.slow
def test_a_checkout_of_a_thousand_files_is_one_batch(make_repo, watching) -> None:
    files = {f"mod{n // 100}/f{n}.py": f"# version one gnu{n}\n" for n in range(1000)}
    root = make_repo(files)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    _git(root, "checkout", "-q", "-b", "other")
    for n in range(1000):
        (root / f"mod{n // 100}" / f"f{n}.py").write_text(f"# version two hyena{n}\n")
    _git(root, "commit", "-qam", "two")
    _git(root, "checkout", "-q", "main")
    watch = watching(root)
    assert watch.next_update()["files"] == 1000
    _git(root, "checkout", "-q", "other")
    updates = watch.until(lambda u: u["modified"] > 0)
    updates += watch.quiet(3.0)
    changed = [u for u in updates if u["modified"]]
    assert [u["modified"] for u in changed] == [1000]  # one batch, not one per file
    assert _found(root, "hyena512") == ["mod5/f512.py"]


@pytest.mark.slow
def test_with_git_scopes_a_branch_switch_changes_the_index_used(make_repo, watching) -> None:
    root = make_repo({"a.py": "# on main ibex\n", "repomap.toml": "[scope]\nmode = 'git'\n"})
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    watch = watching(root)
    assert watch.next_update()["scope"] == "main"
    _git(root, "checkout", "-q", "-b", "feature/jackal")  # no file changes: HEAD only
    switched = watch.until(lambda u: u["scope"] == "feature/jackal")[-1]
    assert switched["first"] and switched["files"] == 1
    (root / "a.py").write_text("# on the feature kudu\n")
    watch.until(lambda u: u["modified"] == 1 and u["scope"] == "feature/jackal")
    assert _found(root, "kudu") == ["a.py"]
    folders = sorted(p.name for p in (root / ".repomap" / "scopes").iterdir() if p.is_dir())
    assert folders[0].startswith("feature-jackal-") and folders[1:] == ["main"]
    main_db = root / ".repomap" / "scopes" / "main" / "index.db"
    done = run_cli("search-text", "kudu", "--db", main_db, "--root", root, "--json", "--no-refresh")
    assert json.loads(done.stdout)["count"] == 0  # main's index still holds main's text


@pytest.mark.slow
def test_mcp_watch_re_indexes_in_the_servers_process(make_repo) -> None:
    root = make_repo({"a.py": "# first lynx\n"})
    server = subprocess.Popen(
        [sys.executable, "-m", "repomap.cli", "mcp", "--root", str(root), "--watch"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert server.stderr is not None
        for line in server.stderr:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()

    def line_with(text: str) -> str:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} on the server's stderr")

    try:
        assert "1 added" in line_with("[main] indexed:")
        (root / "a.py").write_text("# edited marmot\n")
        assert "1 modified" in line_with("[main] re-indexed:")
        assert _found(root, "marmot") == ["a.py"]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_watch_sees_what_the_index_reads_by_name() -> None:
    # A build's template of a header is indexed (`logging.h.in`): an edit to it was never seen,
    # the watch's own suffix list had no `.in`.
    from repomap.index.watch import is_indexed_name

    assert is_indexed_name("logging.h.in") and is_indexed_name("pool.py")
    assert is_indexed_name(".gitignore") and is_indexed_name("README.md")
    assert not is_indexed_name("Makefile.in") and not is_indexed_name("photo.png")
