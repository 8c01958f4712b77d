"""The `repomap` command: parse arguments, call the library, print (rich for people, --json for programs).

The one place the CLI turns RepomapError into `error: …` and an exit code. Heavy modules (rich,
tree-sitter) are imported inside the commands that need them, so queries start fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from . import config
from .errors import ExitCode, RepomapError


class Group(click.Group):
    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Click's usage errors as one line too: `error: …`, exit 2, no usage block."""
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.UsageError as error:
            click.echo(f"error: {error.format_message()}", err=True)
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
            click.echo(f"error: {error}", err=True)
            ctx.exit(error.exit_code)
        except KeyboardInterrupt:
            click.echo("error: interrupted; the index keeps every file written so far", err=True)
            ctx.exit(130)


@click.group(cls=Group)
@click.version_option(package_name="repomap")
def main() -> None:
    """repomap: an offline index of symbols, comments, docstrings and strings in a repository."""


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


@main.command()
@click.argument("root", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Index file (default ROOT/.repomap/index.db).",
)
@click.option("--force", is_flag=True, help="Re-read every file, even unchanged ones.")
@click.option(
    "--max-file-size",
    type=click.IntRange(min=1),
    help="Skip files larger than this many bytes (default 2 MiB).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Extraction processes (default: 2, or the CPU count if lower).",
)
@click.option(
    "--no-redact",
    is_flag=True,
    help="Keep credentials found in strings and comments (they are [REDACTED] by default).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def index(
    root: Path | None,
    db_path: Path | None,
    force: bool,
    max_file_size: int | None,
    workers: int | None,
    no_redact: bool,
    as_json: bool,
) -> None:
    """Index ROOT (default: the current directory), incrementally."""
    from . import index as indexer

    if root is not None and not root.is_dir():
        raise click.BadParameter(f"{root} is not a directory", param_hint="ROOT")
    settings = config.resolve(root, db_path, max_file_size, workers, redact=False if no_redact else None)
    if as_json or not sys.stderr.isatty():
        summary = indexer.run(settings, force=force)
    else:
        summary = _index_with_progress(indexer, settings, force)
    if as_json:
        _print_json(summary.as_dict())
    else:
        from .render_cli import print_index_summary

        print_index_summary(summary)


def _index_with_progress(indexer: Any, settings: config.Settings, force: bool) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task("indexing", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return indexer.run(settings, force=force, progress=advance)


@main.command()
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Index file (default ./.repomap/index.db).",
)
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    help="Repository root whose default index to migrate.",
)
@click.option("--to", "to_version", type=int, help="Stop at this schema version (e.g. 4).")
def migrate(db_path: Path | None, root: Path | None, to_version: int | None) -> None:
    """Create or upgrade an index's schema in place (each step one transaction)."""
    from . import db as index_db

    settings = config.resolve(root, db_path)
    if to_version is not None and not 4 <= to_version <= index_db.SCHEMA_VERSION:
        raise click.BadParameter(
            f"must be between 4 and {index_db.SCHEMA_VERSION}", param_hint="--to"
        )
    db = index_db.open_index(settings.db_path, migrate_to=to_version)
    version = db.conn.execute("PRAGMA user_version").fetchone()[0]
    db.conn.close()
    click.echo(f"{settings.db_path}: schema v{version}")


if __name__ == "__main__":
    sys.exit(main())
