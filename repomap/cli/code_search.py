"""`repomap search`: find code by what it does (repomap/search/code.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from repomap import config
from repomap.cli.shared import db_option, path_option, print_json, root_option

MODE_HELP = (
    "hybrid: words and meaning fused (default); lexical: BM25 over the definitions' words; "
    "semantic: the embedding model alone."
)


@click.command("search")
@click.argument("query")
@click.option(
    "--mode", type=click.Choice(["hybrid", "lexical", "semantic"]), default=None, help=MODE_HELP
)
@path_option
@click.option(
    "--lang", "--language", "language",
    help="Only this language (python, rust, cpp) or docs format (markdown, text).",
)  # fmt: skip
@click.option(
    "--kind", help="Only these kinds, comma-separated: function,method,class,...,section."
)
@click.option("--limit", type=int, default=10, show_default=True, help="1 to 1000.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@root_option
@db_option
def search(
    query: str,
    mode: str | None,
    path: str | None,
    language: str | None,
    kind: str | None,
    limit: int,
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> None:
    """Find code by what it does: ask in words ("where is the retry delay computed?").

    Ranks definitions (functions, methods, classes...), files' module-level code and docs
    sections. Use search-text for exact comments, strings and messages, symbols for names.
    Exit status: 0 found, 1 nothing found, 2 error.
    """
    from repomap.search.code import DEFAULT_MODE, search_code
    from repomap.store import reading

    settings = config.resolve(root, db_path, find_index=True)
    with reading(settings.db_path) as db:
        result = search_code(
            db, query, mode=mode or DEFAULT_MODE, path=path, language=language, kind=kind,
            limit=limit,
        )  # fmt: skip
    if as_json:
        print_json(result.as_dict())
    else:
        for hit in result.hits:
            click.echo(
                f"{hit.path}:{hit.start_line}-{hit.end_line}  {hit.kind} {hit.name}"
                f"  ({hit.score:.2f})"
            )
            if hit.snippet:
                click.echo(f"    {hit.snippet}")
        if result.coverage is not None and result.coverage < 1:
            click.echo(
                f"note: {result.coverage:.0%} of chunks have embeddings; run `repomap index` "
                "to finish them",
                err=True,
            )
        if not result.hits:
            click.echo(f"nothing matches {query!r}", err=True)
    if not result.hits:
        sys.exit(1)
