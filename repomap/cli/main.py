"""The `repomap` command: parse arguments, call the library, print (rich for people, --json for programs).

The CLI's one definition and the place it turns RepomapError into `error: …` and an exit code.
Start-up time is the cost of this module's imports, so it imports only click and what every
command needs; everything else (rich, sqlite_utils, tree-sitter, the search and index modules,
mcp) is imported inside the command that uses it. Importing click still adds ~7 ms to a ~40 ms
`search-text … --json` (2 cores), so the `repomap` script (repomap/cli/fastpath.py) reads
search-text's options from a table generated from the definition below and comes here for
everything else; `python -m repomap.cli` always comes here.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from repomap.cli.search_text import (
    DEFAULT_LIMIT,
    ELEMENT_TYPE_CHOICES,
    INTERRUPTED,
    TERMINATED,
    error_line,
    undecodable,
)
from repomap.cli.shared import db_option, path_option, root_option
from repomap.errors import ExitCode, RepomapError, Terminated
from repomap.limits import MAX_LIMIT


class Commands(dict):
    """A group's command table, name -> click.Command, that adds the commands defined in
    repomap/cli/commands.py, importing it, the first time a name it does not hold yet is looked
    up, or the table is listed (--help, a typo's suggestions, shell completion).

    So `search-text`, the command agents and editors run most, starts without setting up the
    other commands' ~60 options (~1 ms of its start-up).
    """

    complete = False  # commands.py's commands are in

    def _all(self) -> Commands:
        if not self.complete:
            from repomap.cli import commands

            for value in vars(commands).values():
                if isinstance(value, click.Command):
                    dict.__setitem__(self, value.name, value)
            self.complete = True
        return self

    def get(self, name: str, default: Any = None) -> Any:
        return dict.get(self if dict.__contains__(self, name) else self._all(), name, default)

    def __getitem__(self, name: str) -> Any:
        return dict.__getitem__(self if dict.__contains__(self, name) else self._all(), name)

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or dict.__contains__(self._all(), name)

    def __iter__(self) -> Any:
        return dict.__iter__(self._all())

    def __len__(self) -> int:
        return dict.__len__(self._all())

    def keys(self) -> Any:
        return dict.keys(self._all())

    def values(self) -> Any:
        return dict.values(self._all())

    def items(self) -> Any:
        return dict.items(self._all())


class Group(click.Group):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = Commands(self.commands)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's usage errors as one line too: `error: …`, exit 2, no usage block.

        Always run as click's non-standalone mode: the errors are handled here instead, so
        `standalone_mode` is accepted for click's signature only."""
        for number, argument in enumerate(sys.argv[1:] if args is None else args, 1):
            if undecodable(argument):
                click.echo(error_line(f"argument {number} is not valid UTF-8 text"), err=True)
                sys.exit(ExitCode.USAGE)
        try:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as error:
            click.echo(error_line(error.format_message()), err=True)
            sys.exit(ExitCode.USAGE)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(ExitCode.ERROR)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RepomapError as error:
            click.echo(error_line(str(error)), err=True)
            ctx.exit(error.exit_code)
        except Terminated:
            click.echo(error_line(TERMINATED), err=True)
            ctx.exit(143)  # 128 + SIGTERM, as a shell reports a process the signal ended
        except KeyboardInterrupt:
            click.echo(error_line(INTERRUPTED), err=True)
            ctx.exit(130)


@click.group(cls=Group)
@click.version_option(package_name="repomap")
def main() -> None:
    """repomap: an offline index of symbols, comments, docstrings and strings in a repository."""


# --- search-text (repomap/search/text.py); every other command is in repomap/cli/commands.py ---


@main.command("search-text", context_settings={"ignore_unknown_options": True})
@click.argument("query")
@click.option(
    "--type",
    "element_type",
    type=click.Choice(ELEMENT_TYPE_CHOICES),
    default="all",
    show_default=True,
    help="Which elements to search.",
)
@click.option(
    "--limit", type=click.IntRange(1, MAX_LIMIT), default=DEFAULT_LIMIT, show_default=True
)
@path_option
@click.option("--lang", "language", help="python, rust or cpp.")
@click.option("--literal", is_flag=True, help="Exact, case-sensitive text instead of words.")
@click.option(
    "-i", "--ignore-case", is_flag=True, help="With --literal: ignore case (words always do)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@db_option
@root_option
def search_text(
    query: str,
    element_type: str,
    limit: int,
    path: str | None,
    language: str | None,
    literal: bool,
    ignore_case: bool,
    as_json: bool,
    db_path: Path | None,
    root: Path | None,
) -> None:
    """Search comments, docstrings and string literals: words, "phrases", AND/OR/NOT, prefix*."""
    from repomap.cli import search_text as body

    body.run(
        click.echo, query, element_type, limit, path, language, literal, ignore_case, as_json,
        db_path, root,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
