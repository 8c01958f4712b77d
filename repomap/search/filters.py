"""Which chunks a code search may rank: what `repomap search --path/--lang/--kind` ask for, as
search/code.py makes it and both of its scorers (SQLite's and search/bm25.py's) apply it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Filters:
    """Which chunks may be ranked: None is no restriction."""

    file_ids: list[int] | None = None  # with a path filter: the code files, docs and data
    doc_ids: list[int] | None = None  # files it lets through (all three are set together)
    language: str | None = None  # a code language, a doc format (markdown) or a data format
    kinds: tuple[str, ...] | None = None
    data_ids: list[int] | None = None

    @property
    def names_tests(self) -> bool:
        return self.file_ids is not None or self.doc_ids is not None
