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

from repomap.cli import outcome
from repomap.cli.search_text import (
    DEFAULT_LIMIT,
    ELEMENT_TYPE_CHOICES,
    INTERRUPTED,
    TERMINATED,
    error_line,
    one_line,
    undecodable,
)
from repomap.cli.shared import (
    absolute_option,
    db_option,
    json_option,
    lang_option,
    limit_option,
    markers_option,
    no_refresh_option,
    path_option,
    root_option,
)
from repomap.errors import ExitCode, NotFound, RepomapError, Terminated


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
        arguments = list(sys.argv[1:] if args is None else args)
        outcome.begin(arguments)
        for number, argument in enumerate(arguments, 1):
            if undecodable(argument):
                click.echo(error_line(f"argument {number} is not valid UTF-8 text"), err=True)
                sys.exit(ExitCode.USAGE)
        named = self.commands.get(arguments[0]) if arguments else None
        repeated = _repeated_filter(named, arguments[1:])
        if repeated is not None:
            click.echo(error_line(repeated), err=True)
            sys.exit(ExitCode.USAGE)
        try:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as error:
            click.echo(
                error_line(error.format_message() + _dash_hint(named, error, arguments)), err=True
            )
            sys.exit(ExitCode.USAGE)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(ExitCode.ERROR)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; its return value (or its error) is the exit status, and the command
        is logged for `repomap stats`."""
        error = None
        try:
            code = int(super().invoke(ctx) or ExitCode.OK)
        except NotFound as missing:  # nothing found is no error: what was looked for, exit 1
            click.echo(one_line(str(missing)), err=True)
            code = missing.exit_code
        except RepomapError as failure:
            error = str(failure)
            click.echo(error_line(error), err=True)
            code = failure.exit_code
        except Terminated:
            error = TERMINATED
            click.echo(error_line(TERMINATED), err=True)
            code = 143  # 128 + SIGTERM, as a shell reports a process the signal ended
        except KeyboardInterrupt:
            error = INTERRUPTED
            click.echo(error_line(INTERRUPTED), err=True)
            code = 130
        except BrokenPipeError:
            code = outcome.reader_gone()
        outcome.log_command(ctx.invoked_subcommand, code, error)
        if code:
            ctx.exit(code)


def _dash_hint(command: click.Command | None, error: click.UsageError, arguments: list[str]) -> str:
    """For an unknown option where the command takes text: how to give text that starts with
    `-` (`repomap search '-table'` said "No such option '-t'" and no more)."""
    if not isinstance(error, click.NoSuchOption) or command is None:
        return ""
    texts = {"query", "name", "pattern", "text"}
    if not any(isinstance(p, click.Argument) and p.name in texts for p in command.params):
        return ""
    written = next(
        (arg for arg in arguments if arg.startswith(error.option_name)), error.option_name
    )
    if written.startswith("--") or _text_given(command, arguments[1:]):
        return ""  # a mistyped option, more likely (`search foo -l 3`: the text is `foo`)
    return (
        f" (text that starts with '-' goes last, after `--`: repomap {command.name} [OPTIONS]"
        f" -- {written!r})"
    )


def _text_given(command: click.Command, tokens: list[str]) -> bool:
    """Whether `tokens` (after the command's name) hold a bare argument: one that is neither
    an option nor an option's value."""
    takes_value = {
        name
        for param in command.params
        if isinstance(param, click.Option) and not param.is_flag and not param.count
        for name in param.opts
    }
    skip = False
    for token in tokens:
        if skip:
            skip = False
        elif token in takes_value:
            skip = True
        elif token == "--" or not token.startswith("-"):
            return token != "--"
    return False


# Filters that take one value: given twice, click kept the last and the first was dropped
# without a word (`--path src/ --path tests/` searched tests/ alone). An option is a filter when
# one of its spellings is one of these; its other spellings (`show --file`, `sources
# --pattern`) are the same option. Other options keep the shell's "the last one wins" (an
# alias's `--limit 20`, then `--limit 50`).
_FILTER_SPELLINGS = frozenset({"--path", "--lang", "--language", "--kind", "--type"})
_FILTER_HINTS = {
    "--path": " (a glob such as '**/tests/**' or a folder names many files)",
    "--kind": " (it takes a comma list: --kind class,function)",
}


def _repeated_filter(command: click.Command | None, arguments: Sequence[str]) -> str | None:
    """The error for a filter option of `command` given more than once in `arguments` (the
    command's own, after its name), or None. A value is never read as an option: `show
    --section --path` asks for a heading named `--path`."""
    if command is None:
        return None
    takes_value: set[str] = set()
    filters: dict[str, str] = {}  # spelling -> the option's first spelling
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        spellings = [*param.opts, *param.secondary_opts]
        if not param.is_flag and not param.count:
            takes_value.update(spellings)
        if _FILTER_SPELLINGS.intersection(spellings) and not param.multiple:
            filters.update(dict.fromkeys(spellings, param.opts[0]))
    seen: set[str] = set()
    values = iter(arguments)
    for argument in values:
        if argument == "--":
            break
        spelling, equals, _ = argument.partition("=")
        option = filters.get(spelling)
        if option is not None:
            if option in seen:
                hint = _FILTER_HINTS.get(option, "")
                return f"{option} given more than once: give it once{hint}"
            seen.add(option)
        if spelling in takes_value and not equals:
            next(values, None)  # its value, whatever it looks like
    return None


@click.group(cls=Group)
@click.version_option(  # the installed package's version (importlib.metadata), as MCP reports it
    package_name="repomap", prog_name="repomap", message="%(prog)s %(version)s"
)
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
@limit_option(DEFAULT_LIMIT)
@path_option
@lang_option
@click.option("--literal", is_flag=True, help="Exact, case-sensitive text instead of words.")
@click.option(
    "-i", "--ignore-case", is_flag=True, help="With --literal: ignore case (words always do)."
)
@markers_option
@no_refresh_option
@json_option
@absolute_option
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
    markers: bool,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    db_path: Path | None,
    root: Path | None,
) -> int:
    """Search comments, docstrings and string literals: words, "phrases", AND/OR/NOT, prefix*."""
    from repomap.cli import search_text as body

    return body.run(
        click.echo, query, element_type, limit, path, language, literal, ignore_case, markers,
        no_refresh, as_json, absolute, db_path, root,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
