"""Every `repomap` command but `search-text`: main's command table (repomap/cli/main.py) imports
this module and adds each click.Command in it the first time one of them is asked for."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from repomap import config
from repomap.cli.code_search import search  # noqa: F401 - collected by main.Commands
from repomap.cli.shared import PATH_FILTER_HELP, db_option, path_option, print_json, root_option
from repomap.errors import Terminated

# --- index and migrate (repomap/index/pipeline.py, repomap/store/) ------------------------------


@click.command()
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
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Then embed the chunks for `repomap search --mode semantic|hybrid` (the slow stage; "
    "text and symbol search do not wait for it; only texts not in the cache are embedded). "
    "Default: when the index already has embeddings.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Index, then print what embedding would do (chunks new, reused, to embed) and stop.",
)
@click.option(
    "--vector-store",
    help="Where vectors live: sqlite (this index, the default) or milvus:PATH.db|URI; remembered.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def index(
    root: Path | None,
    db_path: Path | None,
    force: bool,
    max_file_size: int | None,
    workers: int | None,
    no_redact: bool,
    embed: bool | None,
    dry_run: bool,
    vector_store: str | None,
    as_json: bool,
) -> None:
    """Index ROOT (default: the current directory), incrementally."""
    from repomap.index import pipeline as indexer

    if root is not None and not root.is_dir():
        raise click.BadParameter(f"{root} is not a directory", param_hint="ROOT")
    settings = config.resolve(
        root, db_path, max_file_size, workers, redact=False if no_redact else None
    )
    with _signals_interrupt():
        if as_json or not sys.stderr.isatty():
            summary = indexer.run(settings, force=force)
        else:
            summary = _index_with_progress(indexer, settings, force)
        embedded = None
        if embed is None and not dry_run and vector_store is None:
            embed = indexer.has_embeddings(settings)
        if embed or dry_run or vector_store is not None:
            quiet = as_json or not sys.stderr.isatty()
            embedded = (
                indexer.embed(settings, dry_run=dry_run, vector_store=vector_store)
                if quiet
                else _embed_with_progress(indexer, settings, dry_run, vector_store)
            )
    if as_json:
        print_json({**summary.as_dict(), "embeddings": embedded and embedded.as_dict()})
    else:
        from repomap.cli.render_index import print_embed_summary, print_index_summary

        print_index_summary(summary)
        if embedded is not None:
            print_embed_summary(embedded, dry_run)


def _embed_with_progress(
    indexer: Any, settings: config.Settings, dry_run: bool, vector_store: str | None
) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task("embedding", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return indexer.embed(settings, dry_run=dry_run, vector_store=vector_store, progress=advance)


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM raises Terminated where Ctrl-C raises KeyboardInterrupt, so either one stops the
    workers and rolls back the open batch. A second signal is ignored until that is done: it
    would interrupt the cleanup and leave workers behind."""
    signals = (signal.SIGINT, signal.SIGTERM)

    def stop(number: int, frame: Any) -> None:
        for each in signals:
            signal.signal(each, signal.SIG_IGN)
        raise Terminated() if number == signal.SIGTERM else KeyboardInterrupt()

    previous = {each: signal.signal(each, stop) for each in signals}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)


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


@click.command()
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
    from repomap import store

    settings = config.resolve(root, db_path)
    if to_version is not None and not 4 <= to_version <= store.SCHEMA_VERSION:
        raise click.BadParameter(f"must be between 4 and {store.SCHEMA_VERSION}", param_hint="--to")
    db = store.open_index(settings.db_path, migrate_to=to_version)
    version = db.scalar("PRAGMA user_version")
    db.conn.close()
    click.echo(f"{settings.db_path}: schema v{version}")


# --- the gateway: outline / show / open / sources / files / search-docs (repomap/gateway/,
# repomap/search/docs.py); every path argument goes through gateway.resolve_path -------------------


def _max_lines_option(command: Any) -> Any:
    return click.option(
        "--max-lines",
        type=click.IntRange(min=0),
        help="Show at most N lines, then `... (N more lines)`.",
    )(command)


def _echo_text(text: str) -> None:
    click.echo(text, nl=False)


def _indexed_root(db: Any, settings: config.Settings) -> Path:
    """The tree the index was built from (so --db works from anywhere), else ROOT."""
    from repomap.store import indexed_root

    return indexed_root(db, settings.root)


def _as_dict(value: Any) -> Any:
    if hasattr(value, "_asdict"):  # the search path's records are NamedTuples (start-up time)
        return value._asdict()
    from dataclasses import asdict

    return asdict(value)


@click.command()
@click.argument("path", required=False)
@click.option("--level", type=click.IntRange(min=1), help="Heading levels / symbol depth to show.")
@_max_lines_option
@click.option("--json", "as_json", is_flag=True, help="Print the outline as JSON.")
@root_option
@db_option
def outline(
    path: str | None,
    level: int | None,
    max_lines: int | None,
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> None:
    """Headings of Markdown files and symbols of code files under PATH (default: all), per file."""
    from repomap.cli.render_gateway import outline_text
    from repomap.gateway import files as gateway
    from repomap.store import reading

    settings = config.resolve(root, db_path, find_index=True)
    with reading(settings.db_path) as db:
        result = gateway.outline(db, _indexed_root(db, settings), path, level)
    if result.changed:
        shown = ", ".join(result.changed[:5]) + (", …" if len(result.changed) > 5 else "")
        click.echo(
            f"warning: {len(result.changed)} files changed since they were indexed ({shown}); "
            "run `repomap index` for their current outline",
            err=True,
        )
    if as_json:
        print_json(_as_dict(result))
    else:
        _echo_text(outline_text(result, max_lines))


@click.command()
@click.argument("name", required=False)
@click.option("--section", "heading", help="A Markdown heading (case-insensitive; ` — …` dropped).")
@click.option(
    "--file",
    "file",
    help="Only these files (a folder, a file, a path tail or a glob), for the symbol or the section.",
)
@_max_lines_option
@click.option(
    "--context",
    is_flag=True,
    help="Symbols: add leading comments/decorators, enclosing headers, used imports.",
)
@click.option(
    "--nth",
    type=click.IntRange(min=1),
    help="With --section: the Nth of several matching headings (path, then line order).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the section and its matches as JSON.")
@root_option
@db_option
def show(
    name: str | None,
    heading: str | None,
    file: str | None,
    max_lines: int | None,
    context: bool,
    nth: int | None,
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> None:
    """Show a symbol's source (NAME) or a Markdown section (--section HEADING)."""
    from repomap.gateway.section import show_section
    from repomap.store import reading

    if heading is None:
        if name is None:
            raise click.UsageError("give a symbol NAME or --section HEADING")
        if nth is not None:
            raise click.UsageError("--nth chooses among headings: use it with --section")
        _show_symbol(name, file, max_lines, context, as_json, root, db_path)
        return
    if name is not None:
        raise click.UsageError("give either a symbol NAME or --section HEADING, not both")
    settings = config.resolve(root, db_path, find_index=True)
    with reading(settings.db_path) as db:
        view = show_section(db, _indexed_root(db, settings), heading, file, max_lines, nth)
    if view.ambiguous:
        click.echo(
            f'warning: {len(view.matches)} headings match "{view.query}"; showing the first '
            f"(--nth 2 to {len(view.matches)} or --file to choose)",
            err=True,
        )
    if as_json:
        print_json(_as_dict(view))
    else:
        _echo_text(view.content)


def _show_symbol(
    name: str,
    file: str | None,
    max_lines: int | None,
    context: bool,
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> None:
    from repomap.gateway.show import get_symbol_content

    content = get_symbol_content(
        config.resolve(root, db_path, find_index=True), name, file, max_lines, context
    )
    if content.warning:
        click.echo(f"warning: {content.warning}", err=True)
    if as_json:
        print_json(content.as_dict())
    else:
        _echo_text(content.as_text())


@click.command("search-docs")
@click.argument("query")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@path_option
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@root_option
@db_option
def search_docs(
    query: str,
    limit: int,
    path: str | None,
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> None:
    """Search Markdown sections and .txt files (bare words ANDed, porter stemming), best first."""
    from repomap.cli.render_gateway import search_docs_text
    from repomap.search.docs import search_docs as run_search
    from repomap.store import reading

    settings = config.resolve(root, db_path, find_index=True)
    with reading(settings.db_path) as db:
        result = run_search(db, _indexed_root(db, settings), query, limit, path)
    if result.ignored:
        click.echo(
            f"warning: left out of the search (no letters or digits): {' '.join(result.ignored)}",
            err=True,
        )
    if result.stale_files:
        click.echo(
            f"warning: {', '.join(result.stale_files)} changed since indexing (line numbers "
            "left out); run `repomap index`",
            err=True,
        )
    if as_json:
        print_json([_as_dict(hit) for hit in result.hits])
    else:
        _echo_text(search_docs_text(result))


@click.command("open")
@click.argument("path")
@_max_lines_option
@click.option("--lines", "line_range", help="Only lines A:B (from 1, inclusive; A: or :B).")
@root_option
def open_(path: str, max_lines: int | None, line_range: str | None, root: Path | None) -> None:
    """Print a file inside ROOT as it is (text in UTF-8), or a range of its lines."""
    from repomap.gateway import files as gateway

    lines = gateway.parse_line_range(line_range) if line_range is not None else None
    view = gateway.open_file(config.resolve(root).root, path, max_lines, lines)
    stdout = sys.stdout.buffer  # click.get_binary_stream is deprecated (Click 9 drops it)
    stdout.write(view.content)
    if view.more_lines:
        if view.content and not view.content.endswith(b"\n"):
            stdout.write(b"\n")
        stdout.write(f"... ({view.more_lines} more lines)\n".encode())
    stdout.flush()


@click.command()
@click.option("--dir", "directory", help="List this directory (inside ROOT) instead of ROOT.")
@click.option("--depth", type=click.IntRange(min=1), help="Levels to expand (default: what fits).")
@click.option("--pattern", help=PATH_FILTER_HELP)
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@root_option
def sources(
    directory: str | None,
    depth: int | None,
    pattern: str | None,
    limit: int,
    fmt: str,
    root: Path | None,
) -> None:
    """The files under ROOT as a tree (ignore rules applied), directories first."""
    from repomap.cli.render_gateway import sources_text
    from repomap.gateway import files as gateway

    tree = gateway.sources(config.resolve(root).root, directory, depth, pattern, limit)
    if fmt == "json":
        print_json(_as_dict(tree) | {"truncated": tree.truncated})
    else:
        _echo_text(sources_text(tree))


@click.command()
@click.argument("query")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--ignore-case", "-i", is_flag=True, help="Match regardless of case.")
@path_option
@click.option("--json", "as_json", is_flag=True, help="Print paths and a `truncated` flag as JSON.")
@root_option
def files(
    query: str, limit: int, ignore_case: bool, path: str | None, as_json: bool, root: Path | None
) -> None:
    """Files whose name contains QUERY (a literal substring; on the path if it contains /)."""
    from repomap.cli.render_gateway import files_text
    from repomap.gateway import files as gateway

    found = gateway.find_files(config.resolve(root).root, query, limit, ignore_case, path)
    if as_json:
        print_json(
            {
                "query": found.query,
                "files": found.paths,
                "total": found.total,
                "truncated": found.truncated,
            }
        )
    else:
        _echo_text(files_text(found))


# --- symbols and the repo map (repomap/search/symbols.py, repomap/maps/) -----------------------


@click.command("symbols")
@click.argument("query")
@click.option("--kind", help="Only this kind: class function method struct enum trait impl ...")
@click.option(
    "--language", type=click.Choice(["python", "rust", "cpp"]), help="Only this language."
)
@path_option
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the matches as JSON.")
@root_option
@db_option
def symbols_(
    query: str,
    kind: str | None,
    language: str | None,
    path: str | None,
    limit: int,
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> None:
    """Find definitions by name: exact, then prefix, substring, fuzzy; most used first."""
    from repomap.search.symbols import search_symbols
    from repomap.store import reading

    settings = config.resolve(root, db_path, find_index=True)
    with reading(settings.db_path) as db:
        hits = search_symbols(db, query, kind, language, path, limit)
    if as_json:
        print_json([_as_dict(hit) for hit in hits])
        return
    if not hits:
        click.echo(f"no symbol matches {query!r}", err=True)
    for hit in hits:
        doc = f"  # {hit.doc}" if hit.doc else ""
        click.echo(
            f"{hit.file_path}:{hit.line_number}-{hit.end_line}  {hit.kind} {hit.qualified_name}"
            f"  {hit.signature}{doc}"
        )


@click.command("map")
@click.option(
    "--tokens",
    type=click.IntRange(min=32),
    default=1024,
    show_default=True,
    help="Hard maximum size of the map, in estimated tokens.",
)
@click.option(
    "--focus", multiple=True, help="A file you work on (repeatable): rank toward it, leave it out."
)
@click.option(
    "--mention", multiple=True, help="An identifier or file name (repeatable): rank toward it."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the ranked files and symbols with scores."
)
@root_option
@db_option
def map_(
    tokens: int,
    focus: tuple[str, ...],
    mention: tuple[str, ...],
    as_json: bool,
    root: Path | None,
    db_path: Path | None,
) -> None:
    """The most important files and signatures of the repository, within --tokens."""
    from repomap.maps.repo_map import repo_map
    from repomap.store import reading

    settings = config.resolve(root, db_path, find_index=True)
    with reading(settings.db_path) as db:
        result = repo_map(db, tokens, focus, mention)
    if result.unmatched_mentions:
        click.echo(
            f"warning: no symbol or file matches {', '.join(result.unmatched_mentions)}", err=True
        )
    if as_json:
        print_json(result.as_dict())
    else:
        _echo_text(result.text)


# --- stats (repomap/search/log.py) ----------------------------------------------------------


@click.command()
@click.option("--top", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
@root_option
def stats(top: int, as_json: bool, db_path: Path | None, root: Path | None) -> None:
    """Summarize the search log: frequent queries, queries with no results, latency, MCP tools."""
    from repomap.search import log as searchlog

    index = config.resolve(root, db_path, find_index=True).db_path
    summary = searchlog.summarize(index, top)
    tools = searchlog.summarize_tools(index)
    if as_json:
        print_json(summary.as_dict() | {"tools": [_as_dict(usage) for usage in tools]})
        return
    from repomap.cli.render_search import print_stats, print_tool_stats

    print_stats(summary)
    print_tool_stats(tools)


# --- the MCP server (repomap/serve/mcp_server.py) ----------------------------------------------


@click.command("mcp")
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A repository the tools may read (repeatable; default: REPOMAP_ROOT or the current "
    "directory). Nothing outside the roots is served.",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Index file, with a single root (default ROOT/.repomap/index.db).",
)
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP: port."
)
@click.option(
    "--no-refresh",
    is_flag=True,
    help="Never update the index (read-only); by default changed files are re-indexed first.",
)
def mcp(
    roots: tuple[Path, ...],
    db_path: Path | None,
    transport: str,
    host: str,
    port: int,
    no_refresh: bool,
) -> None:
    """Serve repomap's tools to AI agents over MCP (stdio, or streamable HTTP at /mcp)."""
    from repomap.serve.mcp_server import build_server, run

    if db_path is not None and len(roots) > 1:
        raise click.UsageError(
            "--db takes a single --root; several roots each keep their own index"
        )
    if len(roots) > 1:  # REPOMAP_DB cannot name one index for several roots
        settings = [config.resolve(r, config.default_db_path(r.resolve())) for r in roots]
    else:
        settings = [config.resolve(roots[0] if roots else None, db_path)]
    if transport == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: serving on {host} without authentication", err=True)
    run(build_server(settings, refresh=not no_refresh), transport, host, port)
