"""The `repomap` console script: `search-text` parsed from a table, everything else by click.

Searches are what agents and editors run most, and importing click is ~7 ms of a ~42 ms
`repomap search-text … --json` on two cores (bench/README.md). So when argv is a `search-text`
call that the table generated from the click definition (search_text_spec.py, kept equal to
it by a test) reads exactly as click would, the search runs here; anything else (another
command, --help, an option or form the table does not hold, a repeated option, a value click
would refuse, an argument that is not UTF-8, an unusual terminal) goes to click unchanged.
Click therefore prints every usage error itself, and both paths run search_text.run().
"""

from __future__ import annotations

import codecs
import os
import stat
import sys
from pathlib import Path

from repomap.cli import outcome
from repomap.cli.search_text import INTERRUPTED, error_line, run, undecodable
from repomap.cli.search_text_spec import SPEC
from repomap.errors import RepomapError

Options = dict[str, object]  # run()'s keyword arguments; typing's Any costs an import


def main() -> int | None:
    """Run `repomap`: the return value is the exit status, as click's main returns it."""
    options = parse(sys.argv[1:]) if _plain_environment() else None
    if options is None:
        from repomap.cli.main import main as click_main

        return click_main()
    return _run(options, sys.argv[1:])


def parse(args: list[str]) -> Options | None:
    """run()'s arguments when click would read `args` just so, else None (use click)."""
    if not args or args[0] != "search-text" or any(undecodable(arg) for arg in args):
        return None
    table: dict[str, dict[str, object]] = SPEC["options"]  # type: ignore[assignment]
    given: dict[str, object] = {}
    positional = []
    rest = iter(args[1:])
    for arg in rest:
        if not arg.startswith("-"):
            positional.append(arg)
            continue
        name, equals, value = arg.partition("=")  # click: `--opt=value` is `--opt value`
        entry = table.get(arg) if arg in table else table.get(name) if equals else None
        if entry is None:  # `-`, `--`, a short-option cluster, a query that starts with `-`
            return None
        if entry["kind"] == "flag":
            if equals:
                return None
            converted: object = True
        else:
            raw = value if equals else next(rest, None)
            converted = None if raw is None else _converted(entry, raw)
        if converted is None or entry["name"] in given:  # refused, missing or repeated
            return None
        given[str(entry["name"])] = converted
    if len(positional) != len(SPEC["arguments"]):
        return None
    options: Options = dict(zip(SPEC["arguments"], positional, strict=True))
    for entry in table.values():
        options.setdefault(str(entry["name"]), given.get(str(entry["name"]), entry["default"]))
    return options


def _converted(entry: dict[str, object], raw: str) -> object | None:
    """The value click's parameter type would produce from `raw`, or None if it refuses it."""
    kind = entry["kind"]
    if kind == "text":
        return raw
    if kind == "choice":
        return raw if raw in entry["choices"] else None  # type: ignore[operator]
    if kind == "int":
        try:
            number = int(raw)  # click.IntRange converts with int() too: " 5", "+5"
        except ValueError:
            return None
        low, high = entry["min"], entry["max"]
        if (low is not None and number < low) or (high is not None and number > high):  # type: ignore[operator]
            return None
        return number
    if kind == "path":
        return _path(raw, bool(entry["file_okay"]), bool(entry["dir_okay"]))
    return None


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


def _run(options: Options, args: list[str]) -> int | None:
    """The search, with errors as cli.main.Group reports them (one line, an exit status) and
    logged as it logs every command."""
    outcome.begin(args)
    error = None
    try:
        code = int(run(_echo, **options))  # type: ignore[arg-type]
    except RepomapError as failure:
        error = str(failure)
        _echo(error_line(error), err=True)
        code = int(failure.exit_code)
    except KeyboardInterrupt:
        error = INTERRUPTED
        _echo(error_line(INTERRUPTED), err=True)
        code = 130
    except BrokenPipeError:
        code = outcome.reader_gone()
    outcome.log_command("search-text", code, error)
    return code or None


def _echo(text: str, err: bool = False) -> None:
    """click.echo for the streams _plain_environment allows: JSON and error lines hold no
    terminal escape (json.dumps and one_line escape control characters) for it to strip."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()
