"""`repomap search`: find code by what it does (repomap/search/code.py)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from repomap.shares import percent

if TYPE_CHECKING:
    from repomap.config import Settings
    from repomap.search.code import CodeResults

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
    help="Only this language (python, rust, c, cpp), docs format (markdown, text) or data "
    "format (csv, tsv, json, jsonl, toml, yaml).",
)  # fmt: skip
@click.option(
    "--kind",
    help="Only these kinds, comma-separated: class, enum, function, impl, macro, method, "
    "struct, trait, type (an alias outside a record), union, module (a file's code outside "
    "definitions), section (docs), data (a data file's records), commit.",
)
@limit_option(10)
@no_refresh_option
@json_option
@absolute_option
@root_option
@db_option
def search(
    query: str,
    mode: str | None,
    path: str | None,
    language: str | None,
    kind: str | None,
    limit: int,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    root: Path | None,
    db_path: Path | None,
) -> int:
    """Find code by what it does: ask in words ("where is the retry delay computed?").

    Ranks definitions (functions, methods, classes...), files' module-level code, docs
    sections, data files' records (kind `data`) and commits. Use search-text for exact comments,
    strings and messages, symbols for names, search-data for exact values in data files.
    Exit status: 0 found, 1 nothing found, 2 error.
    """
    from repomap import store
    from repomap.serve import handoff
    from repomap.store import reading

    began: list[float] = []  # when the question's embedding started, if it did early

    def start_model(settings: Settings) -> None:
        if mode != "lexical" and query.strip():
            began.append(time.perf_counter())
            _embed_soon(settings.db_path, query)

    settings = refresh.for_reading(
        root, db_path, no_refresh, click.echo, start_model, embeds=mode != "lexical"
    )
    # Imported after the model started loading in another thread (numpy is loaded by then).
    from repomap.search.code import search_code

    with reading(settings.db_path) as db:
        # A running `repomap serve` has the model and the vectors loaded: ask it, when words
        # alone would not do (lexical is as fast here as a round trip).
        served = None
        if mode != "lexical" and (url := handoff.server_for(settings.db_path)):
            served = _from_server(url, query, mode, path, language, kind, limit)
        result = served or search_code(
            db, query, mode=mode, path=path, language=language, kind=kind,
            limit=limit, quick_start=True, log=settings.search_log,
            started=began[0] if began else None,
        )  # fmt: skip
        shown = Shown(store.indexed_root(db, settings.root), absolute)
        unmatched = path is not None and not result.hits and store.names_nothing(db, path)
        no_language = (
            language is not None and not result.hits and store.holds_no_language(db, language)
        )
    result = replace(result, hits=[replace(hit, path=shown(hit.path)) for hit in result.hits])
    code = outcome.found(len(result.hits))  # before writing: a closed stderr keeps it
    notes = _notes(result, query, mode, path, language, unmatched, no_language, kind)
    from repomap.search.code import NOTHING_FOUND, NOTHING_FOUND_FILTERED

    if as_json:
        data = result.as_dict()
        del data["count"]  # the envelope's, first
        print_json(
            outcome.envelope(data.pop("results"), data.pop("truncated"), **data, notes=notes)
        )
    else:
        for hit in result.hits:
            lines = f":{hit.start_line}-{hit.end_line}" if hit.start_line else ""  # a commit: none
            click.echo(f"{hit.path}{lines}  {hit.kind} {hit.name}  ({hit.score:.2f})")
            if hit.snippet:
                click.echo(f"    {hit.snippet}")
            for matched in hit.match_lines:
                click.echo(f"    {matched.line}: {matched.text}")
        why = [
            note
            for note in notes
            if not result.hits and note.startswith((NOTHING_FOUND, NOTHING_FOUND_FILTERED))
        ]
        if not result.hits:
            click.echo(
                f"nothing matches {query!r}" + "".join(f": {note}" for note in why), err=True
            )
        for note in notes:
            if note not in why:
                click.echo(f"note: {note}", err=True)
    return code


def _notes(result: Any, query: str, mode: str | None, path: str | None, language: str | None,
           unmatched: bool, no_language: bool, kind: str | None = None) -> list[str]:  # fmt: skip
    """What the answer does not say itself, one line each: on stderr after the results, or the
    JSON envelope's `notes`."""
    from repomap.search.code import (
        CHANGED_NOTE,
        COMMON_WORDS_NOTE,
        NO_VECTORS_NOTE,
        NO_WORDS_NOTE,
        common_words_only,
        nothing_found_note,
        query_terms,
    )

    notes = []
    if mode is None and result.mode == "lexical" and result.hits:
        notes.append(NO_VECTORS_NOTE)
    if result.word_matches == 0 and result.hits:
        notes.append(NO_WORDS_NOTE)
    if result.hits and (common := common_words_only(query)):
        notes.append(COMMON_WORDS_NOTE.format(", ".join(common)))
    if result.changed_files:
        notes.append(CHANGED_NOTE.format(", ".join(result.changed_files)))
    if result.coverage is not None and result.coverage < 1:
        notes.append(
            f"{percent(result.coverage)} of chunks have embeddings; run `repomap index` to finish them"
        )
    if not result.hits and not query_terms(query):
        notes.append("the query holds no word (punctuation and symbols are not searched)")
    elif not result.hits and not unmatched and not no_language:
        filtered = any(given is not None for given in (path, language, kind))
        notes.append(nothing_found_note(result.mode, result.best_cosine, filtered))  # one line
    return notes + outcome.filter_notes(path, language, unmatched, no_language)


def _embed_soon(db_path: Path, query: str) -> None:
    """Start embedding the question in another thread (embed.model.embed_soon) when this
    search will: the index has vectors made by a model of this package, and no running server
    answers for it. The model's load and first run (~0.25 s) then overlap the search's imports,
    the check of the index's files and the vectors' read, instead of following them."""
    from repomap import store
    from repomap.embed import model
    from repomap.errors import RepomapError
    from repomap.serve import handoff

    if handoff.server_for(db_path):
        return
    try:
        with store.reading(db_path) as db:
            if not store.has_vectors(db):
                return
            model_id = model.stored_or_default(store.embedding_model(db))
    except RepomapError:
        return  # the search's own read says what is wrong
    window = model.window_of(model_id)
    if window is not None:
        model.embed_soon(window, query)


def _from_server(
    url: str,
    query: str,
    mode: str | None,
    path: str | None,
    language: str | None,
    kind: str | None,
    limit: int,
) -> CodeResults | None:
    """The answer of the server at `url` as search_code gives it, or None (then the CLI
    answers in process: a server that fails or refuses changes nothing but the speed)."""
    from repomap.search.code import CodeHit, CodeResults
    from repomap.search.match_lines import MatchLine
    from repomap.serve import handoff

    request: dict[str, Any] = {"q": query, "topK": limit}
    for name, value in (("mode", mode), ("pathPrefix", path), ("lang", language), ("kind", kind)):
        if value is not None:
            request[name] = value
    answer = handoff.ask(url, "/api/search", request)
    if answer is None:
        return None
    meta = answer.get("meta") or {}
    hits = [
        CodeHit(
            hit["file_path"],
            hit["line_number"],
            hit["end_line"],
            hit["kind"],
            hit["name"],
            hit["language"],
            hit["score"],
            hit["snippet"],
            match_lines=tuple(MatchLine(m["line"], m["text"]) for m in hit["match_lines"]),
        )  # fmt: skip
        for hit in answer["results"]
    ]
    timings = {stage: float(ms) for stage, ms in (meta.get("timingsMs") or {}).items()}
    return CodeResults(
        answer["q"], answer["mode"], hits, bool(answer["truncated"]), timings,
        meta.get("modelId"), meta.get("coverage"), server=url,
        word_matches=meta.get("wordMatches"),
        changed_files=list(meta.get("changedFiles") or []),
    )  # fmt: skip
