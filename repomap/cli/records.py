"""`repomap search-data`, `search-commits` and `history`: records of data files and commits
(repomap/search/records.py, repomap/gateway/history.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from repomap.cli import outcome, refresh
from repomap.cli.shared import (
    absolute_option,
    db_option,
    json_option,
    limit_option,
    no_refresh_option,
    path_option,
    print_json,
    root_option,
)
from repomap.cli.shown import Shown

RANKED_HELP = "Rank by BM25 over words (search-text's query language) instead of exact text."


def _print_answer(answer: dict[str, Any], lines: list[str], as_json: bool) -> None:
    if as_json:
        print_json(answer)
        return
    for line in lines:
        click.echo(line)
    if not answer["results"]:
        click.echo(f"no matches for {answer['query']!r}", err=True)
    elif answer["truncated"]:
        click.echo(f"{answer['count']} shown; more match: raise --limit or narrow", err=True)


def _indented(text: str) -> str:
    return text.replace("\n", "\n    ")


@click.command("search-data")
@click.argument("query")
@path_option
@click.option("--key", "key", help="Only records whose key matches this glob (tool.ruff.*).")
@click.option("--field", "field", help="Only this field: key, value, or a column's name.")
@click.option("--ranked", is_flag=True, help=RANKED_HELP)
@limit_option(20)
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def search_data(
    query: str,
    path: str | None,
    key: str | None,
    field: str | None,
    ranked: bool,
    limit: int,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Search data files' records (CSV/TSV rows, JSON Lines, JSON/TOML/YAML leaves by key path):
    exact, case-sensitive text by default; sorted by file, then place in the file."""
    from repomap.search.records import search_data as run_search
    from repomap.store import indexed_root, reading

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:
        found = run_search(db, query, path=path, key=key, field=field, limit=limit, ranked=ranked)
        shown = Shown(indexed_root(db, settings.root), absolute)
    hits = [hit._replace(file_path=shown(hit.file_path)) for hit in found.results]
    found = found._replace(results=hits)
    lines = []
    for hit in hits:
        where = f"{hit.file_path}:{hit.line}" if hit.line else hit.file_path
        lines.append(f"{where}  {hit.key}  [{hit.match_field}]")
        lines.append(f"    {_indented(hit.match_snippet)}")
    _print_answer(found.as_dict(), lines, as_json)
    return outcome.found(len(hits))


@click.command("search-commits")
@click.argument("query")
@click.option("--author", help="Only commits whose author's `name <email>` contains this.")
@click.option("--since", help="Only commits made on or after this date (YYYY-MM-DD, UTC).")
@click.option("--until", help="Only commits made on or before this date (YYYY-MM-DD, UTC).")
@path_option
@click.option(
    "--field",
    type=click.Choice(["author", "subject", "body", "paths"]),
    help="Only this field of each commit.",
)
@click.option("--oldest-first", is_flag=True, help="Oldest commits first (default: newest).")
@click.option("--ranked", is_flag=True, help=RANKED_HELP)
@limit_option(20)
@no_refresh_option
@json_option
@root_option
@db_option
def search_commits(
    query: str,
    author: str | None,
    since: str | None,
    until: str | None,
    path: str | None,
    field: str | None,
    oldest_first: bool,
    ranked: bool,
    limit: int,
    no_refresh: bool,
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Search the commit history (subject, body, author, changed paths): exact, case-sensitive
    text by default; newest first."""
    from repomap import store
    from repomap.index.pipeline import refresh_history
    from repomap.search.records import search_commits as run_search
    from repomap.store import reading

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    if not no_refresh:
        for note in refresh_history(settings):
            click.echo(f"note: {note}", err=True)
    with reading(settings.db_path) as db:
        found = run_search(
            db, query, author=author, since=since, until=until, path=path, field=field,
            limit=limit, oldest_first=oldest_first, ranked=ranked,
        )  # fmt: skip
        if not found.results and store.indexed_commits(db) == 0:
            from repomap.index.history import why_no_commits

            click.echo(f"note: the index holds no commits: {why_no_commits(settings)}", err=True)
    lines = []
    for hit in found.results:
        lines.append(f"{hit.id[:12]}  {hit.commit_time[:10]}  {hit.author_name}  {hit.subject}")
        if hit.match_field != "subject":
            lines.append(f"    [{hit.match_field}] {_indented(hit.match_snippet)}")
    _print_answer(found.as_dict(), lines, as_json)
    return outcome.found(len(found.results))


@click.command("history")
@click.argument("name")
@path_option
@click.option("--kind", help="Only a definition of this kind (function, method, class, ...).")
@limit_option(20)
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def history(
    name: str,
    path: str | None,
    kind: str | None,
    limit: int,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """The commits that changed a definition's lines (git log -L), newest first."""
    from repomap.gateway.history import history as run_history
    from repomap.store import indexed_root, reading

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:
        tree = indexed_root(db, settings.root)
        found = run_history(db, tree, name, path, kind, limit)
    shown = Shown(tree, absolute)
    if as_json:
        print_json(
            outcome.envelope(
                [hit._asdict() for hit in found.commits],
                found.truncated,
                name=found.name,
                kind=found.kind,
                file_path=shown(found.file_path),
                start_line=found.start_line,
                end_line=found.end_line,
                others=found.others,
            )
        )
    else:
        click.echo(
            f"{found.kind} {found.name}  {shown(found.file_path)}:"
            f"{found.start_line}-{found.end_line}"
        )
        for hit in found.commits:
            click.echo(f"{hit.id[:12]}  {hit.commit_time[:10]}  {hit.author_name}  {hit.subject}")
        if found.others:
            click.echo(f"also named {name!r}: {', '.join(found.others)}", err=True)
    return outcome.found(len(found.commits))
