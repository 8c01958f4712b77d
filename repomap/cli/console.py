"""The rich consoles every human-readable answer is printed through; only the CLI imports this.

On a terminal rich wraps to its width. To a pipe or a file nothing is wrapped or cut (as rg):
rich's default width off a terminal is 80 columns, which cut a skipped file's path, a warning
or a table row in two for grep, editors and scripts to trip over."""

from __future__ import annotations

from rich.console import Console

UNWRAPPED_WIDTH = 1 << 14  # wide enough for any line, so tables keep each row on one line


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (`| head -1`): raised as the plain writes raise it, so the CLI
        ends as it does for them (cli/outcome.reader_gone); rich's own exits with status 1,
        "nothing found"."""
        raise BrokenPipeError


def console(stderr: bool = False) -> Console:
    """A console for stdout (or stderr) that wraps only on a terminal."""
    out = _Console(stderr=stderr, highlight=False)
    if not out.is_terminal:
        out.soft_wrap = True
        out.width = UNWRAPPED_WIDTH
    return out
