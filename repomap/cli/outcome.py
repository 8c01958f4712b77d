"""What every command answers with, without click: the `--json` envelope, the exit status and
the command's line in the log.

- The envelope: `{"results": [...], "count": N, "truncated": bool, ...}` for every `--json`
  answer, the command's own fields beside those three. A command that answers with one thing
  (index, migrate, show, open) puts it in `results` as the only item.
- The exit status is grep's and rg's (errors.ExitCode): 0 when something was found (or the
  command did its job), 1 when a search or lookup found nothing, 2 on any error.
- Each command that runs appends `{"kind": "command", "command", "args", "results", "exit",
  "ms", "error"}` to the log beside its index (search/log.py), one write, for `repomap stats`.

Both ways into the CLI use this module: click's Group (main.py) and search-text's fast path
(fastpath.py), which must not import click, so nothing here does.
"""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path
from typing import Any

from repomap.errors import ExitCode


class Run:
    """The command this process is running: what its line in the log says."""

    def __init__(self, args: list[str]) -> None:
        self.args = args  # argv after the program name
        self.started = time.perf_counter()
        self.index: Path | None = None  # the index whose log gets the line (None: no line)
        self.results: int | None = None  # how many results it answered with


RUN = Run([])


def begin(args: list[str]) -> Run:
    """Start the record of a command (CliRunner runs several in one process)."""
    global RUN
    RUN = Run(list(args))
    return RUN


def note_index(path: Path) -> None:
    """The command reads or writes the index at `path`: its line goes to that index's log."""
    RUN.index = path


def found(count: int, search: bool = True) -> ExitCode:
    """The exit status of an answer with `count` results: 1 for a search that found nothing."""
    RUN.results = count
    return ExitCode.NO_MATCH if search and count == 0 else ExitCode.OK


def reader_gone() -> ExitCode:
    """The exit status after a write met a closed pipe. Stdout's reader gone (`repomap search Q
    | head -1`): it had what it wanted, so 0, as rg gives (1, "nothing found", was click's), and
    whatever is left to write goes nowhere, so that flushing at exit raises nothing either.
    Stderr's gone instead (stdout still read): the answer stands, 1 when it held nothing."""
    gone = _pipe_closed(sys.stdout) or not _pipe_closed(sys.stderr)
    stream = sys.stdout if gone else sys.stderr
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):  # no real stream (a test runner's): nothing left to flush
        pass
    if gone:
        return ExitCode.OK
    return ExitCode.NO_MATCH if not RUN.results else ExitCode.OK


def _pipe_closed(stream: Any) -> bool:
    """Whether `stream` writes to a pipe whose reader has closed it (poll says POLLERR)."""
    try:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # not a real file; no poll on this platform
        return False


def filter_notes(
    path: str | None, language: str | None, unmatched: bool, no_language: bool
) -> list[str]:
    """Why an answer is empty when a filter names no indexed file (a typo in --path, `--lang
    cpp` on a C project): notes on stderr, or the --json envelope's `notes`."""
    notes = [f"no indexed file matches --path {path}"] if unmatched else []
    if no_language:
        notes.append(f"no indexed file is in --lang {language}")
    return notes


def envelope(results: list[Any], truncated: bool = False, **fields: Any) -> dict[str, Any]:
    """The one shape of every --json answer."""
    return {"results": results, "count": len(results), "truncated": truncated, **fields}


def log_command(command: str | None, code: int, error: str | None) -> None:
    """Append the command's line to its index's log (never fails, never waits)."""
    if command is None or RUN.index is None:
        return
    from repomap import store

    # A `--db notes.txt` that is no index wrote notes-search-log.jsonl beside it.
    if not store.has_sqlite_header(RUN.index):
        return
    from repomap.search import log as searchlog

    searchlog.log_event(
        "command",
        index=RUN.index,
        command=command,
        args=[arg[: searchlog.MAX_FIELD] for arg in RUN.args[1:]],
        results=RUN.results,
        exit=int(code),
        ms=round((time.perf_counter() - RUN.started) * 1000, 3),
        error=error,
    )
