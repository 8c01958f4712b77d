"""Commit history as records: `git log` in a subprocess, read into the `commits` table.

`update_history(writer, root, redact)` brings the table up to date with HEAD's history:
- incremental by the last indexed commit (meta `history_head`): the commits in
  `git log OLD..HEAD` are added and those in `git rev-list HEAD..OLD` (no longer in HEAD's
  history: a rebase, a reset, a force-push, another branch checked out) are removed; when OLD
  is gone from the repository (garbage-collected after a rewrite) the history is read again
  whole;
- no git, not a repository, a repository without commits, or a shallow clone: skipped with a
  note (never an error), the commits indexed before left as they were;
- one `git log -z` with an explicit format: hash, parents, author and committer (name, email,
  time as ISO 8601 UTC with milliseconds), subject, body and the changed paths (`--name-status`
  with rename detection: a rename lists both paths; a merge lists none, as `git log` shows it);
- credentials in subjects and bodies are redacted as in code text (index/secrets.py).

`log_lines(root, path, start, end)` runs `git log -L` for `repomap history NAME`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from repomap import store
from repomap.config import Settings
from repomap.index import secrets
from repomap.index.chunks import commit_chunk

# Bump when what is stored per commit changes: the history is then read again whole.
HISTORY_VERSION = "2"  # 2: a chunk per commit
FIELDS = ("%H", "%P", "%an", "%ae", "%cn", "%ce", "%at", "%ct", "%s", "%b")
START = "\x1e"  # before each commit's fields: tells a commit from the paths of the one before
FORMAT = START + "%x00".join(FIELDS) + "%x00"
GIT_TIMEOUT = 600  # seconds, for git's short answers (rev-parse, rev-list, log -L)
STREAM_BLOCK = 1 << 20  # bytes of `git log` output read at a time
# Environment variables that would point git at another repository or change its output.
_GIT_ENV_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                    "GIT_CEILING_DIRECTORIES", "GIT_NAMESPACE", "GIT_CONFIG_PARAMETERS")  # fmt: skip


class GitUnavailable(Exception):
    """git cannot answer here; the message is the note shown instead of a history."""


@dataclass(slots=True)
class HistorySummary:
    status: str = "skipped"  # indexed | unchanged | skipped
    note: str | None = None
    head: str | None = None
    added: int = 0
    removed: int = 0
    rewritten: bool = False  # commits indexed before left HEAD's history (or it was re-read)
    commits: int = 0  # in the index after the run
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "note": self.note,
            "head": self.head,
            "added": self.added,
            "removed": self.removed,
            "rewritten": self.rewritten,
            "commits": self.commits,
            "seconds": round(self.seconds, 3),
        }


def _command(root: Path, args: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """git in `root` with a fixed, plain output (no pager, colour, signatures or quoting of
    paths), the caller's repository-selecting environment ignored."""
    if shutil.which("git") is None:
        raise GitUnavailable("git is not installed: commit history not indexed")
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROPPED}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    command = ["git", "-C", str(root), "-c", "core.quotepath=off", "-c", "log.showSignature=false",
               "-c", "color.ui=false", *args]  # fmt: skip
    return command, env


def _failure(args: tuple[str, ...], stderr: bytes, code: int) -> GitUnavailable:
    message = stderr.decode("utf-8", "replace").strip().splitlines()
    return GitUnavailable(f"git {args[0]} failed: {message[-1] if message else code}")


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run git in `root` (see _command) and take its whole output."""
    command, env = _command(root, args)
    try:
        done = subprocess.run(
            command, capture_output=True, env=env, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitUnavailable(f"git failed ({error}): commit history not indexed") from None
    if check and done.returncode != 0:
        raise _failure(args, done.stderr, done.returncode)
    return done


def git_tokens(root: Path, *args: str) -> Iterator[str]:
    """git's NUL-separated output (`-z`), token by token as git writes it: the commits are
    parsed (and their chunks made) while git still reads the history, on the other core."""
    command, env = _command(root, args)
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=errors, env=env, stdin=subprocess.DEVNULL
            )
        except OSError as error:
            raise GitUnavailable(f"git failed ({error}): commit history not indexed") from None
        assert process.stdout is not None
        with process:
            rest = b""
            while block := process.stdout.read(STREAM_BLOCK):
                parts = (rest + block).split(b"\0")
                rest = parts.pop()
                for part in parts:
                    yield part.decode("utf-8", "replace")
            if rest:
                yield rest.decode("utf-8", "replace")
            code = process.wait()
        if code != 0:
            errors.seek(0)
            raise _failure(args, errors.read(), code)


@dataclass(frozen=True, slots=True)
class Repository:
    head: str
    prefix: str  # ROOT's folder inside the repository ('' at its top), with a trailing '/'


def repository(root: Path) -> Repository:
    """HEAD and where ROOT sits in its repository; GitUnavailable with the reason otherwise."""
    if not (root / ".git").exists() and shutil.which("git") is not None:
        # git finds a work tree by a `.git` in ROOT or a folder above it (_command drops the
        # variables that would name one): with none there it is not asked (~3 ms a run).
        absolute = root.absolute()
        if not any((folder / ".git").exists() for folder in absolute.parents):
            raise GitUnavailable("not a git repository: commit history not indexed")
        probe = git(root, "rev-parse", "--is-inside-work-tree", check=False)
        if probe.returncode != 0:
            raise GitUnavailable("not a git repository: commit history not indexed")
    done = git(root, "rev-parse", "--is-shallow-repository", "--show-prefix", "HEAD", check=False)
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace")
        if "not a git repository" in error:
            raise GitUnavailable("not a git repository: commit history not indexed")
        raise GitUnavailable("the repository has no commits yet: commit history not indexed")
    shallow, prefix, head = (lines + ["", "", ""])[:3]  # --show-prefix: '' at the top
    if shallow == "true":
        raise GitUnavailable("a shallow clone: commit history not indexed (run `git fetch "
                             "--unshallow` for it)")  # fmt: skip
    return Repository(head, prefix)


def read_log(
    root: Path, *revisions: str, prefix: str = "", redact: bool = True
) -> Iterator[store.CommitRow]:
    """The commits `git log REVISIONS` lists (newest first), each with its changed paths, as
    git writes them."""
    args = ["log", "-z", "--no-mailmap", "--format=" + FORMAT, "--name-status", "-M", *revisions]
    if prefix:  # ROOT inside a larger repository: its commits, paths relative to ROOT
        args[1:1] = ["--relative"]
        args += ["--", "."]
    return parse_tokens(git_tokens(root, *args), redact)


def parse_log(output: bytes, redact: bool = True) -> Iterator[store.CommitRow]:
    """Commits from `git log -z --format=FORMAT [--name-status]` output."""
    return parse_tokens(output.decode("utf-8", "replace").split("\0"), redact)


def parse_tokens(tokens: Iterable[str], redact: bool = True) -> Iterator[store.CommitRow]:
    """Commits from the NUL-separated tokens of `git log -z --format=FORMAT --name-status`:
    each commit's FIELDS (the first marked with START), then its changes, one status token
    (`M`, `A`, `D`, `R100`, ...; the first led by a newline) and one path (two for a rename or
    copy) each."""
    clean = secrets.redact if redact else str
    stream = iter(tokens)
    token = next(stream, None)
    while token is not None:
        if not token.startswith(START):
            token = next(stream, None)
            continue
        head = [token[1:], *(next(stream, "") for _ in range(len(FIELDS) - 1))]
        paths: list[str] = []
        token = next(stream, None)
        while token is not None and not token.startswith(START):
            status = token.lstrip("\n")
            if status:
                for _ in range(2 if status[0] in "RC" else 1):
                    paths.append(next(stream, ""))
            token = next(stream, None)
        (hash_, parents, author_name, author_email, committer_name, committer_email,
         author_time, commit_time, subject, body) = head  # fmt: skip
        yield store.CommitRow(
            hash_,
            parents,
            author_name,
            author_email,
            committer_name,
            committer_email,
            iso_time(author_time),
            iso_time(commit_time),
            clean(subject),
            clean(body.rstrip("\n")),
            tuple(paths),
        )


def iso_time(epoch: str) -> str:
    """Seconds since the epoch as ISO 8601 UTC with milliseconds: 2024-05-01T12:00:00.000Z."""
    moment = datetime.fromtimestamp(int(epoch or 0), timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


OFF_NOTE = "not read: index.history is false (repomap.toml or REPOMAP_HISTORY)"


def update_history(
    writer: store.Writer, root: Path, redact: bool = True, enabled: bool = True
) -> HistorySummary:
    """Bring the commits table up to date with HEAD's history (see the module docstring);
    with `enabled` false (a history too long to read on every run), forget it instead."""
    import time

    started = time.perf_counter()
    db = writer.db
    summary = HistorySummary()
    if not enabled:
        summary.note = OFF_NOTE
        summary.removed = store.delete_commits(writer, None)
        store.set_meta(db, {"history_head": "", "history_settings": ""})
        return summary
    try:
        repo = repository(root)
    except GitUnavailable as reason:
        summary.note = str(reason)
        summary.commits = store.indexed_commits(db)
        return summary
    summary.head = repo.head
    settings = f"{HISTORY_VERSION}:{int(redact)}:{repo.prefix}"
    old = store.get_meta(db, "history_head")
    same_settings = store.get_meta(db, "history_settings") == settings
    if old == repo.head and same_settings:
        summary.status = "unchanged"
        summary.commits = store.indexed_commits(db)
        return summary
    try:
        if old and same_settings and _exists(root, old):
            gone = _rev_list(root, f"{repo.head}..{old}", repo.prefix)
            revisions = f"{old}..{repo.head}"
            summary.rewritten = bool(gone)
        else:
            gone = None
            revisions = repo.head
            summary.rewritten = bool(old) and store.indexed_commits(db) > 0
        added = []
        chunks = []
        for row in read_log(root, revisions, prefix=repo.prefix, redact=redact):
            added.append(row)
            chunks.append(commit_chunk(row.subject, row.body, row.paths))
    except GitUnavailable as reason:
        summary.note = str(reason)
        summary.commits = store.indexed_commits(db)
        return summary
    with writer.batch():
        summary.removed = store.delete_commits(writer, gone)
        summary.added = store.insert_commits(writer, added[::-1], chunks[::-1])
        store.set_meta(db, {"history_head": repo.head, "history_settings": settings})
    summary.status = "indexed"
    summary.commits = store.indexed_commits(db)
    summary.seconds = time.perf_counter() - started
    return summary


def _exists(root: Path, commit: str) -> bool:
    return git(root, "cat-file", "-e", f"{commit}^{{commit}}", check=False).returncode == 0


def _rev_list(root: Path, revisions: str, prefix: str) -> list[str]:
    done = git(root, "rev-list", revisions, *(["--", "."] if prefix else []))
    return done.stdout.decode("ascii", "replace").split()


def head_of(root: Path) -> str | None:
    """HEAD's commit, or None where there is no history to read (for the freshness check)."""
    try:
        return repository(root).head
    except GitUnavailable:
        return None


def log_lines(root: Path, rel_path: str, start: int, end: int) -> list[store.CommitRow]:
    """The commits that changed lines start..end of `rel_path` (as it is at HEAD), newest first:
    `git log -L` follows the lines back through edits and renames."""
    done = git(root, "log", "-z", "--no-mailmap", "--format=" + FORMAT, "-s",
               f"-L{start},{end}:{rel_path}")  # fmt: skip
    return list(parse_log(done.stdout))


def why_no_commits(settings: Settings) -> str:
    """Why an index holds no commits, so an empty answer is not read as "no such commit"."""
    if not settings.history:
        return OFF_NOTE
    try:
        repository(settings.root)
    except GitUnavailable as reason:
        return str(reason)
    return "none read yet; run `repomap index`"
