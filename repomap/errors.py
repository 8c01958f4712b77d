"""Errors the user can act on, and the exit codes the CLI turns them into."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """grep's and rg's convention, for every command (README, "Exit status")."""

    OK = 0  # something found, or the command did its job
    NO_MATCH = 1  # a search or lookup that found nothing
    ERROR = 2  # any error: bad arguments (Click's own code), no index, a failure
    # The causes, named where they are raised; all are errors, so all exit 2.
    USAGE = 2
    NO_INDEX = 2
    SCHEMA_TOO_NEW = 2
    BUSY = 2


class RepomapError(Exception):
    """An error the user can act on; the message says what to do next."""

    exit_code = ExitCode.ERROR


class NotFound(RepomapError):
    """A lookup by name found nothing (not an error: exit 1, like grep finding no line); the
    message says what was looked for and what is close."""

    exit_code = ExitCode.NO_MATCH


class IndexNotFound(RepomapError):
    exit_code = ExitCode.NO_INDEX


class SchemaTooNew(RepomapError):
    exit_code = ExitCode.SCHEMA_TOO_NEW


class IndexOutdated(RepomapError):
    """The index is from an older schema and was opened read-only, so it cannot migrate."""

    exit_code = ExitCode.NO_INDEX


class CorruptIndex(RepomapError):
    pass


class MigrationFailed(RepomapError):
    """A migration step failed and was rolled back; the database keeps its previous version."""


class NotAnIndex(RepomapError):
    """A SQLite file (or any file) that repomap did not create."""


class IndexBusy(RepomapError):
    exit_code = ExitCode.BUSY


class BadQuery(RepomapError):
    """A search query that cannot be read: `problem` says why, `position` is 1-based (code points)."""

    exit_code = ExitCode.USAGE

    def __init__(self, problem: str, position: int | None = None) -> None:
        message = problem if position is None else f"bad query at position {position}: {problem}"
        super().__init__(message)
        self.problem = problem
        self.position = position


class BadArgument(RepomapError):
    exit_code = ExitCode.USAGE


class OutsideRoot(BadArgument):
    """A path that leads outside ROOT (`..`, an absolute path, a symbolic link out)."""


class PathNotFound(RepomapError):
    pass


class StaleIndex(RepomapError):
    """The files changed since they were indexed; serving the old rows would give wrong lines."""

    exit_code = ExitCode.NO_INDEX


class Terminated(KeyboardInterrupt):
    """SIGTERM to a running `repomap index`, raised where Ctrl-C raises KeyboardInterrupt so the
    same cleanup runs (workers killed, the open batch rolled back); the CLI exits 143."""
