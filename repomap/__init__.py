"""repomap: an offline index of symbols, references, comments, docstrings and strings.

The Python API answers from an index made by `repomap index ROOT` (or `repomap.index.pipeline.run`);
`root` defaults to REPOMAP_ROOT or the current directory, `db` to ROOT/.repomap/index.db.

    import repomap
    print(repomap.map("path/to/repo", tokens=2048, mentions=["QuerySet"]).text)
    repomap.search_symbols("Mutex::lock", root="path/to/repo")        # -> list[SymbolHit]
    repomap.get_symbol_content("QuerySet.filter", context=True).as_text()

This module imports nothing heavy: each function imports what it needs when called.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: ~3 ms of every CLI start
if TYPE_CHECKING:
    from repomap.gateway.show import SymbolContent
    from repomap.maps.repo_map import RepoMap
    from repomap.search.symbols import SymbolHit

PathLike = str | Path | None


def map(
    root: PathLike = None,
    tokens: int = 1024,
    focus: list[str] | tuple[str, ...] = (),
    mentions: list[str] | tuple[str, ...] = (),
    db: PathLike = None,
    path: str | None = None,
    exclude: list[str] | tuple[str, ...] = (),
) -> RepoMap:
    """The repo map: the best-ranked files and signatures within `tokens` (see repomap.maps)."""
    from repomap import config
    from repomap.maps.repo_map import repo_map as build
    from repomap.store import reading

    with reading(config.resolve(root, db).db_path) as index:
        return build(index, tokens, tuple(focus), tuple(mentions), path, tuple(exclude))


repo_map = map


def search_symbols(
    query: str,
    kind: str | None = None,
    language: str | None = None,
    path: str | None = None,
    limit: int = 20,
    root: PathLike = None,
    db: PathLike = None,
) -> list[SymbolHit]:
    """Definitions matching `query`, exact > prefix > substring > fuzzy (see repomap.search.symbols)."""
    from repomap import config, store
    from repomap.search import symbols

    with store.reading(config.resolve(root, db).db_path) as index:
        return symbols.search_symbols(index, query, kind, language, path, limit)


def get_symbol_content(
    name: str,
    file: str | None = None,
    max_lines: int | None = None,
    context: bool = False,
    root: PathLike = None,
    db: PathLike = None,
    reindex: bool = True,
    nth: int | None = None,
) -> SymbolContent:
    """A symbol's current source; a file changed since indexing is re-indexed first. `nth`:
    the Nth of several matches, in the order search_symbols gives them."""
    from repomap import config
    from repomap.gateway import show as snippets

    return snippets.get_symbol_content(
        config.resolve(root, db), name, file, max_lines, context, reindex, nth
    )
