"""What the MCP tools do: each operation over the allowlisted roots, returning a result model.

`mcp_server.py` registers the tools (names, parameters, descriptions) and calls these methods;
this module holds the logic: which roots a call touches (`repomap.roots`), bringing their
indexes up to date first (`repomap.freshness`), reading each through a read-only connection
opened for the call, merging the answers of several roots, and cutting every answer to its
budget (`truncated`, `more`). Failures are RepomapError; the server turns them into tool errors.

Results are the pydantic models of `repomap.mcp_models`: their fields are the output schemas.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import itertools
import os
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repomap import paths, store, textfile
from repomap.config import Settings
from repomap.errors import BadArgument, PathNotFound, RepomapError
from repomap.gateway import files as gateway
from repomap.gateway import section
from repomap.gateway import show as snippets
from repomap.gateway.files import SourceEntry
from repomap.index import history, pipeline
from repomap.index.embedding import BackgroundEmbedder
from repomap.index.freshness import Refresher
from repomap.index.secrets import is_secret_file
from repomap.index.status import embedded_vectors
from repomap.limits import MAX_LIMIT, check_limit
from repomap.maps import render
from repomap.maps import repo_map as maps
from repomap.search import code as code_search
from repomap.search import docs as doc_search
from repomap.search import references, symbols
from repomap.serve.mcp_models import (
    CodeMatch,
    CodeSearchAnswer,
    CommitRecord,
    CommitSearchAnswer,
    DataRecord,
    DataSearchAnswer,
    DocMatch,
    DocSearchAnswer,
    FileContent,
    FilesAnswer,
    HeadingRef,
    MatchedLine,
    OutlineAnswer,
    OutlineFile,
    Reference,
    ReferenceSearch,
    RepoMapAnswer,
    RootStatus,
    Section,
    SourcesAnswer,
    StatusAnswer,
    Symbol,
    SymbolSearch,
    SymbolSource,
    TextMatch,
    TextSearchAnswer,
)
from repomap.serve.roots import Root, Roots
from repomap.shares import percent
from repomap.store.vectors import EmbeddingModelMismatch

if TYPE_CHECKING:
    from repomap.store import Store

DEFAULT_MAX_LINES = 400  # lines a source or section answer holds when max_lines is not given
MAX_LINE_CHARS = 2000  # longer lines (minified code) are cut in read_file and get_symbol_content
MAX_LISTED = 20  # names listed in a result's side lists (changed files, other matches)
BINARY_SNIFF = 8192
MAX_READ_BYTES = 64 * 1024 * 1024
MAP_PREFIX_RETRIES = 3


# The roots the current tool call read, for its log entry (a list set by the server per call).
touched: ContextVar[list[Root] | None] = ContextVar("touched", default=None)
# Set while a call runs on the server's event loop, where it must never wait (see answer()).
inline: ContextVar[bool] = ContextVar("inline", default=False)


class RetryInThread(Exception):  # noqa: N818 - a signal, not an error
    """The call has to wait (for the indexer) and runs on the event loop: rerun it in a thread."""


# --- the service -----------------------------------------------------------------------------


class Service:
    """The tools' operations over `roots`, each index refreshed before it is read."""

    # False: calls never start the embedder (`repomap serve` runs it from its own watch loop,
    # and without --watch writes nothing).
    background_embedding = True

    def __init__(self, roots: Roots, refresh: bool = True, **refresh_options: float) -> None:
        self.roots = roots
        self.refreshers = {
            root.label: Refresher(root.settings, enabled=refresh, **refresh_options)
            for root in roots.all
        }
        self.kept = {root.label: store.KeptReader(root.settings.db_path) for root in roots.all}
        # Vectors follow the index in the background, for indexes that have them (search_code
        # answers meanwhile with the coverage it has): kicked by the first call, then by each
        # refresh that changed something.
        self.embedders = {
            root.label: BackgroundEmbedder(functools.partial(_embed, root.settings))
            for root in roots.all
        }
        self._kicked: set[str] = set()

    def close(self) -> None:
        for embedder in self.embedders.values():
            embedder.close()
        for refresher in self.refreshers.values():
            refresher.close()
        for reader in self.kept.values():
            reader.close()

    def ready(self, roots: list[Root]) -> list[str]:
        """Bring the indexes of `roots` up to date (bounded); the notices for the answer."""
        notices: list[str] = []
        seen = touched.get()
        for root in dict.fromkeys(roots):
            if seen is not None and root not in seen:
                seen.append(root)  # the call's log entry goes to this root's log
            refresher = self.refreshers[root.label]
            said = refresher.ensure_fresh(wait=not inline.get())
            notices.extend(said)
            # `--no-refresh` writes nothing: no vectors either (they are the index's too).
            writes = refresher.enabled and self.background_embedding
            if writes and (said or root.label not in self._kicked):
                self._kicked.add(root.label)
                if pipeline.has_embeddings(root.settings):
                    self.embedders[root.label].kick()
        return notices

    def unread_changes(self, scopes: list[tuple[Root, str | None]]) -> list[str]:
        """For an empty answer from an index that is not refreshed (`--no-refresh`): the notice
        naming its files changed since indexing that the call's path keeps, whose content now
        was not searched (an agent's function appended to a file was "not found", unsaid). One
        stat per indexed file."""
        changed: list[str] = []
        for root, path_filter in scopes:
            if self.refreshers[root.label].enabled:
                continue
            with self.reading(root) as db:
                found, _total = store.changed_since_indexing(db, root.path)
            kept = paths.select(paths.parse(path_filter, root.path), found)
            changed += [self.roots.out(root, path) for path in kept]
        if not changed:
            return []
        return [UNREAD_CHANGES_NOTE.format(_listed(changed))]

    def is_fresh(self) -> bool:
        """No index needs a refresh or a wait right now (checked without blocking)."""
        return all(refresher.is_fresh() for refresher in self.refreshers.values())

    def refresh_now(self, root: Root, reread: str | None = None) -> list[str]:
        if inline.get():
            raise RetryInThread
        return self.refreshers[root.label].refresh_now(reread)

    @contextmanager
    def reading(self, root: Root) -> Iterator[Store]:
        """The index of `root`, read-only: on the event loop through a kept connection (a new
        snapshot per call), in a worker thread through a connection opened for the call."""
        if inline.get():
            with self.kept[root.label].snapshot() as db:
                yield db
            return
        with store.reading(root.settings.db_path) as db:
            yield db

    # --- text ------------------------------------------------------------------------------

    def search_text(
        self,
        query: str,
        element_type: str,
        limit: int,
        path: str | None,
        mode: str,
        language: str | None,
        ignore_case: bool,
    ) -> TextSearchAnswer:
        from repomap.search import text as text_query

        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        found: list[tuple[Root, text_query.TextHit]] = []
        total = 0
        exact = True
        stale: list[str] = []
        unmatched = path is not None
        for root, path_filter in scopes:
            with self.reading(root) as db:
                result = text_query.search_text(
                    db, query, element_type, limit, path_filter, language, mode, ignore_case,
                    log=root.settings.search_log,
                )  # fmt: skip
                changed = gateway.changed_since_indexed(
                    db, root.path, (hit.file_path for hit in result.hits)
                )
                unmatched = unmatched and not result.hits and _names_nothing(db, path_filter)
            stale.extend(self.roots.out(root, changed_path) for changed_path in changed)
            found.extend((root, hit) for hit in result.hits)
            total += result.total
            exact = exact and result.total_exact
            notices.extend(note for note in result.notes if note not in notices)
        if self.roots.multi:
            shown = {id(hit): self.roots.out(root, hit.file_path) for root, hit in found}
            if mode == "literal":
                found.sort(key=lambda pair: (shown[id(pair[1])], pair[1].line_number))
            else:
                found.sort(key=lambda p: (-p[1].rank, shown[id(p[1])], p[1].line_number))
        results = [
            TextMatch(**_fields(hit, file_path=self.roots.out(root, hit.file_path)))
            for root, hit in found[:limit]
        ]
        if results:  # another root's words-counted-alone note: this answer has results
            notices = [note for note in notices if not text_query.is_alone_note(note)]
        if stale:
            notices.append(STALE_LINES_NOTE.format(_listed(stale)))
        if unmatched:
            notices.append(f"no indexed file matches path {path!r}")
        elif not results:
            notices += self.unread_changes(scopes)
        more = max(0, total - len(results))
        return TextSearchAnswer(
            notices=notices,
            query=query,
            mode=mode,
            results=results,
            total=total,
            total_exact=exact,
            truncated=more > 0 or not exact,
            more=more,
        )

    # --- symbols -----------------------------------------------------------------------------

    def search_symbols(
        self, query: str, kind: str | None, path: str | None, limit: int, language: str | None
    ) -> SymbolSearch:
        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        # One search per root, for one more than asked: that one tells whether more exist.
        # (Counting them all would mean a second, wider search, which doubled the call's cost;
        # and search_symbols orders its tail by what its limit lets it see.)
        # At the largest limit there is no room for the one more: a full page then says "maybe
        # more" (truncated, not exact) rather than asking past the bound (an error, before).
        probe = min(limit + 1, MAX_LIMIT)
        per_root: list[list[tuple[Root, symbols.SymbolHit]]] = []
        truncated = False
        unmatched = path is not None
        stale: list[str] = []
        for root, path_filter in scopes:
            with self.reading(root) as db:
                hits = symbols.search_symbols(db, query, kind, language, path_filter, probe)
                unmatched = unmatched and not hits and _names_nothing(db, path_filter)
            truncated = truncated or len(hits) > limit or (probe == limit == len(hits))
            per_root.append([(root, hit) for hit in hits[:limit]])
        if unmatched:  # an empty answer that says why (a typo in the folder, not "no such name")
            notices.append(f"no indexed file matches path {path!r}")
        if not any(per_root) and (wildcards := symbols.wildcard_note(query)):
            notices.append(wildcards)
        if not any(per_root) and not unmatched:
            notices += self.unread_changes(scopes)
        # Each root's answer in its own order, merged by the order's keys but the rank (one
        # index's PageRank says nothing of another's): sorted by fewer keys, two roots put
        # `style`, a variable, above rich's class `Style` (the exact case and the kind were lost).
        asked = symbols.spelled_as_indexed(query.strip())  # as each root's search read it
        found = list(heapq.merge(*per_root, key=lambda pair: _symbol_order(asked, pair[1])))
        for root in {id(root): root for root, _ in found[:limit]}.values():
            with self.reading(root) as db:  # of the symbols answered, not the probe's one more
                shown = [hit.file_path for one, hit in found[:limit] if one is root]
                stale += [
                    self.roots.out(root, changed)
                    for changed in gateway.changed_since_indexed(db, root.path, shown)
                ]
        if stale:
            notices.append(STALE_LINES_NOTE.format(_listed(stale)))
        truncated = truncated or len(found) > limit
        results = [
            Symbol(**_fields(hit, file_path=self.roots.out(root, hit.file_path)))
            for root, hit in found[:limit]
        ]
        more = max(len(found) - limit, 1 if truncated else 0)
        return SymbolSearch(
            notices=notices,
            query=query,
            results=results,
            truncated=truncated,
            more=more,
            more_exact=not truncated,
        )

    def find_references(
        self, name: str, path: str | None, limit: int, language: str | None
    ) -> ReferenceSearch:
        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        found: list[Reference] = []
        truncated = False
        looked_up = name
        unmatched = path is not None
        stale: list[str] = []
        for root, path_filter in scopes:
            with self.reading(root) as db:
                uses = references.find_references(db, root.path, name, path_filter, language, limit)
                unmatched = unmatched and not uses.results and _names_nothing(db, path_filter)
                changed = gateway.changed_since_indexed(
                    db, root.path, (use.file_path for use in uses.results)
                )
            stale.extend(self.roots.out(root, changed_path) for changed_path in changed)
            looked_up = uses.name
            notices.extend(note for note in uses.notes if note not in notices)
            truncated = truncated or uses.truncated
            found.extend(
                Reference(**_fields(use, file_path=self.roots.out(root, use.file_path)))
                for use in uses.results
            )
        if self.roots.multi:
            found.sort(key=lambda use: (use.file_path, use.line_number))
        truncated = truncated or len(found) > limit
        if unmatched:
            notices.append(f"no indexed file matches path {path!r}")
        elif not found:
            notices += self.unread_changes(scopes)
        if stale:
            notices.append(STALE_LINES_NOTE.format(_listed(stale)))
        return ReferenceSearch(
            notices=notices, name=looked_up, results=found[:limit], truncated=truncated
        )

    def get_symbol_content(
        self,
        name: str,
        file: str | None,
        max_lines: int | None,
        context: bool,
        nth: int | None = None,
    ) -> SymbolSource:
        scopes = self.roots.scope(file)
        notices = self.ready([root for root, _ in scopes])
        every_scope, asked = scopes, nth
        if nth is not None and len(scopes) > 1:
            scopes, nth = self._nth_root(scopes, name, nth)
        missing: list[symbols.SymbolNotFound] = []
        for root, file_filter in scopes:
            try:
                content = self._symbol_content(root, name, file_filter, max_lines, context, nth)
            except symbols.SymbolNotFound as error:
                missing.append(error)
                continue
            if len(every_scope) > 1:  # the warning over every root, or none if there was none
                alone = None if content.warning else root  # and no other root has the name
                warning, others = self._roots_warning(every_scope, name, asked, alone)
                if warning is not None:  # and its list, each path with its root's label
                    content = dataclasses.replace(content, warning=warning, others=others)
            fields = _fields(content)
            fields.update(
                file_path=self.roots.out(root, content.file_path),
                truncated=content.truncated_lines > 0,
                more_lines=content.truncated_lines,
                more_leading_lines=content.truncated_leading_lines,
                others=content.others[:MAX_LISTED],
            )
            fields.pop("truncated_lines")
            fields.pop("truncated_leading_lines")
            # A 1.3 MB one-line constant came back whole (read_file cuts such lines)
            fields["content"], cut = _cut_long_lines(fields["content"])
            fields["leading"], cut_leading = _cut_long_lines(fields.get("leading"))
            if cut + cut_leading:
                notices.append(_cut_notice(cut + cut_leading))
            return SymbolSource(notices=notices, **fields)
        if len(missing) > 1:  # no root has it: the suggestions of every root, not the first's
            raise _not_in_any(name, file, missing)
        raise missing[0]

    def _matches(
        self, scopes: list[tuple[Root, str | None]], name: str
    ) -> Iterator[tuple[Root, str | None, list[symbols.SymbolRow]]]:
        """Each root that has `name`, with its filter and its matches, best first."""
        for root, file_filter in scopes:
            with self.reading(root) as db:
                try:
                    match = symbols.find_symbol(db, name, file_filter)
                except symbols.SymbolNotFound:
                    continue
            yield root, file_filter, [match.best, *match.others]

    def _roots_warning(
        self,
        scopes: list[tuple[Root, str | None]],
        name: str,
        nth: int | None,
        only_if_elsewhere: Root | None = None,
    ) -> tuple[str | None, list[str]]:
        """The several-matches warning over every root, numbered as nth counts them (one root
        after another) with each path as the tools give it (`lighttpd/src/server.c`): a root's
        own warning listed its matches alone, without its label (the MCP agent user's finding);
        and the matches not shown, as the answer's `others` lists them. With
        `only_if_elsewhere`: none unless another root than that one has a match."""
        rows = [(root, row) for root, _, found in self._matches(scopes, name) for row in found]
        if len(rows) < 2 or (
            only_if_elsewhere is not None and all(root is only_if_elsewhere for root, _ in rows)
        ):
            return None, []
        shown = nth or 1
        described = [
            f"{row.kind} {row.qualified_name} {self.roots.out(root, row.file_path)}:{row.start_line}"
            for root, row in rows
        ]
        listed = [f"[{number}] {text}" for number, text in enumerate(described, 1)]
        others = [text for number, text in enumerate(listed, 1) if number != shown]
        roots = len({id(root) for root, _ in rows})
        warning = snippets.matches_warning(
            name,
            listed[shown - 1],
            others,
            "nth=N as numbered here, file or a qualified name",
            f" in {roots} roots" if roots > 1 else "",
        )
        return warning, [text for number, text in enumerate(described, 1) if number != shown]

    def _nth_root(
        self, scopes: list[tuple[Root, str | None]], name: str, nth: int
    ) -> tuple[list[tuple[Root, str | None]], int]:
        """The root that holds the `nth` match when the roots' matches are counted one root
        after another (the first root's best is the answer without nth), and its own nth."""
        counted = 0
        for root, file_filter, found in self._matches(scopes, name):
            here = len(found)
            if nth <= counted + here:
                return [(root, file_filter)], nth - counted
            counted += here
        if not counted:
            return scopes, nth  # no root has the name: the loop's SymbolNotFound says so
        raise symbols.nth_out_of_range(nth, counted, name, f" in {len(scopes)} roots")

    def _symbol_content(
        self,
        root: Root,
        name: str,
        file: str | None,
        max_lines: int | None,
        context: bool,
        nth: int | None,
    ) -> snippets.SymbolContent:
        limit = max_lines or DEFAULT_MAX_LINES
        reread = None
        for attempt in range(2):
            with self.reading(root) as db:
                best = symbols.find_symbol(db, name, file, nth).best
                readable(root.path, best.file_path)  # before reading: never outside the root
                try:
                    return snippets.symbol_content(db, name, file, limit, context, root.path, nth)
                except symbols.FileChanged as changed:
                    if attempt or not self.refreshers[root.label].enabled:
                        raise
                    reread = changed.path
            self.refresh_now(root, reread)  # changed since the watcher last looked: catch up
        raise AssertionError("unreachable")

    # --- the repo map ------------------------------------------------------------------------

    def get_repo_map(
        self,
        max_tokens: int,
        focus_files: list[str] | None,
        mentions: list[str] | None,
        path: str | None = None,
        exclude: list[str] | None = None,
    ) -> RepoMapAnswer:
        focus: dict[str, list[str]] = {}
        for raw in focus_files or ():
            root, inside = self.roots.locate(raw)
            focus.setdefault(root.label, []).append(inside.rel_path)
        targets = [r for r in self.roots.all if r.label in focus] if focus else self.roots.all
        # The path filter picks roots as search filters do; each exclude applies where it names.
        scoped = dict(self.roots.scope(path)) if path is not None else None
        if scoped is not None:
            targets = [r for r in targets if r in scoped]
        excluded: dict[str, list[str]] = {}
        for raw in exclude or ():
            for root, rest in self.roots.scope(raw):
                if rest is None:  # the whole root
                    targets = [r for r in targets if r != root]
                else:
                    excluded.setdefault(root.label, []).append(rest)
        if not targets:
            raise BadArgument(
                "nothing to map: the focus files, path and exclude filters leave no root"
            )
        notices = self.ready(targets)
        if scoped is not None and len(targets) > 1:  # `*.rs` in every root: those it matches
            targets = [r for r in targets if self._filter_matches(r, scoped[r])] or targets[:1]
        share = max_tokens // len(targets)
        if share < maps.MIN_TOKENS:
            raise BadArgument(
                f"max_tokens must be at least {maps.MIN_TOKENS * len(targets)} for "
                f"{len(targets)} roots"
            )
        parts = [
            self._root_map(
                root,
                share,
                focus.get(root.label, []),
                mentions or [],
                scoped.get(root) if scoped is not None else None,
                excluded.get(root.label, []),
            )
            for root in targets
        ]
        unmatched = set.intersection(*(set(part.unmatched_mentions) for part in parts))
        return RepoMapAnswer(
            notices=notices,
            text="".join(part.text for part in parts),
            tokens=sum(part.tokens for part in parts),
            budget=max_tokens,
            files=[path for part in parts for path in part.files],
            truncated=any(part.truncated for part in parts),
            omitted_files=sum(part.omitted_files for part in parts),
            omitted_symbols=sum(part.omitted_symbols for part in parts),
            unmatched_mentions=[m for m in mentions or () if m in unmatched],
        )

    def _filter_matches(self, root: Root, path: str | None) -> bool:
        """Whether a path filter keeps any indexed file of `root`."""
        with self.reading(root) as db:
            return store.filtered_ids(db, path) != []

    def _root_map(
        self,
        root: Root,
        budget: int,
        focus: list[str],
        mentions: list[str],
        path: str | None,
        exclude: list[str],
    ) -> RepoMapAnswer:
        tokens = budget
        for _ in range(MAP_PREFIX_RETRIES):
            with self.reading(root) as db:
                result = maps.repo_map(db, tokens, focus, mentions, path, exclude)
            text, used = result.text, result.tokens
            if not self.roots.multi:
                break
            # Several roots: path lines (`path:`) get the root's label in front, and the
            # longer text is estimated again.
            path_lines = {f"{f.file_path}:" for f in result.files}
            text = "".join(
                f"{root.label}/{line}" if line.rstrip("\n") in path_lines else line
                for line in text.splitlines(keepends=True)
            )
            used = render.count_tokens(text)
            if used <= budget or tokens <= maps.MIN_TOKENS:
                break
            tokens = max(maps.MIN_TOKENS, tokens - (used - budget))
        return RepoMapAnswer(
            text=text,
            tokens=used,
            budget=budget,
            files=[self.roots.out(root, f.file_path) for f in result.files],
            truncated=result.omitted_files > 0 or result.omitted_symbols > 0,
            omitted_files=result.omitted_files,
            omitted_symbols=result.omitted_symbols,
            unmatched_mentions=result.unmatched_mentions,
        )

    # --- code by what it does ---------------------------------------------------------------

    def search_code(
        self,
        query: str,
        mode: str | None,
        path: str | None,
        language: str | None,
        kind: str | None,
        limit: int,
        timings: dict[str, float] | None = None,
    ) -> CodeSearchAnswer:
        """`timings`, when given, receives each stage's milliseconds, summed over the roots."""
        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        found: list[tuple[Root, code_search.CodeHit]] = []
        truncated = False
        model_id: str | None = None
        coverage: float | None = None
        word_matches: int | None = None
        changed: list[str] = []
        used = mode
        embedding_said = False
        unmatched = path is not None
        best_cosine: float | None = None
        for root, path_filter in scopes:
            asked = functools.partial(
                self._search_root, root, query, path=path_filter, language=language, kind=kind,
                limit=limit,
            )  # fmt: skip
            try:
                result = asked(mode)
            except (code_search.NoEmbeddings, EmbeddingModelMismatch):
                # This server's embedder is making the vectors (or replacing another model's):
                # said so, not the CLI's fix it runs already; the default answers by words.
                under_way = self.embedding_under_way(root)
                if under_way is None:
                    raise
                if mode is not None:
                    raise code_search.NoEmbeddings(
                        f"{under_way}: ask again shortly, or use mode lexical"
                    ) from None
                result = asked("lexical")
            if mode is None and result.mode == "lexical":
                # the default fell back to words (here, or inside the search when the embedder
                # had dropped another model's vectors already): say why, if it is this server's
                under_way = self.embedding_under_way(root)
                if under_way is not None:
                    notices.append(f"{under_way}: this answer is by words alone")
                    embedding_said = True
            truncated = truncated or result.truncated
            used = used or result.mode
            if result.best_cosine is not None:
                best_cosine = max(best_cosine or 0.0, result.best_cosine)
            if unmatched and not result.hits:
                with self.reading(root) as db:
                    unmatched = _names_nothing(db, path_filter)
            else:
                unmatched = False
            if timings is not None:
                for stage, ms in result.timings_ms.items():
                    timings[stage] = timings.get(stage, 0.0) + ms
            # several roots: each one's scores end at its own best (1.0); weighed by how well
            # that best fits the question, comparable between indexes (code_search.strength)
            weight = 1.0 if result.strength is None else result.strength
            found.extend((root, dataclasses.replace(hit, score=hit.score * weight))
                         for hit in result.hits)  # fmt: skip
            model_id = model_id or result.model_id
            if result.word_matches is not None:
                word_matches = (word_matches or 0) + result.word_matches
            changed += [self.roots.out(root, path) for path in result.changed_files]
            if result.coverage is not None:
                coverage = result.coverage if coverage is None else min(coverage, result.coverage)
        if self.roots.multi:
            found.sort(key=lambda pair: (-pair[1].score, pair[1].path, pair[1].start_line))
        truncated = truncated or len(found) > limit
        if coverage is not None and coverage < 1:
            notices.append(
                f"{percent(coverage)} of the code has embeddings so far: semantic ranking covers only "
                "that part; the rest is being embedded"
            )
        if word_matches == 0 and found:
            notices.append(code_search.NO_WORDS_NOTE)
        if found and (common := code_search.common_words_only(query)):
            notices.append(code_search.COMMON_WORDS_NOTE.format(", ".join(common)))
        if changed:
            notices.append(code_search.CHANGED_NOTE.format(", ".join(changed)))
        if unmatched:
            notices.append(f"no indexed file matches path {path!r}")
        elif not found and code_search.query_terms(query):
            filtered = any(given is not None for given in (path, language, kind))
            notices.append(code_search.nothing_found_note(used or "lexical", best_cosine, filtered))
        if mode is None and used == "lexical" and found and not embedding_said:
            # no vectors: the default fell back to words
            notices.append(code_search.NO_VECTORS_NOTE)
        return CodeSearchAnswer(
            notices=notices,
            query=query,
            mode=used or "lexical",
            results=[
                CodeMatch(
                    file_path=self.roots.out(root, hit.path),
                    line_number=hit.start_line,
                    end_line=hit.end_line,
                    kind=hit.kind,
                    name=hit.name,
                    language=hit.language,
                    score=hit.score,
                    snippet=hit.snippet,
                    match_lines=[MatchedLine(line=m.line, text=m.text) for m in hit.match_lines],
                )
                for root, hit in found[:limit]
            ],
            truncated=truncated,
            model_id=model_id,
            coverage=coverage,
            word_matches=word_matches,
            changed_files=changed,
        )

    def _search_root(
        self,
        root: Root,
        query: str,
        mode: str | None,
        *,
        path: str | None,
        language: str | None,
        kind: str | None,
        limit: int,
    ) -> code_search.CodeResults:
        with self.reading(root) as db:
            return code_search.search_code(
                db,
                query,
                mode=mode,
                path=path,
                language=language,
                kind=kind,
                limit=limit,
                log=root.settings.search_log,
                compare=self.roots.multi,
            )

    def embedding_under_way(self, root: Root) -> str | None:
        """What this server's embedder is doing for `root`, if it is running."""
        state = self.embedders[root.label].state()
        if not state["running"]:
            return None
        made = f"{state['embedded']} of {state['to_embed']}" if state["to_embed"] else "starting"
        return f"the embeddings are being made in the background ({made})"

    # --- records (data files, commits) -------------------------------------------------------

    def search_data(
        self,
        query: str,
        path: str | None,
        key: str | None,
        field: str | None,
        ranked: bool,
        limit: int,
    ) -> DataSearchAnswer:
        from repomap.search import records

        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        found: list[tuple[Root, records.DataHit]] = []
        truncated = False
        for root, path_filter in scopes:
            with self.reading(root) as db:
                result = records.search_data(
                    db, query, path=path_filter, key=key, field=field, limit=limit, ranked=ranked
                )
            found.extend((root, hit) for hit in result.results)
            truncated = truncated or result.truncated
        if self.roots.multi:
            order = {id(hit): self.roots.out(root, hit.file_path) for root, hit in found}
            found.sort(key=lambda pair: (-(pair[1].score or 0), order[id(pair[1])]))
        truncated = truncated or len(found) > limit
        results = []
        for root, hit in found[:limit]:
            shown = self.roots.out(root, hit.file_path)
            results.append(DataRecord(**_fields(hit, file_path=shown, id=f"{shown}#{hit.key}")))
        return DataSearchAnswer(
            notices=notices,
            query=query.strip(),
            mode="ranked" if ranked else "literal",
            results=results,
            count=len(results),
            truncated=truncated,
        )

    def search_commits(
        self,
        query: str,
        author: str | None,
        since: str | None,
        until: str | None,
        path: str | None,
        field: str | None,
        oldest_first: bool,
        ranked: bool,
        limit: int,
    ) -> CommitSearchAnswer:
        from repomap.search import records

        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        found: list[records.CommitHit] = []
        truncated = False
        for root, path_filter in scopes:
            if self.refreshers[root.label].enabled:  # commits change no file the watcher sees
                notices.extend(pipeline.refresh_history(root.settings))
            with self.reading(root) as db:
                result = records.search_commits(
                    db, query, author=author, since=since, until=until, path=path_filter,
                    field=field, limit=limit, oldest_first=oldest_first, ranked=ranked,
                )  # fmt: skip
                if not result.results and store.indexed_commits(db) == 0:
                    # An empty answer read as "no such commit" (an MCP user's report).
                    why = history.why_no_commits(root.settings)
                    notices.append(f"the index of {root.label} holds no commits: {why}")
            found.extend(result.results)
            truncated = truncated or result.truncated
        if self.roots.multi:
            if ranked:
                found.sort(key=lambda hit: (-(hit.score or 0), hit.id))
            else:
                found.sort(key=lambda hit: hit.id)
                found.sort(key=lambda hit: hit.commit_time, reverse=not oldest_first)
        truncated = truncated or len(found) > limit
        results = [CommitRecord(**_fields(hit)) for hit in found[:limit]]
        return CommitSearchAnswer(
            notices=notices,
            query=query.strip(),
            mode="ranked" if ranked else "literal",
            results=results,
            count=len(results),
            truncated=truncated,
        )

    # --- docs --------------------------------------------------------------------------------

    def search_docs(self, query: str, limit: int, path: str | None = None) -> DocSearchAnswer:
        from repomap.search import text as text_query

        check_limit(limit)  # the asked limit, not the probe's (limit 1000 was refused as 2000)
        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        probe = min(_probe(limit), MAX_LIMIT)
        found: list[tuple[Root, doc_search.DocHit]] = []
        ignored: list[str] = []
        exact = True
        stale: list[str] = []
        for root, path_filter in scopes:
            with self.reading(root) as db:
                result = doc_search.search_docs(db, root.path, query, probe, path_filter)
            exact = exact and len(result.hits) < probe
            found.extend((root, hit) for hit in result.hits)
            stale.extend(self.roots.out(root, path) for path in result.stale_files)
            ignored.extend(w for w in getattr(result, "ignored", ()) if w not in ignored)
            notices.extend(note for note in result.notes if note not in notices)
        if found:  # a root's files holding each word alone: another root found sections
            notices = [note for note in notices if not text_query.is_alone_note(note)]
        if self.roots.multi:
            found.sort(key=lambda pair: -pair[1].score)
        more = max(0, len(found) - limit)
        if stale:
            notices.append(f"changed since indexing (line numbers left out): {_listed(stale)}")
        return DocSearchAnswer(
            notices=notices,
            query=query,
            results=[
                DocMatch(**_fields(hit, file=self.roots.out(root, hit.file)))
                for root, hit in found[:limit]
            ],
            truncated=more > 0 or (probe == limit and not exact),  # the cap: maybe more
            more=more,
            more_exact=exact,
            ignored=ignored,
        )

    def get_section(
        self, heading: str, file: str | None, max_lines: int | None, nth: int | None = None
    ) -> Section:
        scopes = self.roots.scope(file)
        notices = self.ready([root for root, _ in scopes])
        missing: list[RepomapError] = []
        for root, rel_file in scopes:
            try:
                with self.reading(root) as db:
                    view = section.show_section(
                        db, root.path, heading, rel_file, max_lines or DEFAULT_MAX_LINES, nth
                    )
            except section.HeadingNotFound as error:
                missing.append(error)
                continue
            readable(root.path, view.file)  # the file still lies inside the root
            matches = [
                HeadingRef(**_fields(m, file=self.roots.out(root, m.file))) for m in view.matches
            ]
            if view.ambiguous:
                notices.append(
                    f'{len(matches)} headings match "{view.query}"; showing the first. '
                    f"Pass nth= (1 to {len(matches)}) or file= to choose."
                )
            return Section(
                notices=notices,
                file=self.roots.out(root, view.file),
                heading=view.heading,
                level=view.level,
                start_line=view.start_line,
                end_line=view.end_line,
                content=view.content,
                truncated=view.more_lines > 0,
                more_lines=view.more_lines,
                matches=matches[:MAX_LISTED],
                more_matches=max(0, len(matches) - MAX_LISTED),
                nth=view.nth,
            )
        raise missing[0]

    # --- the gateway -------------------------------------------------------------------------

    def outline(self, path: str | None, level: int | None, limit: int) -> OutlineAnswer:
        scopes = self.roots.scope(path)
        notices = self.ready([root for root, _ in scopes])
        files: list[OutlineFile] = []
        changed: list[str] = []
        budget = limit
        more_entries = more_files = 0
        for root, rel in scopes:
            with self.reading(root) as db:
                result = gateway.outline(db, root.path, rel, level)
            changed.extend(self.roots.out(root, p) for p in result.changed)
            for item in result.files:
                if budget <= 0 and files:
                    more_files += 1
                    more_entries += len(item.entries)
                    continue
                shown = item.entries[: max(budget, 0)]
                more_entries += len(item.entries) - len(shown)
                budget -= len(shown)
                files.append(
                    OutlineFile(
                        path=self.roots.out(root, item.path), language=item.language, entries=shown
                    )
                )
        if changed:
            notices.append(
                f"{len(changed)} files changed since they were indexed; their outline may be "
                "out of date"
            )
        return OutlineAnswer(
            notices=notices,
            files=files,
            truncated=more_entries > 0 or more_files > 0,
            more_entries=more_entries,
            more_files=more_files,
            changed_files=changed[:MAX_LISTED],
        )

    def read_file(
        self, path: str, start_line: int | None, end_line: int | None, max_lines: int | None
    ) -> FileContent:
        root, inside = self.roots.locate(path)
        if start_line and end_line and end_line < start_line:
            raise BadArgument(f"end_line ({end_line}) is before start_line ({start_line})")
        checked = gateway.existing_file(root.path, inside.rel_path)
        if is_secret_file(checked.rel_path) or is_secret_file(checked.real_rel_path):
            raise BadArgument(
                f"{path} looks like a file that holds secrets (.env, keys, credentials); "
                "repomap never indexes or serves such files"
            )
        real = checked.path
        first = start_line or 1
        wanted = max_lines or DEFAULT_MAX_LINES
        if end_line is not None:
            wanted = min(wanted, end_line - first + 1)
        lines, total, cut_chars, binary = _read_window(real, first, wanted)
        if binary:
            raise BadArgument(
                f"{path} is a binary file ({real.stat().st_size} bytes); repomap reads text only"
            )
        if first > max(total, 1):
            raise BadArgument(f"start_line {first} is past the end of {path} ({total} lines)")
        last = first + len(lines) - 1
        notices = []
        if cut_chars:
            notices.append(_cut_notice(cut_chars))
        more = max(0, total - last)
        # Cut: fewer lines than asked for came back (max_lines, or the default cap); a range
        # returned whole is no truncation, though the file goes on (more_lines says how far).
        asked_last = total if end_line is None else min(end_line, total)
        return FileContent(
            notices=notices,
            path=self.roots.out(root, inside.rel_path),
            start_line=first,
            end_line=last,
            total_lines=total,
            content="".join(lines),
            truncated=last < asked_last,
            more_lines=more,
            next_start_line=last + 1 if more else None,
        )

    def list_sources(
        self, directory: str | None, depth: int | None, pattern: str | None, limit: int
    ) -> SourcesAnswer:
        if directory is not None or not self.roots.multi:
            if directory is None:
                root, rel = self.roots.all[0], None
            else:
                root, inside = self.roots.locate(directory)
                rel = inside.rel_path or None
            tree = gateway.sources(root.path, rel, depth, pattern, limit)
            entries = [
                dataclasses.replace(e, path=self.roots.out(root, e.path)) for e in tree.entries
            ]
            return SourcesAnswer(
                directory=self.roots.out(root, tree.directory),
                depth=tree.depth,
                entries=entries,
                total_files=tree.total_files,
                truncated=tree.more > 0,
                more=tree.more,
            )
        return self._list_roots(depth, pattern, limit)

    def _list_roots(self, depth: int | None, pattern: str | None, limit: int) -> SourcesAnswer:
        """Several roots and no directory: each root is a top-level directory."""
        entries: list[SourceEntry] = []
        total = 0
        for root in self.roots.all:
            inner = None if depth is None else depth - 1
            tree = gateway.sources(
                root.path, None, 1 if inner == 0 else inner, pattern, 1 if inner == 0 else limit
            )
            total += tree.total_files
            entries.append(
                SourceEntry(f"{root.label}/", root.label, "dir", 1, tree.total_files, inner != 0)
            )
            if inner != 0:
                entries.extend(
                    dataclasses.replace(e, path=self.roots.out(root, e.path), depth=e.depth + 1)
                    for e in tree.entries
                )
        more = max(0, len(entries) - limit)
        return SourcesAnswer(
            directory="",
            depth=depth or 2,
            entries=entries[:limit],
            total_files=total,
            truncated=more > 0,
            more=more,
        )

    def find_files(
        self, query: str, limit: int, ignore_case: bool, path: str | None = None
    ) -> FilesAnswer:
        scopes = [(root, query, path_filter) for root, path_filter in self.roots.scope(path)]
        if self.roots.multi and "/" in query:
            head, _, rest = query.partition("/")
            if head in self.roots.by_label and rest:
                chosen = self.roots.by_label[head]
                scopes = [(root, rest, f) for root, _, f in scopes if root is chosen]
        paths: list[str] = []
        total = 0
        by_folder = False
        for root, needle, path_filter in scopes:
            found = gateway.find_files(root.path, needle, limit, ignore_case, path_filter)
            total += found.total
            by_folder = by_folder or found.by_folder
            paths.extend(self.roots.out(root, p) for p in found.paths)
        paths.sort()
        shown = paths[:limit]
        return FilesAnswer(
            notices=[gateway.FOLDER_NOTE.format(query)] if by_folder else [],
            query=query,
            files=shown,
            total=total,
            truncated=total > len(shown),
            more=total - len(shown),
        )

    # --- status ------------------------------------------------------------------------------

    def embedding_model(self) -> str | None:
        """The model the served indexes' vectors were made with (the first root's that has
        vectors), None when none has any."""
        for root, _ in self.roots.scope(None):
            with self.reading(root) as db:
                if (model_id := store.embedding_model(db)) is not None:
                    return model_id
        return None

    def index_status(self) -> StatusAnswer:
        notices: list[str] = []
        statuses = []
        for root in self.roots.all:
            try:
                notices.extend(self.ready([root]))
            except RepomapError as error:
                statuses.append(self._status(root, str(error)))
                continue
            statuses.append(self._status(root, None))
        return StatusAnswer(notices=notices, roots=statuses)

    def _status(self, root: Root, error: str | None) -> RootStatus:
        settings = root.settings
        status = RootStatus(
            root=str(root.path),
            label=root.label,
            db_path=str(settings.db_path),
            exists=settings.db_path.exists(),
            schema_version=None,
            current_schema_version=store.SCHEMA_VERSION,
            refresh=dataclasses.asdict(self.refreshers[root.label].state()),
            embedding=self.embedders[root.label].state(),
            error=error,
        )
        if not status.exists:
            return status
        try:
            with store.reading(settings.db_path) as db:
                facts = index_status_facts(db, root.path, settings.index_skipped)
                size_limit = gateway.size_limit(db, root.path)
                chunks = db.scalar("SELECT count(*) FROM chunks") or 0
                # counted where they are: Milvus keeps them apart (the database's count was 0)
                vectors, refused = embedded_vectors(db, store.embedding_model(db))
            facts["embedding"] = {
                **status.embedding,
                "chunks": chunks,
                "vectors": vectors,
                "coverage": round(min(vectors / chunks, 1.0), 4) if chunks else None,
                **({"store_error": refused} if refused else {}),
            }
        except RepomapError as failure:
            status.error = str(failure)
            status.schema_version = _schema_of(settings.db_path)
            return status
        stale = [self.roots.out(root, p) for p in facts.pop("stale")]
        # named, not only counted: a 3 MB file left out made searches answer nothing, unsaid
        listed = facts.pop("unindexed")[:MAX_LISTED]
        facts["unindexed_paths"] = [self.roots.out(root, p) for p in listed]
        facts["unindexed_reasons"] = {
            self.roots.out(root, p): why
            for p in listed
            if (why := gateway.skipped_because(root.path / p, root.path, size_limit))
        }
        return status.model_copy(
            update={**facts, "stale_files": stale[:MAX_LISTED], "stale_count": len(stale)}
        )


# --- helpers ---------------------------------------------------------------------------------


def _embed(settings: Settings, stop: threading.Event, progress: Callable[[int, int], None]) -> None:
    pipeline.embed(settings, stop=stop, progress=progress)


def _probe(limit: int) -> int:
    """How many results to ask for to tell how many more there are (exactly, when fewer)."""
    return max(limit * 2, limit + 10)


def _not_in_any(
    name: str, file: str | None, missing: list[symbols.SymbolNotFound]
) -> symbols.SymbolNotFound:
    """One error for a name no root has, with the roots' suggestions taken in turn (the first
    root's alone suggested redis's `GeoShape::width` for rich's `Console.widht`)."""
    suggestions = list(
        dict.fromkeys(
            found
            for turn in itertools.zip_longest(*(error.suggestions for error in missing))
            for found in turn
            if found is not None
        )
    )[:5]
    unmatched = all(error.files_unmatched for error in missing)
    where = f" in files matching {file!r}" if file else ""
    where += symbols.UNMATCHED_FILES if unmatched else ""
    hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
    return symbols.SymbolNotFound(
        f"no symbol named {name.strip()!r} in {len(missing)} roots{where}{hint}",
        suggestions,
        unmatched,
    )


def _symbol_order(query: str, hit: symbols.SymbolHit) -> tuple[Any, ...]:
    """symbols.order_key() of a hit, its rank left out (each index ranks its own)."""
    return symbols.order_key(
        query, hit.name, hit.qualified_name, hit.kind, hit.is_definition, hit.ref_files, 0.0,
        hit.file_path, hit.line_number,
    )  # fmt: skip


def _names_nothing(db: Store, path_filter: str | None) -> bool:
    """Whether a root's share of a path filter names no indexed file (None: the whole root)."""
    return path_filter is not None and store.names_nothing(db, path_filter)


def _fields(record: Any, **changes: Any) -> dict[str, Any]:
    """A library record's fields as a dict, some replaced."""
    if hasattr(record, "_asdict"):  # the search path's records are NamedTuples (start-up time)
        values: dict[str, Any] = record._asdict()
    else:
        values = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    values.update(changes)
    return values


# A result's file changed on disk since it was indexed and this answer did not re-index it
# (a server told not to refresh, or an edit between the refresh and the read).
STALE_LINES_NOTE = "changed since indexing, so their line numbers may be off: {}"
UNREAD_CHANGES_NOTE = (
    "nothing found in the index as it was made; these files changed since and were not read"
    " again (refresh is off), so what they hold now was not searched: {}"
)


def _listed(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def readable(root: Path, rel_path: str) -> Path:
    """The file at `rel_path`, checked to be a regular file inside ROOT (links resolved)."""
    inside = gateway.resolve_path(root, rel_path)
    try:
        mode = inside.path.stat().st_mode
    except OSError:
        raise PathNotFound(f"{rel_path} no longer exists; it may have just been removed") from None
    if not stat.S_ISREG(mode):
        raise BadArgument(f"{rel_path} is not a regular file")
    return inside.path


def _read_window(path: Path, first: int, count: int) -> tuple[list[str], int, int, bool]:
    """Lines first..first+count-1 as text, the file's line count, lines cut, binary or not."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise BadArgument(f"{path.name} is not a regular file")
    if info.st_size > MAX_READ_BYTES:
        raise BadArgument(
            f"{path.name} is {info.st_size} bytes; read_file reads files up to {MAX_READ_BYTES} "
            "bytes (search it with grep instead)"
        )
    lines: list[str] = []
    cut = 0
    total = 0
    with open(path, "rb") as file:
        head = file.read(BINARY_SNIFF)
        if b"\0" in head:
            return [], 0, 0, True
        file.seek(0)
        for number, raw in enumerate(file, 1):
            total = number
            if number < first or len(lines) >= count:
                continue
            text = textfile.text(raw, head)  # as the index reads it: a PEP 263 line too
            if len(text.rstrip("\r\n")) > MAX_LINE_CHARS:
                cut += 1
                text = _cut_line(text.rstrip("\r\n")) + "\n"
            lines.append(text)
    return lines, total, cut, False


def _cut_line(text: str) -> str:
    """A line of more than MAX_LINE_CHARS characters, cut there and saying how much more."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]}… ({len(text) - MAX_LINE_CHARS} more characters)"


def _cut_notice(count: int) -> str:
    lines = "1 line" if count == 1 else f"{count} lines"
    return f"{lines} longer than {MAX_LINE_CHARS} characters cut"


def _cut_long_lines(text: str | None) -> tuple[str | None, int]:
    """`text` with each line cut by _cut_line, and how many were."""
    if text is None or len(text) <= MAX_LINE_CHARS:
        return text, 0
    lines = text.split("\n")
    cut = [_cut_line(line) for line in lines]
    return "\n".join(cut), sum(len(line) > MAX_LINE_CHARS for line in lines)


def _schema_of(db_path: Path) -> int | None:
    try:
        with open(db_path, "rb") as file:
            header = file.read(100)
    except OSError:
        return None
    if header[:16] != store.SQLITE_HEADER:
        return None
    return int.from_bytes(header[60:64], "big")  # SQLite's user_version lives at offset 60


def index_status_facts(
    db: Store, root: Path, skip_dirs: frozenset[Path] = frozenset()
) -> dict[str, Any]:
    """Counts, schema, indexed_at, and the files changed on disk since they were indexed."""
    from repomap.index.discover import walk
    from repomap.languages import data_format, doc_format, language_of

    counts = store.counts(db)
    docs = store.indexed_docs(db)
    indexed = {
        path: (row.size, row.mtime_ns)
        for path, row in (
            *store.indexed_files(db).items(),
            *docs.items(),
            *store.indexed_data(db).items(),
        )
    }
    walked = walk(root, skip_dirs)
    on_disk = {f.rel_path: (f.size, f.mtime_ns) for f in walked.files}
    stale = sorted(path for path, state in indexed.items() if on_disk.get(path) != state)
    # Files read as code, docs or data that the index lacks (too large, unreadable, not UTF-8):
    # not ignore files, nor a `.txt` the index never reads as prose (CMakeLists.txt)
    unindexed = sorted(
        path
        for path in on_disk
        if path not in indexed and (language_of(path) or doc_format(path) or data_format(path))
    )
    return {
        "schema_version": db.scalar("PRAGMA user_version"),
        "files": counts.pop("files"),
        "docs": len(docs),
        "symbols": counts.pop("symbols"),
        "references": counts.pop("references"),
        "elements": {k: counts.get(k, 0) for k in ("comment", "docstring", "string_literal")},
        "indexed_at": store.get_meta(db, "indexed_at"),
        "stale": stale,
        "unindexed_files": len(unindexed),
        "unindexed": unindexed,
    }
