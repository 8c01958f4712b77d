"""What several commands share: the --root, --db and --path options, and the JSON printer."""

from __future__ import annotations

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
