"""The `repomap` console script: `search-text` runs without click, everything else through cli.py.

Searches are what agents and editors run most, and importing click (with the modules it pulls
in) was ~20 ms of an ~85 ms `repomap search-text … --json` on a 2-core machine. So when argv is a
`search-text` call whose every argument this parser reads exactly as click would, the search
runs here; anything else (another command, --help, an option or form it does not know, a
repeated option, a value click would refuse, an argument that is not UTF-8) goes to click
unchanged. Click therefore prints every usage error itself, and both paths run the same
`cli_common.search_text`, so their output, messages, exit codes and search log are the same.
"""

from __future__ import annotations

import codecs
import os
import stat
import sys
from pathlib import Path

from repomap.cli.common import (
    DEFAULT_LIMIT,
    ELEMENT_TYPE_CHOICES,
    INTERRUPTED,
    MAX_LIMIT,
    error_line,
    search_text,
    undecodable,
)
from repomap.errors import RepomapError

Options = dict[str, object]  # search_text()'s keyword arguments; typing's Any costs an import

# search-text's options as cli.py declares them: option -> search_text() parameter.
VALUE_OPTIONS = {"--type": "element_type", "--limit": "limit", "--path": "path",
                 "--lang": "language", "--db": "db_path", "--root": "root"}  # fmt: skip
FLAGS = {"--literal": "literal", "-i": "ignore_case", "--ignore-case": "ignore_case",
         "--json": "as_json"}  # fmt: skip


def main() -> int | None:
    """Run `repomap`: the return value is the exit status, as click's main returns it."""
    options = parse_search_text(sys.argv[1:]) if _plain_environment() else None
    if options is None:
        from repomap.cli.main import main as click_main

        return click_main()
    return run_search_text(options)


def parse_search_text(args: list[str]) -> Options | None:
    """search_text()'s arguments when click would read `args` just so, else None (use click)."""
    if not args or args[0] != "search-text" or any(undecodable(arg) for arg in args):
        return None
    given: dict[str, str | bool] = {}
    queries = []
    rest = iter(args[1:])
    for arg in rest:
        if not arg.startswith("-"):
            queries.append(arg)
            continue
        name, equals, value = arg.partition("=")  # click: `--opt=value` is `--opt value`
        if arg in FLAGS:
            parameter, given_value = FLAGS[arg], True
        elif name in VALUE_OPTIONS:
            parameter, given_value = VALUE_OPTIONS[name], value if equals else next(rest, None)
        else:  # `-` or `--`, a short-option cluster, `--flag=x`, a query that starts with `-`
            return None
        if given_value is None or parameter in given:  # a missing value; a repeated option
            return None
        given[parameter] = given_value
    if len(queries) != 1:
        return None
    return _checked(queries[0], given)


def _checked(query: str, given: dict[str, str | bool]) -> Options | None:
    """The values click's parameter types would produce, or None where they would refuse one."""
    element_type = given.get("element_type", "all")
    if element_type not in ELEMENT_TYPE_CHOICES:  # click.Choice, case-sensitive
        return None
    limit = DEFAULT_LIMIT
    if "limit" in given:
        try:
            limit = int(given["limit"])  # click.IntRange converts with int() too: " 5", "+5"
        except ValueError:
            return None
        if not 1 <= limit <= MAX_LIMIT:
            return None
    paths: dict[str, Path | None] = {"db_path": None, "root": None}
    for parameter, file_okay, dir_okay in (("db_path", True, False), ("root", False, True)):
        if parameter in given:
            paths[parameter] = _path(str(given[parameter]), file_okay, dir_okay)
            if paths[parameter] is None:
                return None
    return {
        "query": query, "element_type": element_type, "limit": limit,
        "path": given.get("path"), "language": given.get("language"),
        "literal": "literal" in given, "ignore_case": "ignore_case" in given,
        "as_json": "as_json" in given, **paths,
    }  # fmt: skip


def _path(value: str, file_okay: bool, dir_okay: bool) -> Path | None:
    """click.Path(file_okay, dir_okay, path_type=Path): what it returns, or None if it refuses."""
    try:
        mode = os.stat(value).st_mode
    except OSError:
        return Path(value)  # need not exist
    except ValueError:  # a NUL in the path: click raises too
        return None
    if (not file_okay and stat.S_ISREG(mode)) or (not dir_okay and stat.S_ISDIR(mode)):
        return None
    return Path(value) if os.access(value, os.R_OK) else None


def _plain_environment() -> bool:
    """Whether click.echo would write exactly what a plain write does, and no shell completion
    is asked for. Click re-encodes an ASCII stdout as UTF-8, expands globs on Windows and reads
    `_REPOMAP_COMPLETE`; the fast path leaves all of that to click."""
    if os.name == "nt" or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return False
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if not encoding or getattr(stream, "errors", None) is None:
            return False
        try:
            if codecs.lookup(encoding).name == "ascii":
                return False
        except LookupError:
            return False
    return True


def run_search_text(options: Options) -> int | None:
    """The search, with errors as cli.Group.invoke reports them: one line, an exit status."""
    try:
        search_text(**options, echo=_echo)
    except RepomapError as error:
        _echo(error_line(str(error)), err=True)
        return error.exit_code
    except KeyboardInterrupt:
        _echo(error_line(INTERRUPTED), err=True)
        return 130
    return None


def _echo(text: str, err: bool = False) -> None:
    """click.echo for the streams _plain_environment allows: JSON and error lines hold no
    terminal escape (json.dumps and one_line escape control characters) for it to strip."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()
