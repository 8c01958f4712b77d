"""Every `repomap` command but `search-text`: main's command table (repomap/cli/main.py) imports
this module and adds each click.Command in it the first time one of them is asked for."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from repomap import config
from repomap.cli import outcome, refresh
from repomap.cli.code_search import search  # noqa: F401 - collected by main.Commands
from repomap.cli.ops import clean, doctor, init, prune, status, watch  # noqa: F401 - as search
from repomap.cli.outcome import envelope
from repomap.cli.records import (  # noqa: F401 - collected by main.Commands
    history,
    search_commits,
    search_data,
)
from repomap.cli.search_text import one_line
from repomap.cli.shared import (
    KIND_HELP,
    absolute_option,
    db_option,
    json_option,
    lang_option,
    limit_option,
    markers_option,
    no_refresh_option,
    path_filter_option,
    path_option,
    print_json,
    root_option,
    tree_root,
)
from repomap.cli.shown import Shown
from repomap.errors import BadArgument, NotFound, Terminated
from repomap.limits import MAX_LIMIT

# --- index and migrate (repomap/index/pipeline.py, repomap/store/) ------------------------------


@click.command()
@tree_root
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Index file (default ROOT/.repomap/index.db).",
)
@click.option("--force", is_flag=True, help="Re-read every file, even unchanged ones.")
@click.option(
    "--reread",
    "reread",
    multiple=True,
    metavar="PATH",
    help="Read this file (relative to ROOT) again though its size and mtime are as indexed: an "
    "edit whose mtime was put back (cp -p, rsync -t). Repeatable.",
)
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
@json_option
@absolute_option
def index(
    root: Path | None,
    db_path: Path | None,
    force: bool,
    reread: tuple[str, ...],
    max_file_size: int | None,
    workers: int | None,
    no_redact: bool,
    embed: bool | None,
    dry_run: bool,
    vector_store: str | None,
    as_json: bool,
    absolute: bool,
) -> int:
    """Index ROOT (default: the current directory), incrementally."""
    from repomap.index import pipeline as indexer

    if embed is False and vector_store is not None:
        # the store is chosen by the embedding run that fills it: an explicit --no-embed was
        # silently overridden (a user's test embedded 365 chunks)
        raise click.UsageError("--vector-store chooses where embeddings go; leave out --no-embed")
    if root is not None and not root.is_dir():
        raise click.BadParameter(f"{root} is not a directory", param_hint="ROOT")
    settings = config.resolve(
        root, db_path, max_file_size, workers, redact=False if no_redact else None
    )
    if reread:
        settings = settings._replace(reread=frozenset(_in_tree(settings.root, reread)))
    outcome.note_index(settings.db_path)
    with _signals_interrupt():
        # An embedding run follows unless --no-embed or --dry-run (without the flag, when the
        # index has vectors; none: nothing to delete): it deletes the vectors of changed chunks
        # and counts them. Asked before the run, has_embeddings would meet a corrupt index the
        # run moves aside.
        keep = (embed is not False or vector_store is not None) and not dry_run
        if as_json or not sys.stderr.isatty():
            summary = indexer.run(settings, force=force, keep_vectors=keep)
        else:
            summary = _index_with_progress(indexer, settings, force, keep)
        embedded = None
        if embed is None and not dry_run and vector_store is None:
            embed = indexer.has_embeddings(settings)
        if embed or dry_run or vector_store is not None:
            quiet = as_json or not sys.stderr.isatty()
            embedded = (
                indexer.embed(
                    settings, dry_run=dry_run, vector_store=vector_store, renew_model=force
                )
                if quiet
                else _embed_with_progress(indexer, settings, dry_run, vector_store, force)
            )
    summary = _summary_shown(summary, Shown(settings.root, absolute))
    if as_json:
        embeddings = embedded and embedded.as_dict()
        print_json(envelope([{**summary.as_dict(), "embeddings": embeddings}]))
    else:
        from repomap.cli.render_index import print_embed_summary, print_index_summary

        print_index_summary(summary)
        if embedded is not None:
            print_embed_summary(embedded, dry_run)
    return outcome.found(summary.files, search=False)


def _in_tree(root: Path, paths: tuple[str, ...]) -> list[str]:
    """`--reread` paths as the index names files: relative to ROOT, `/`-separated."""
    found = []
    for written in paths:
        path = Path(written)
        if path.is_absolute():
            try:
                path = path.resolve().relative_to(root.resolve())
            except ValueError:
                raise click.BadParameter(
                    f"{written} is not inside {root}", param_hint="--reread"
                ) from None
        found.append(path.as_posix().removeprefix("./"))
    return found


def _summary_shown(summary: Any, shown: Shown) -> Any:
    """The summary with its paths as the answer shows them (ROOT itself stays absolute)."""
    return replace(
        summary,
        db_path=shown.anywhere(summary.db_path),
        skipped=[(shown(path), reason) for path, reason in summary.skipped],
        fallback=[(shown(path), reason) for path, reason in summary.fallback],
        recovered_from=summary.recovered_from and shown.anywhere(summary.recovered_from),
    )


def _embed_with_progress(
    indexer: Any, settings: config.Settings, dry_run: bool, vector_store: str | None, force: bool
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

        return indexer.embed(
            settings, dry_run=dry_run, vector_store=vector_store, progress=advance,
            renew_model=force,
        )  # fmt: skip


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


def _index_with_progress(
    indexer: Any, settings: config.Settings, force: bool, keep_vectors: bool
) -> Any:
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

        return indexer.run(settings, force=force, progress=advance, keep_vectors=keep_vectors)


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
@json_option
@absolute_option
def migrate(
    db_path: Path | None,
    root: Path | None,
    to_version: int | None,
    as_json: bool,
    absolute: bool,
) -> int:
    """Create or upgrade an index's schema in place (each step one transaction)."""
    from repomap import store

    settings = config.resolve(root, db_path)
    outcome.note_index(settings.db_path)
    if to_version is not None and not 4 <= to_version <= store.SCHEMA_VERSION:
        raise click.BadParameter(f"must be between 4 and {store.SCHEMA_VERSION}", param_hint="--to")
    db = store.open_index(settings.db_path, migrate_to=to_version)
    version = db.scalar("PRAGMA user_version")
    db.conn.close()
    shown = Shown(settings.root, absolute).anywhere(settings.db_path)
    if as_json:
        print_json(envelope([{"db_path": shown, "schema_version": version}]))
    else:
        click.echo(f"{shown}: schema v{version}")
    return outcome.found(1, search=False)


# --- the gateway: outline / show / open / sources / files / search-docs (repomap/gateway/,
# repomap/search/docs.py); every path argument goes through gateway.resolve_path -------------------


def _max_lines_option(command: Any) -> Any:
    return click.option(
        "--max-lines",
        type=click.IntRange(min=0),
        help="Show at most N lines, then `... (N more lines)`; 0 shows only that count.",
    )(command)


def _echo_text(text: str) -> None:
    click.echo(text, nl=False)


def _indexed_root(db: Any, settings: config.Settings) -> Path:
    """The tree the index was built from (so --db works from anywhere), else ROOT."""
    from repomap.store import indexed_root

    return indexed_root(db, settings.root)


def _tree_of(root: Path | None, db_path: Path | None) -> tuple[config.Settings, Path]:
    """The settings and the tree a command that reads files by path (open, sources, files)
    reads: ROOT, or with --db and no --root the tree that index was built from, as every
    command that reads an index takes --db (`files utils --db X` was a usage error)."""
    settings = config.resolve(root, db_path)
    if db_path is None or root is not None:
        return settings, settings.root
    from repomap import store

    with store.reading(settings.db_path) as db:
        return settings, _indexed_root(db, settings)


def _as_dict(value: Any) -> Any:
    if hasattr(value, "_asdict"):  # the search path's records are NamedTuples (start-up time)
        return value._asdict()
    from dataclasses import asdict

    return asdict(value)


@click.command()
@click.argument("path", required=False)
@path_filter_option("path_option")
@click.option("--level", type=click.IntRange(min=1), help="Heading levels / symbol depth to show.")
@_max_lines_option
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def outline(
    path: str | None,
    path_option: str | None,
    level: int | None,
    max_lines: int | None,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Headings of Markdown and .rst files and symbols of code files under PATH (default: all), per
    file."""
    from repomap.cli.render_gateway import outline_text
    from repomap.gateway import files as gateway
    from repomap.store import reading

    if path is not None and path_option is not None and path != path_option:
        raise click.UsageError("give PATH or --path, not both")
    path = path if path is not None else path_option

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:
        indexed_root = _indexed_root(db, settings)
        result = gateway.outline(db, indexed_root, path, level)
    if result.changed and no_refresh:  # else the check has re-indexed them or warned
        listed = ", ".join(result.changed[:5]) + (", …" if len(result.changed) > 5 else "")
        click.echo(
            f"warning: {len(result.changed)} files changed since they were indexed ({listed}); "
            "run `repomap index` for their current outline",
            err=True,
        )
    shown = Shown(indexed_root, absolute)
    result = replace(
        result,
        files=[replace(file, path=shown(file.path)) for file in result.files],
        changed=[shown(path) for path in result.changed],
    )
    if as_json:
        files, more_lines = _outline_cut(result.files, max_lines)
        print_json(
            envelope(
                [_as_dict(file) for file in files],
                more_lines > 0,
                more_lines=more_lines,
                changed=result.changed,
            )
        )
    else:
        _echo_text(outline_text(result, max_lines))
    if not result.files:  # as symbols, search-text and files say it: not a silent exit 1
        click.echo(f"no indexed file matches {path}" if path else "no indexed files", err=True)
    return outcome.found(len(result.files))


def _outline_cut(files: list[Any], max_lines: int | None) -> tuple[list[Any], int]:
    """The files and entries the text outline shows within `max_lines` lines (a file's path is
    a line, and each entry, or its `(no symbols)` line), and how many lines were left out."""
    from dataclasses import replace

    if max_lines is None:
        return files, 0
    kept, left, more = [], max_lines, 0
    for file in files:
        lines = 1 + max(1, len(file.entries))
        if left <= 0:
            more += lines
            continue
        entries = file.entries[: left - 1]
        kept.append(replace(file, entries=entries))
        shown = min(lines, left)
        more += lines - shown
        left -= shown
    return kept, more


@click.command()
@click.argument("name", required=False)
@click.option("--section", "heading", help="A Markdown heading (case-insensitive; ` — …` dropped).")
@path_filter_option("file", "--file")
@_max_lines_option
@click.option(
    "--context",
    is_flag=True,
    help="Symbols: add leading comments/decorators, enclosing headers, used imports.",
)
@click.option(
    "--nth",
    type=click.IntRange(min=1),
    help="The Nth of several matches: symbols in the order `symbols` lists them (a getter and "
    "its setter, overloads), headings in path then line order.",
)
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def show(
    name: str | None,
    heading: str | None,
    file: str | None,
    max_lines: int | None,
    context: bool,
    nth: int | None,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Show a symbol's source (NAME) or a Markdown, .rst or .txt section (--section HEADING)."""
    if heading is None and name is None:
        raise click.UsageError("give a symbol NAME or --section HEADING")
    if heading is not None and name is not None:
        raise click.UsageError("give either a symbol NAME or --section HEADING, not both")
    try:
        if name is not None:
            return _show_symbol(
                name, file, max_lines, context, nth, no_refresh, as_json, absolute, root, db_path
            )
        return _show_section(
            heading or "", file, max_lines, nth, no_refresh, as_json, absolute, root, db_path
        )
    except NotFound as missing:
        if not as_json:
            raise  # the Group says what was looked for and what is close, and exits 1
        click.echo(one_line(str(missing)), err=True)
        print_json(envelope([]))
        return outcome.found(0)


def _show_section(
    heading: str,
    file: str | None,
    max_lines: int | None,
    nth: int | None,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    from repomap.gateway.section import show_section
    from repomap.store import reading

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:
        indexed_root = _indexed_root(db, settings)
        view = show_section(db, indexed_root, heading, file, max_lines, nth)
    shown = Shown(indexed_root, absolute)
    matches = [replace(match, file=shown(match.file)) for match in view.matches]
    view = replace(view, file=shown(view.file), matches=matches)
    if view.ambiguous:
        click.echo(
            f'warning: {len(view.matches)} headings match "{view.query}"; showing the first '
            f"(--nth 2 to {len(view.matches)} or --file to choose)",
            err=True,
        )
    if as_json:
        print_json(envelope([_as_dict(view)], view.more_lines > 0))
    else:
        _echo_text(view.content)
    return outcome.found(1)


def _show_symbol(
    name: str,
    file: str | None,
    max_lines: int | None,
    context: bool,
    nth: int | None,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    from repomap.gateway.show import get_symbol_content

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    # its own file changed (the check only warned, in a large index): re-indexed, as its lines
    # must be exact; with --no-refresh an error says to run `repomap index`
    content = get_symbol_content(
        settings, name, file, max_lines, context, reindex=not no_refresh, nth=nth
    )
    if content.warning:
        click.echo(f"warning: {content.warning}", err=True)
    if absolute:
        content = _content_shown(content, settings)
    if as_json:
        print_json(envelope([content.as_dict()], content.truncated_lines > 0))
    else:
        _echo_text(content.as_text())
    return outcome.found(1)


def _content_shown(content: Any, settings: config.Settings) -> Any:
    """A symbol's content with its paths absolute (--absolute)."""
    from repomap.store import reading

    with reading(settings.db_path) as db:
        shown = Shown(_indexed_root(db, settings), absolute=True)
    others = []
    for other in content.others:  # "method Model.save django/db/models/base.py:767"
        what, _, where = other.rpartition(" ")
        others.append(f"{what} {shown.located(where)}")
    declaration = content.declaration and shown.located(content.declaration)
    return replace(
        content, file_path=shown(content.file_path), others=others, declaration=declaration
    )


@click.command("search-docs")
@click.argument("query")
@limit_option(20)
@path_option
@markers_option
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def search_docs(
    query: str,
    limit: int,
    path: str | None,
    markers: bool,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Search Markdown, .rst and .txt sections (bare words ANDed, porter stemming), best first."""
    from repomap.search.docs import search_docs as run_search
    from repomap.store import reading

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:  # one more than asked: says whether more exist
        indexed_root = _indexed_root(db, settings)
        probe = run_search(db, indexed_root, query, min(limit + 1, MAX_LIMIT), path)
    shown = Shown(indexed_root, absolute)
    hits = [replace(hit, file=shown(hit.file)) for hit in probe.hits[:limit]]
    stale = sorted({hit.file for hit in hits if hit.stale})
    truncated = len(probe.hits) > limit or limit == MAX_LIMIT == len(hits)
    result = replace(probe, hits=hits, stale_files=stale)
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
        print_json(
            envelope(
                [_as_dict(hit) for hit in hits],
                truncated,
                query=query,
                ignored=list(result.ignored),
                stale_files=stale,
                notes=list(result.notes),
            )
        )
    else:
        from repomap.cli.render_search import print_docs  # rich: for people only

        if not result.hits and not result.ignored:  # else the warning above says why
            click.echo(f"no doc section matches {query!r}", err=True)
        for note in result.notes:
            click.echo(f"note: {note}", err=True)
        print_docs(result, markers)
    return outcome.found(len(result.hits))


@click.command("open")
@click.argument("path")
@_max_lines_option
@click.option("--lines", "line_range", help="Only lines A:B (from 1, inclusive; A: or :B).")
@json_option
@absolute_option
@root_option
@db_option
def open_(
    path: str,
    max_lines: int | None,
    line_range: str | None,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Print a file inside ROOT as it is (text in UTF-8), or a range of its lines."""
    from repomap.gateway import files as gateway

    settings, tree = _tree_of(root, db_path)
    outcome.note_index(settings.db_path)
    lines = gateway.parse_line_range(line_range) if line_range is not None else None
    view = gateway.open_file(tree, path, max_lines, lines)
    if as_json:  # the text, invalid UTF-8 replaced
        content = view.content.decode("utf-8", errors="replace")
        path_shown = Shown(tree, absolute)(view.path)
        answer = {"path": path_shown, "content": content, "line_count": view.line_count,
                  "more_lines": view.more_lines}  # fmt: skip
        print_json(envelope([answer], view.more_lines > 0))
        return outcome.found(1, search=False)
    stdout = sys.stdout.buffer  # click.get_binary_stream is deprecated (Click 9 drops it)
    stdout.write(view.content)
    if view.more_lines:
        if view.content and not view.content.endswith(b"\n"):
            stdout.write(b"\n")
        stdout.write(f"{gateway.more_lines(view.more_lines)}\n".encode())
    stdout.flush()
    return outcome.found(1, search=False)


@click.command()
@click.option("--dir", "directory", help="List this directory (inside ROOT) instead of ROOT.")
@click.option("--depth", type=click.IntRange(min=1), help="Levels to expand (default: what fits).")
@path_filter_option("pattern", "--pattern")
@limit_option(100)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: the same as --json.",
)
@json_option
@absolute_option
@root_option
@db_option
def sources(
    directory: str | None,
    depth: int | None,
    pattern: str | None,
    limit: int,
    fmt: str,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """The files under ROOT as a tree (ignore rules applied), directories first."""
    from repomap.cli.render_gateway import sources_text
    from repomap.gateway import files as gateway

    settings, top = _tree_of(root, db_path)
    outcome.note_index(settings.db_path)
    tree = gateway.sources(top, directory, depth, pattern, limit)
    shown = Shown(top, absolute)
    folder = shown(f"{tree.directory}/" if tree.directory else "")
    entries = [replace(entry, path=shown(entry.path)) for entry in tree.entries]
    tree = replace(tree, directory=folder if absolute else tree.directory, entries=entries)
    if as_json or fmt == "json":
        data = _as_dict(tree)
        print_json(envelope(data.pop("entries"), tree.truncated, **data))
    else:
        if absolute:  # the tree shows names: say where it starts
            click.echo(folder.rstrip("/") + "/")
        if not tree.entries:
            matching = f" matches {pattern!r}" if pattern else ""
            click.echo(f"no source file{matching} under {tree.directory or '.'}", err=True)
        _echo_text(sources_text(tree))
    return outcome.found(len(tree.entries))


@click.command()
@click.argument("query")
@limit_option(100)
@click.option("--ignore-case", "-i", is_flag=True, help="Match regardless of case.")
@path_option
@json_option
@absolute_option
@root_option
@db_option
def files(
    query: str,
    limit: int,
    ignore_case: bool,
    path: str | None,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Files whose name contains QUERY (a literal substring; on the path if it contains /), or
    that QUERY names as a glob when it holds *, ? or [ (*.rs, src/**/test_*.py)."""
    from repomap.cli.render_gateway import files_text
    from repomap.gateway import files as gateway
    from repomap.gateway.files import FOLDER_NOTE

    settings, tree = _tree_of(root, db_path)
    outcome.note_index(settings.db_path)
    found = gateway.find_files(tree, query, limit, ignore_case, path)
    shown = Shown(tree, absolute)
    found = replace(found, paths=[shown(path) for path in found.paths])
    if as_json:
        results = [{"path": path} for path in found.paths]
        print_json(envelope(results, found.truncated, query=found.query, total=found.total))
    else:
        if not found.paths:
            click.echo(f"no file name matches {query!r}", err=True)
        elif found.by_folder:
            click.echo(f"note: {FOLDER_NOTE.format(query)}", err=True)
        _echo_text(files_text(found))
    return outcome.found(len(found.paths))


# --- symbols and the repo map (repomap/search/symbols.py, repomap/maps/) -----------------------


@click.command("symbols")
@click.argument("query")
@click.option("--kind", help=KIND_HELP)
@lang_option
@path_option
@limit_option(20)
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def symbols_(
    query: str,
    kind: str | None,
    language: str | None,
    path: str | None,
    limit: int,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Find definitions by name: exact, then prefix, substring, fuzzy; most used first."""
    from repomap import store
    from repomap.search.symbols import search_symbols, wildcard_note
    from repomap.store import reading

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:  # one more than asked: says whether more exist
        probe = search_symbols(db, query, kind, language, path, min(limit + 1, MAX_LIMIT))
        shown = Shown(_indexed_root(db, settings), absolute)
        unmatched = path is not None and not probe and store.names_nothing(db, path)
        no_language = language is not None and not probe and store.holds_no_language(db, language)
    hits = [replace(hit, file_path=shown(hit.file_path)) for hit in probe[:limit]]
    notes = outcome.filter_notes(path, language, unmatched, no_language)
    if not hits and (wildcards := wildcard_note(query)):
        notes.append(wildcards)
    if as_json:
        truncated = len(probe) > limit or limit == MAX_LIMIT == len(hits)
        print_json(envelope([_as_dict(hit) for hit in hits], truncated, query=query, notes=notes))
        return outcome.found(len(hits))
    if not hits:
        click.echo(f"no symbol matches {query!r}", err=True)
        for note in notes:
            click.echo(f"note: {note}", err=True)
    elif all(hit.match == "fuzzy" for hit in hits):  # JSON says it per result
        click.echo(f"note: no name holds {query!r}; these are spelled like it", err=True)
    elif 0 < (named := sum(hit.match == "exact" for hit in hits)) < len(hits):
        # Exact matches come first; the names that only start with, hold or resemble it
        # followed with nothing to tell them apart (re2's four `Set::Match`, then 16 others).
        first = "the first is" if named == 1 else f"the first {named} are"
        click.echo(f"note: {first} named {query!r}; the rest only resemble it", err=True)
    for hit in hits:
        doc = f"  # {hit.doc}" if hit.doc else ""
        declared = "" if hit.is_definition else " (declaration)"
        click.echo(
            f"{hit.file_path}:{hit.line_number}-{hit.end_line}  {hit.kind} {hit.qualified_name}"
            f"{declared}  {hit.signature}{doc}"
        )
    return outcome.found(len(hits))


@click.command("refs")
@click.argument("name")
@lang_option
@path_option
@limit_option(50)
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def refs(
    name: str,
    language: str | None,
    path: str | None,
    limit: int,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Where NAME is used: calls, types named, field uses, `#if` tests; by file and line.

    Every line of a using definition that names it; by name, not resolved (`Set::Match`: every
    `Match`). A name no use of which is indexed (a constant, a global, a local variable) is
    looked for in the code files' text, and a note says so."""
    from repomap import store
    from repomap.search.references import find_references
    from repomap.store import reading

    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:
        indexed_root = _indexed_root(db, settings)
        found = find_references(db, indexed_root, name, path, language, min(limit, MAX_LIMIT))
        shown = Shown(indexed_root, absolute)
        unmatched = path is not None and not found.results and store.names_nothing(db, path)
        no_language = (
            language is not None and not found.results and store.holds_no_language(db, language)
        )
    hits = [replace(hit, file_path=shown(hit.file_path)) for hit in found.results]
    notes = [*found.notes, *outcome.filter_notes(path, language, unmatched, no_language)]
    if as_json:
        results = [_as_dict(hit) for hit in hits]
        print_json(envelope(results, found.truncated, query=name, name=found.name, notes=notes))
        return outcome.found(len(hits))
    if not hits:
        click.echo(
            f"no use of {found.name!r} is indexed (calls, types named, field uses and `#if`"
            " tests are; a name is also looked for in the code's text);"
            " `search-text --literal` finds it in comments and strings",
            err=True,
        )
    for note in notes:
        click.echo(f"note: {note}", err=True)
    for hit in hits:
        where = f"  in {hit.in_symbol}" if hit.in_symbol else ""
        click.echo(f"{hit.file_path}:{hit.line_number}{where}  {hit.text}")
    return outcome.found(len(hits))


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
@path_option
@click.option(
    "--exclude",
    multiple=True,
    help="Leave these files out (repeatable; a path filter like --path): --exclude tests/.",
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the map view (treemap by lines and rank, dependencies) as one HTML file.",
)
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def map_(
    tokens: int,
    focus: tuple[str, ...],
    mention: tuple[str, ...],
    path: str | None,
    exclude: tuple[str, ...],
    html_file: Path | None,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """The most important files and signatures of the repository, within --tokens.

    C/C++ functions show where they are defined: a header's prototype (or an in-class
    declaration) of a function defined elsewhere and C/C++ #define macros are ranked after all
    the other definitions, and definitions in test, benchmark, example, vendored and generated
    files (tests/, test_*.py, *_test.rs, conftest.py, examples/, benches/, third_party/, a
    "generated by" header) and Rust's inline tests (#[cfg(test)] mod tests, #[test]) after
    those, as search demotes them: they show when the rest fits, when mentioned, or with
    --path (include/, tests/).
    """
    from repomap.maps.repo_map import repo_map
    from repomap.store import reading

    if html_file is not None:
        return _map_html(html_file, path, as_json, no_refresh, root, db_path)
    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:
        try:
            result = repo_map(db, tokens, focus, mention, path, exclude)
        except NotFound as missing:  # --path keeps no file: nothing to map, exit 1
            if not as_json:
                raise
            click.echo(one_line(str(missing)), err=True)
            print_json(envelope([]))
            return outcome.found(0)
        if absolute:
            result = _map_shown(result, Shown(_indexed_root(db, settings), absolute))
    if result.unmatched_mentions:
        click.echo(
            f"warning: no symbol or file matches {', '.join(result.unmatched_mentions)}", err=True
        )
    if not result.files and not result.omitted_files:
        # An index without code (docs only, or a filter that keeps nothing): say so, as every
        # lookup that finds nothing does, instead of a map of `(0 more files ... left out)`.
        if as_json:
            print_json(envelope([], False, **{k: v for k, v in result.as_dict().items()
                                              if k != "files"}))  # fmt: skip
        where = f" among the files {path} keeps" if path else ""
        click.echo(f"no code files to map{where}: the index holds no definitions", err=True)
        return outcome.found(0)
    if as_json:
        data = result.as_dict()
        truncated = result.omitted_files > 0 or result.omitted_symbols > 0
        print_json(envelope(data.pop("files"), truncated, **data))
    else:
        _echo_text(result.text)
    return outcome.found(len(result.files), search=False)


MAP_HTML_EDGE_FILES = 30  # the dependency graph: edges among this many top files
MAP_HTML_MAX_EDGES = 120


def _map_html(
    html_file: Path,
    path: str | None,
    as_json: bool,
    no_refresh: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """`map --html FILE`: the page's map view with the data inlined (repomap/serve/page.py)."""
    from repomap.serve.page import index_map, map_html
    from repomap.store import reading

    if as_json:
        raise BadArgument("--html writes a file and prints no JSON; leave out --json")
    settings = refresh.for_reading(root, db_path, no_refresh, click.echo)
    with reading(settings.db_path) as db:
        data = index_map(db, path, MAP_HTML_EDGE_FILES, MAP_HTML_MAX_EDGES)
        root_path = _indexed_root(db, settings)
    html = map_html(data, f"repomap: {root_path.name}")
    try:
        html_file.write_text(html, encoding="utf-8")
    except OSError as error:
        raise BadArgument(f"cannot write {html_file}: {error.strerror or error}") from None
    click.echo(
        f"wrote {html_file}: {len(data['files'])} files, {len(data['edges'])} edges", err=True
    )
    return outcome.found(len(data["files"]), search=False)


def _map_shown(result: Any, shown: Shown) -> Any:
    """The map with its files' paths as shown, in its text (each file's `path:` line) too."""
    headers = {f"{file.file_path}:": f"{shown(file.file_path)}:" for file in result.files}
    text = "".join(
        headers.get(line.rstrip("\n"), line.rstrip("\n")) + ("\n" if line.endswith("\n") else "")
        for line in result.text.splitlines(keepends=True)
    )
    files = [replace(file, file_path=shown(file.file_path)) for file in result.files]
    return replace(result, text=text, files=files)


# --- stats (repomap/search/log.py) ----------------------------------------------------------


@click.command()
@click.option("--top", type=click.IntRange(1, 1000), default=10, show_default=True)
@json_option
@absolute_option
@db_option
@root_option
def stats(top: int, as_json: bool, absolute: bool, db_path: Path | None, root: Path | None) -> int:
    """Summarize the log: searches (frequent, empty, latency), then every CLI command and MCP
    tool called (calls, errors, empty answers, latency)."""
    from repomap.search import log as searchlog

    settings = config.resolve(root, db_path, find_index=True)
    index = settings.db_path
    summary = searchlog.summarize(index, top)
    shown = Shown(settings.root, absolute)
    summary = summary._replace(log_files=[shown.anywhere(path) for path in summary.log_files])
    usage = searchlog.summarize_usage(index)
    outcome.note_index(index)
    if as_json:
        print_json(envelope([_as_dict(row) for row in usage], **summary.as_dict()))
    else:
        from repomap.cli.render_search import print_stats, print_usage

        print_stats(summary)
        print_usage(usage)
    return outcome.found(len(usage), search=False)


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
@click.option(
    "--watch",
    "follow",
    is_flag=True,
    help="Also re-index each root as files change (as `repomap watch`), one line per update "
    "on stderr, so answers rarely wait for a refresh.",
)
def mcp(
    roots: tuple[Path, ...],
    db_path: Path | None,
    transport: str,
    host: str,
    port: int,
    no_refresh: bool,
    follow: bool,
) -> None:
    """Serve repomap's tools to AI agents over MCP (stdio, or streamable HTTP at /mcp)."""
    from repomap.serve.mcp_server import build_server, run

    if db_path is not None and len(roots) > 1:
        raise click.UsageError(
            "--db takes a single --root; several roots each keep their own index"
        )
    if len(roots) > 1:  # REPOMAP_DB cannot name one index for several roots
        settings = [config.resolve(r, config.current_db_path(r.resolve())) for r in roots]
    else:
        settings = [config.resolve(roots[0] if roots else None, db_path)]
    if transport == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: serving on {host} without authentication", err=True)
    if follow and no_refresh:
        raise click.UsageError("--watch updates the index; it cannot go with --no-refresh")
    stop_following = _follow_in_background(settings) if follow else None
    try:
        run(build_server(settings, refresh=not no_refresh), transport, host, port)
    finally:
        if stop_following is not None:
            stop_following()


def _follow_in_background(settings: list[config.Settings]) -> Callable[[], None]:
    """`mcp --watch`: one `repomap watch` loop per root in a thread; its lines go to stderr,
    since stdout is the MCP protocol on stdio. Returns what stops them and waits for them (the
    index run under way, then each loop's embedder: see serve/mcp_server.run for why)."""
    import threading

    from repomap.errors import RepomapError
    from repomap.index.follow import Update, follow

    stop = threading.Event()

    def report(update: Update) -> None:
        click.echo(update.line(), err=True)

    def loop(each: config.Settings) -> None:
        try:
            follow(each.root, each.db_path, report, stop)
        except RepomapError as error:  # the server goes on; its own refresh covers the root
            click.echo(f"warning: watching {each.root} stopped ({error})", err=True)

    threads = [
        threading.Thread(target=loop, args=(each,), name="repomap-watch", daemon=True)
        for each in settings
    ]
    for thread in threads:
        thread.start()

    def stop_and_wait() -> None:
        stop.set()
        for thread in threads:
            thread.join()

    return stop_and_wait


# --- the HTTP API (repomap/serve/http_api.py) --------------------------------------------------


@click.command("serve")
@click.argument("roots", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Index file, with a single ROOT (default ROOT/.repomap/index.db).",
)
@click.option(
    "--host",
    help="Address to bind; any but loopback requires --token (serve.host; default 127.0.0.1).",
)
@click.option("--port", type=click.IntRange(1, 65535), help="The port (serve.port; default 8766).")
@click.option(
    "--watch",
    "watch_files",
    is_flag=True,
    help="Re-index changed files in the background (else read-only).",
)
@click.option(
    "--token",
    help="Require `Authorization: Bearer TOKEN` on every request (default: REPOMAP_SERVE_TOKEN).",
)
@click.option(
    "--rate-limit",
    type=click.IntRange(0, 10_000_000),
    help="Requests per window and client address, 0 for no limit (serve.rate_limit; default 600).",
)
@click.option(
    "--rate-limit-window",
    type=click.FloatRange(0.001, 86400),
    help="The rate limit's window in seconds (serve.rate_limit_window; default 60).",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    help="An origin web pages may call from, e.g. http://localhost:3000 (repeatable; "
    "serve.cors_origins; none by default).",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(1, 1 << 30),
    help="Largest request body in bytes (serve.max_body_bytes; default 65536).",
)
def serve(
    roots: tuple[Path, ...],
    db_path: Path | None,
    host: str | None,
    port: int | None,
    watch_files: bool,
    token: str | None,
    rate_limit: int | None,
    rate_limit_window: float | None,
    cors_origins: tuple[str, ...],
    max_body_bytes: int | None,
) -> None:
    """Serve the search API over HTTP (JSON under /api, MCP at /mcp), read-only."""
    import ipaddress
    import os

    from repomap.errors import BadArgument
    from repomap.serve.http_api import ServeOptions, run
    from repomap.serve.http_guard import GuardOptions

    if db_path is not None and len(roots) > 1:
        raise click.UsageError("--db takes a single ROOT; several roots each keep their own index")
    if len(roots) > 1:
        settings = [config.resolve(r, config.default_db_path(r.resolve())) for r in roots]
    else:
        settings = [config.resolve(roots[0] if roots else None, db_path)]
    # flag > environment > the first root's repomap.toml > default
    first = settings[0].root
    found = config.options(first, {  # the config file read once
        "serve.host": host, "serve.port": port, "serve.rate_limit": rate_limit,
        "serve.rate_limit_window": rate_limit_window, "serve.max_body_bytes": max_body_bytes,
        "serve.cors_origins": list(cors_origins) or None,
    })  # fmt: skip
    host = str(found["serve.host"].value)
    port = int(found["serve.port"].value)
    rate_limit = int(found["serve.rate_limit"].value)
    rate_limit_window = float(found["serve.rate_limit_window"].value)
    max_body_bytes = int(found["serve.max_body_bytes"].value)
    cors_origins = tuple(found["serve.cors_origins"].value)
    token = token or os.environ.get("REPOMAP_SERVE_TOKEN") or None
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False  # a host name: it may resolve to anything
    if not loopback and token is None:
        raise BadArgument(
            f"serving on {host} (not a loopback address) requires a bearer token: pass "
            "--token or set REPOMAP_SERVE_TOKEN"
        )
    for origin in cors_origins:
        if not origin.startswith(("http://", "https://")) or origin.count("/") != 2:
            raise BadArgument(
                f"--cors-origin {origin} is not an origin (scheme://host[:port], no path)"
            )
    guard = GuardOptions(
        token=token,
        rate_limit=rate_limit,
        window=rate_limit_window,
        cors_origins=cors_origins,
        max_body_bytes=max_body_bytes,
        loopback=loopback,
    )
    click.echo(
        f"repomap serve: http://{host}:{port}/ (API under /api, MCP at /mcp) for "
        + ", ".join(str(item.root) for item in settings),
        err=True,
    )
    # uvicorn stops gracefully on SIGTERM or Ctrl-C, then raises the signal again: as
    # Terminated or KeyboardInterrupt it unwinds through the server's cleanup (the notes beside
    # its indexes are removed), and a server told to stop has stopped, not failed.
    try:
        with _signals_interrupt():
            run(settings, ServeOptions(host=host, port=port, watch=watch_files, guard=guard))
    except (Terminated, KeyboardInterrupt):
        click.echo("repomap serve: stopped", err=True)
