"""What several commands share: the options that mean the same in every command (--root, --db,
--path, --lang, --limit, --json) and the JSON printer. Same flag, same name, same meaning."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import click

JSON_HELP = "Print the answer as JSON: {results, count, truncated, ...}."


def json_option(command: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help=JSON_HELP)(command)


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def root_option(command: Any) -> Any:
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        help="Repository root (default: REPOMAP_ROOT or the current directory).",
    )(command)


def tree_root(command: Any) -> Any:
    """ROOT as an argument or as --root, one `root` parameter, for the commands whose subject
    is the tree itself (index, watch, init, status, doctor, clean, prune): `repomap status ~/x`
    as `repomap index ~/x` is typed, and --root as every other command takes it."""

    @functools.wraps(command)
    def given(*args: Any, root_argument: Path | None, root: Path | None, **kwargs: Any) -> Any:
        if (
            root_argument is not None
            and root is not None
            and root_argument.resolve() != root.resolve()
        ):
            raise click.UsageError("give ROOT or --root, not both")
        return command(*args, root=root_argument if root_argument is not None else root, **kwargs)

    return click.argument(
        "root_argument",
        metavar="[ROOT]",
        required=False,
        type=click.Path(file_okay=False, path_type=Path),
    )(root_option(given))


def db_option(command: Any) -> Any:
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Index file (default ROOT/.repomap/index.db).",
    )(command)


# One help text for every option that takes a path filter: repomap/paths.py is its meaning.
PATH_FILTER_HELP = (
    "Only these files: a folder (src/db/), a file, a path tail (default.py, _transports/) "
    "or a glob (**/tests/**, *.rs)."
)


def path_option(command: Any) -> Any:
    return click.option("--path", "path", help=PATH_FILTER_HELP)(command)


def path_filter_option(name: str, *aliases: str) -> Any:
    """--path under another parameter name, with older spellings kept as aliases."""
    return click.option("--path", *aliases, name, help=PATH_FILTER_HELP)


LANG_HELP = "Only files of this language: python, rust, c or cpp (py, rs, c++ too)."


def lang_option(command: Any) -> Any:
    return click.option("--lang", "--language", "language", help=LANG_HELP)(command)


def limit_option(default: int) -> Any:
    """--limit: the most results to give, 1 to MAX_LIMIT, as every MCP tool's `limit`."""
    from repomap.limits import MAX_LIMIT

    return click.option(
        "--limit",
        type=click.IntRange(1, MAX_LIMIT),
        default=default,
        show_default=True,
        help=f"Most results to give (1-{MAX_LIMIT}).",
    )


ABSOLUTE_HELP = "Print absolute paths (default: relative to ROOT)."


def absolute_option(command: Any) -> Any:
    return click.option("--absolute", is_flag=True, help=ABSOLUTE_HELP)(command)


MARKERS_HELP = "Keep [MATCH]...[/MATCH] around matched words (default: highlight on a terminal)."


def markers_option(command: Any) -> Any:
    return click.option("--markers", is_flag=True, help=MARKERS_HELP)(command)


NO_REFRESH_HELP = (
    "Answer from the index as it is, without checking for files changed since indexing "
    "(by default they are re-indexed first in a small index, else counted in a warning)."
)


def no_refresh_option(command: Any) -> Any:
    return click.option("--no-refresh", is_flag=True, help=NO_REFRESH_HELP)(command)


KIND_HELP = "Only these kinds, comma-separated (e.g. class,function,method)."
