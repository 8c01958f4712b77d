"""Operating an index: `status`, `doctor`, `clean`, `prune`, `init` and `watch`
(repomap/index/status.py, repomap/index/scopes.py, repomap/index/follow.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from repomap import config
from repomap.cli import outcome
from repomap.cli.outcome import envelope
from repomap.cli.shared import absolute_option, db_option, json_option, print_json, tree_root
from repomap.cli.shown import Shown
from repomap.errors import BadArgument, ExitCode
from repomap.shares import percent

# An embedding cache row, for `prune --cache`'s estimate: a 384-byte int8 vector (schema v17),
# a 32-byte hash, its keys and the unique index's entry (Django: 28.8 MB for 57,753 entries).
CACHE_ROW_BYTES = 500


def _settings(root: Path | None, db_path: Path | None, logged: bool = True) -> Any:
    settings = config.resolve(root, db_path, find_index=True)
    if logged:  # clean's line would bring back the log it removed
        outcome.note_index(settings.db_path)
    return settings


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return ""  # pragma: no cover


@click.command()
@json_option
@db_option
@tree_root
def status(as_json: bool, db_path: Path | None, root: Path | None) -> int:
    """The index: root, database, schema, scope, counts, model, last run, files changed since,
    size per table, and every setting with where it came from."""
    from repomap.index import scopes as branch_scopes
    from repomap.index.status import status as read_status

    settings = _settings(root, db_path)
    found = read_status(settings)
    scopes = [info.as_dict() for info in branch_scopes.scopes(settings.root)]
    if as_json:
        print_json(envelope([found.as_dict()], scopes=scopes))
        return outcome.found(1, search=False)
    click.echo(f"root:        {found.root}")
    click.echo(f"database:    {found.db_path}" + ("" if found.exists else "  (none yet)"))
    click.echo(f"scope:       {found.scope} (scope.mode = {found.scope_mode})")
    if not found.exists:
        click.echo(f"no index yet: run `repomap index {found.root}`")
        return outcome.found(1, search=False)
    click.echo(f"schema:      v{found.schema_version}")
    click.echo(
        f"counts:      {found.files} code files, {found.docs} docs, {found.symbols} symbols, "
        f"{found.text_rows} text rows, {found.chunks} chunks"
    )
    counted = (
        f"unknown ({found.vector_store_problem})"
        if found.vector_store_problem
        else f"{found.embedded} of {found.chunks} chunks ({percent(found.embedded_share)})"
    )
    click.echo(f"embeddings:  {counted}, model {found.model_id or '-'}, store {found.vector_store}")
    took = f" in {found.index_seconds:.2f} s" if found.index_seconds is not None else ""
    click.echo(f"last index:  {found.indexed_at or '-'}{took}")
    listed = ", ".join(found.changed_files[:3]) + (", …" if found.changed_since > 3 else "")
    click.echo(
        f"changed:     {found.changed_since} indexed files since"
        + (f" ({listed})" if found.changed_since else "")
    )
    if found.outdated:  # an upgrade: no file changed, yet every one is read again
        from repomap.index.pipeline import made_with

        made = made_with({key: (old, new or "") for key, (old, new) in found.outdated.items()})
        click.echo(f"outdated:    made with {made}: the next `repomap index` re-reads every file")
    per_10k = (
        f" ({found.db_bytes / found.indexed_lines * 10_000 / 1e6:.2f} MB per 10,000 indexed lines"
        f" of code and docs, {found.indexed_lines} lines)"
        if found.indexed_lines
        else ""
    )
    click.echo(f"size:        {_size(found.db_bytes)}{per_10k}")
    literal = (
        "a trigram index"
        if found.literal_index
        else "the text read whole (no trigram index: under REPOMAP_LITERAL_INDEX_BYTES of code)"
    )
    click.echo(f"literal:     {literal}")
    for table, size in list(found.table_bytes.items())[:16]:
        click.echo(f"  {table:<32} {_size(size):>10}")
    for info in scopes:
        click.echo(
            f"scope {info['folder']}: {info['name']} ({info['mode']}), indexed "
            f"{info['indexed_at'] or '-'}, {info['files']} files, {info['chunks']} chunks"
        )
    return outcome.found(1, search=False)


@click.command()
@json_option
@db_option
@tree_root
def doctor(as_json: bool, db_path: Path | None, root: Path | None) -> int:
    """Check the index and its surroundings: PASS, WARN or FAIL each, with the fix; exit 0
    only when nothing fails."""
    from dataclasses import asdict

    from repomap.index.status import doctor as run_checks

    try:
        settings = _settings(root, db_path)
    except config.ConfigError as error:  # the config check reports it; the rest use defaults
        click.echo(f"FAIL  config file: {error}", err=not as_json)
        raise
    checks = run_checks(settings)
    failed = sum(check.outcome == "FAIL" for check in checks)
    if as_json:
        print_json(envelope([asdict(check) for check in checks], failed=failed))
    else:
        for check in checks:
            click.echo(f"{check.outcome:<5} {check.name}: {check.detail}")
            if check.fix and check.outcome != "PASS":
                click.echo(f"      fix: {check.fix}")
    outcome.found(len(checks), search=False)
    return ExitCode.ERROR if failed else ExitCode.OK


@click.command()
@click.option("--scope", help="The index of this branch scope (default: the current index).")
@click.option("--all", "everything", is_flag=True, help="All of ROOT/.repomap: every scope, logs.")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@json_option
@absolute_option
@db_option
@tree_root
def clean(
    scope: str | None,
    everything: bool,
    dry_run: bool,
    as_json: bool,
    absolute: bool,
    db_path: Path | None,
    root: Path | None,
) -> int:
    """Remove index state (the index, its scopes, logs): never a source file."""
    from repomap.index.scopes import clean as remove

    if scope is not None and everything:
        raise click.UsageError("give --scope or --all, not both")
    settings = _settings(root, db_path, logged=False)
    removed = remove(settings, scope, everything, dry_run)
    shown = Shown(settings.root, absolute).anywhere  # inside ROOT: relative, as everywhere
    verb = "would remove" if dry_run else "removed"
    if as_json:
        print_json(envelope([{"path": shown(path)} for path in removed], dry_run=dry_run))
    else:
        for path in removed:
            click.echo(f"{verb} {shown(path)}")
        if not removed:
            click.echo("nothing to remove", err=True)
    return outcome.found(len(removed), search=False)


@click.command()
@click.option(
    "--older-than",
    default=None,
    help="Also list scopes not indexed for this long: 30d, 12h, 2w (default: scope.ttl_days).",
)
@click.option("--apply", is_flag=True, help="Delete what is listed (default: only list it).")
@click.option(
    "--cache",
    is_flag=True,
    help="Instead: the embedding cache's vectors of texts no chunk has any more (of this index).",
)
@json_option
@tree_root
def prune(
    older_than: str | None, apply: bool, cache: bool, as_json: bool, root: Path | None
) -> int:
    """Branch scopes whose branch no longer exists or that are older than the TTL (or, with
    --cache, the embedding cache's unused vectors); dry-run unless --apply."""
    from datetime import timedelta

    from repomap.index import scopes

    settings = _settings(root, None)
    if cache:
        return _prune_cache(settings, apply, as_json)
    age = (
        scopes.parse_age(older_than)
        if older_than is not None
        else timedelta(days=config.setting(settings.root, "scope.ttl_days"))
    )
    found = scopes.prune(settings, age, apply)
    if as_json:
        results = [{**item.scope.as_dict(), "reason": item.reason} for item in found]
        print_json(envelope(results, applied=apply))
    else:
        verb = "removed" if apply else "would remove"
        for item in found:
            click.echo(f"{verb} {item.scope.folder} ({item.scope.name}): {item.reason}")
        if not found:
            click.echo("no scope to prune", err=True)
        elif not apply:
            click.echo("run again with --apply to remove them", err=True)
    return outcome.found(len(found), search=False)


def _prune_cache(settings: Any, apply: bool, as_json: bool) -> int:
    from repomap.index.pipeline import prune_embedding_cache

    if not settings.db_path.exists():
        raise BadArgument(f"no index at {settings.db_path}; run `repomap index` first")
    count = prune_embedding_cache(settings, apply)
    size = _size(count * CACHE_ROW_BYTES)
    if as_json:
        row = {"what": "embedding cache", "entries": count, "bytes": count * CACHE_ROW_BYTES}
        print_json(envelope([row] if count else [], applied=apply))
    elif count:
        verb = "removed" if apply else "would remove"
        click.echo(f"{verb} {count} cached vectors no chunk uses (about {size})")
        if not apply:
            click.echo("run again with --apply to remove them", err=True)
    else:
        click.echo("no unused cached vector", err=True)
    return outcome.found(count, search=False)


@click.command()
@click.option("--force", is_flag=True, help="Replace an existing repomap.toml.")
@json_option
@tree_root
def init(force: bool, as_json: bool, root: Path | None) -> int:
    """Write ROOT/repomap.toml: every setting, commented, at its default."""
    folder = (root or Path.cwd()).resolve()
    if not folder.is_dir():
        raise BadArgument(f"{folder} is not a directory")
    path = folder / config.CONFIG_FILE
    if path.exists() and not force:
        raise BadArgument(f"{path} exists; pass --force to replace it")
    path.write_text(config.init_text(), encoding="utf-8")
    if as_json:
        print_json(envelope([{"path": str(path), "settings": len(config.SETTINGS)}]))
    else:
        click.echo(f"wrote {path}")
    return ExitCode.OK


@click.command()
@tree_root
@click.option(
    "--debounce",
    type=click.IntRange(1, 60_000),
    help="Milliseconds without a new event that end a batch (default: watch.debounce_ms, 50).",
)
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Keep embeddings up to date in the background (default: when the index has them).",
)
@json_option
@db_option
def watch(
    root: Path | None, debounce: int | None, embed: bool | None, as_json: bool, db_path: Path | None
) -> int:
    """Index ROOT, then re-index what changed after each batch of file changes, one line per
    update (--json: one JSON object per line), until interrupted."""
    import json
    import threading

    from repomap.index.follow import Update, follow

    if root is not None and not root.is_dir():
        raise click.BadParameter(f"{root} is not a directory", param_hint="ROOT")
    settings = config.resolve(root, db_path)
    outcome.note_index(settings.db_path)

    def report(update: Update) -> None:
        text = json.dumps(update.as_dict()) if as_json else update.line()
        click.echo(text)  # one line per update, flushed: a pipe reader sees it at once

    stop = threading.Event()
    try:
        follow(settings.root, db_path, report, stop, debounce, embed)
    except KeyboardInterrupt:
        stop.set()
    return ExitCode.OK
