"""Before a command answers from the index: are the indexed files still as they were indexed?

The MCP server keeps a watcher, so it knows about edits for free and re-indexes before it
answers (index/freshness.py). A CLI command starts cold, so `check()` stats every indexed file
against the index instead (store.changed_since_indexing: no file is read; ~2.3 µs a file, so
~8 ms of CPU for Django's 3,407 files), and when some changed or are gone:

- in an index of at most REFRESH_MAX_FILES files it re-indexes first, with the same
  incremental indexer as `repomap index` (what `show` already did for its own file), and says
  so on stderr; that costs what `repomap index` costs there, mostly fixed (importing the
  indexer and numpy, the ranking): +0.15 s of CPU in a 20-file tree, +0.17 s at 500 files,
  once after an edit (bench/README.md);
- in a larger one a refresh costs far more than the answer (0.22 s of CPU for `repomap index`
  on Django with nothing changed, 0.51 s with one file changed), so it only says, on stderr,
  how many files changed since indexing and to run `repomap index`.

A file added since indexing is not seen by the check (only `repomap index` walks the tree).
`--no-refresh` skips the check and answers from the index as it is. No click here: search-text's
fast path runs it too, and imports the indexer only when it re-indexes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from repomap import config
from repomap.cli import outcome
from repomap.errors import BadArgument, RepomapError

REFRESH_MAX_FILES = 500  # indexed files up to which a command re-indexes changed files first
EMBED_MAX_TEXTS = 64  # new texts a search by meaning embeds first (~20 ms each on 2 cores)
LISTED = 3  # changed files named in the warning

Echo = Callable[..., None]


def for_reading(
    root: Path | None,
    db_path: Path | None,
    no_refresh: bool,
    echo: Echo,
    found: Callable[[config.Settings], None] | None = None,
    embeds: bool = False,
) -> config.Settings:
    """What every command that answers from an index does first: find the index, log the
    command to it, and (unless `no_refresh`) check() its files. `found` is called with the
    index's settings once it is found, before the check (`search` starts its model there).
    `embeds`: the answer ranks by meaning, so the chunks a re-index made are embedded too."""
    settings = config.resolve(root, db_path, find_index=True)
    if root is not None and not settings.root.is_dir():
        # not "no index at ...; run `repomap index` first": there is nothing to index there
        raise BadArgument(f"--root {root}: not a directory")
    if root is not None and db_path is not None:
        _check_root(settings, root, db_path)
    outcome.note_index(settings.db_path)
    if found is not None:
        found(settings)
    if not no_refresh:
        check(settings, echo, embeds)
    return settings


def _check_root(settings: config.Settings, root: Path, db_path: Path) -> None:
    """`--root` and `--db` both given must name one tree: the index's own root was used and
    `--root` ignored (another project's answers, exit 0), and a `--root` that does not exist
    went unnoticed. A copy or a move of the indexed tree is the same tree: the index names its
    old place, and its files (more than half of those sampled) are found under `--root`."""
    from repomap import store

    if not settings.db_path.exists():
        return  # the command's own read says there is no index
    try:
        with store.reading(settings.db_path) as db:
            stored = store.get_meta(db, "root")
            sample = store.some_paths(db)
    except RepomapError:
        return  # a damaged or outdated index: the command's own read says what to do
    if not stored or not Path(stored).is_dir() or Path(stored).resolve() == settings.root:
        return
    # More than half of them, not one: two Rust crates both hold `src/lib.rs`, two Python
    # projects `setup.py`, and walkdir's index read with humantime's --root answered with
    # walkdir (an index of two files needs both).
    if not sample or 2 * sum((settings.root / path).exists() for path in sample) > len(sample):
        return
    raise BadArgument(
        f"--db {db_path} is the index of {stored}, not of --root {root}: give one of them"
    )


def check(settings: config.Settings, echo: Echo, embeds: bool = False) -> list[str]:
    """Re-index files changed since indexing when that is cheap, else warn; the files still
    changed (empty when nothing changed or they were re-indexed). With `embeds`, the new
    chunks of an index with embeddings get theirs too, when they are few (EMBED_MAX_TEXTS)."""
    from repomap import store

    if not settings.db_path.exists():
        return []  # the command's own read says there is no index and how to make one
    try:
        with store.reading(settings.db_path) as db:
            root = store.indexed_root(db, settings.root)
            changed, total = store.changed_since_indexing(db, root)
    except RepomapError:
        return []  # a damaged or outdated index: the command's own read says what to do
    if not changed:
        return []
    changed.sort()
    if total <= REFRESH_MAX_FILES and _reindex(settings, root, changed, echo):
        if embeds:
            _embed_new(settings._replace(root=root), echo)
        return []
    named = ", ".join(changed[:LISTED]) + (", …" if len(changed) > LISTED else "")
    noun = "file" if len(changed) == 1 else "files"
    echo(
        f"warning: {len(changed)} indexed {noun} changed since indexing ({named}); answers may "
        "be out of date: run `repomap index`",
        err=True,
    )
    return changed


def _embed_new(settings: config.Settings, echo: Echo) -> None:
    """Embed the chunks a re-index just made, in an index with embeddings, when there are at
    most EMBED_MAX_TEXTS to run through the model (the rest come from the cache): a function
    added since indexing was found by words and not by meaning, the answer saying only that
    99% of the chunks had embeddings. More is `repomap index`'s work, and the note says so."""
    from repomap import store
    from repomap.index import pipeline

    with store.reading(settings.db_path) as db:
        if store.embedding_model(db) is None:
            return  # never embedded: words only, as the answer says
    started = time.perf_counter()
    try:
        done = pipeline.embed(settings, at_most=EMBED_MAX_TEXTS)  # one plan, embedded or not
    except RepomapError as error:
        echo(f"note: could not embed the new chunks first ({error})", err=True)
        return
    if done.pending or not done.embedded:
        return  # too many (left as planned, the answer says how far it got), or all cached
    ms = (time.perf_counter() - started) * 1000
    noun = "chunk" if done.embedded == 1 else "chunks"
    echo(f"note: embedded {done.embedded} new {noun} first ({ms:.0f} ms)", err=True)


def _reindex(settings: config.Settings, root: Path, changed: list[str], echo: Echo) -> bool:
    """The incremental indexer on the indexed tree; False when it could not run (another
    `repomap index` holds the index, or it failed: the warning follows)."""
    from repomap.index import pipeline

    started = time.perf_counter()
    try:
        pipeline.run(settings._replace(root=root))  # the tree the index was built from
    except RepomapError as error:
        echo(f"note: could not re-index the changed files first ({error})", err=True)
        return False
    ms = (time.perf_counter() - started) * 1000
    noun = "file" if len(changed) == 1 else "files"
    echo(f"note: re-indexed {len(changed)} changed {noun} first ({ms:.0f} ms)", err=True)
    return True
