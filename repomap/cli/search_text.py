"""`repomap search-text`'s body and the error lines every command prints, without click.

Both ways into search-text run `run()` below: click's command (repomap/cli/main.py) and the
fast path (repomap/cli/fastpath.py), which parses the same options from a table generated
from the click definition. So their output, messages, exit codes and search log are the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from repomap.cli import outcome

# search-text's --type, in the order --help lists them: repomap.search.text's ELEMENT_TYPES,
# which is not imported before a search runs (a test checks they are the same)
ELEMENT_TYPE_CHOICES = ("comment", "docstring", "string_literal", "all")
DEFAULT_LIMIT = 20
INTERRUPTED = "interrupted; the index keeps every file written so far"
TERMINATED = "terminated; the index keeps every file written so far"

Echo = Callable[..., None]


def one_line(message: str) -> str:
    """An error on one line: the user's text inside it may hold line breaks or terminal
    escapes, shown escaped (`\\n`, `\\x1b`) so they cannot forge more output."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def error_line(message: str) -> str:
    """The line the CLI prints for an error, on stderr."""
    return f"error: {one_line(message)}"


def undecodable(text: str) -> bool:
    """An argument whose argv bytes were not UTF-8 (Python hands them over as surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def run(
    echo: Echo,
    query: str,
    element_type: str,
    limit: int,
    path: str | None,
    language: str | None,
    literal: bool,
    ignore_case: bool,
    markers: bool,
    no_refresh: bool,
    as_json: bool,
    absolute: bool,
    db_path: Path | None,
    root: Path | None,
) -> int:
    """Search comments, docstrings and string literals; print JSON with `echo`, or rich text.
    The exit status: 0 found, 1 nothing found."""
    from repomap import store
    from repomap.cli import refresh
    from repomap.search.text import search_text
    from repomap.store import reading

    settings = refresh.for_reading(root, db_path, no_refresh, echo)
    with reading(settings.db_path) as db:
        result = search_text(
            db, query, element_type, limit, path, language,
            "literal" if literal else "fts", ignore_case, log=settings.search_log,
        )  # fmt: skip
        if absolute:
            from repomap.cli.shown import Shown
            from repomap.store import indexed_root

            shown = Shown(indexed_root(db, settings.root), absolute)
            hits = tuple(hit._replace(file_path=shown(hit.file_path)) for hit in result.hits)
            result = result._replace(hits=hits)
        unmatched = path is not None and not result.hits and store.names_nothing(db, path)
        no_language = (
            language is not None and not result.hits and store.holds_no_language(db, language)
        )
    code = outcome.found(len(result.hits))  # before writing: a closed stderr keeps it
    filter_notes = outcome.filter_notes(path, language, unmatched, no_language)
    if as_json:
        data = result.as_dict()
        data["notes"] = [*data.get("notes", ()), *filter_notes]
        truncated = not result.total_exact or result.total > len(result.hits)
        answer = outcome.envelope(data.pop("results"), truncated, **data)
        echo(json.dumps(answer, ensure_ascii=False, indent=2))
    else:
        from repomap.cli.render_search import print_search  # rich: for people only

        print_search(result, markers)
        for note in filter_notes:
            echo(f"note: {note}", err=True)
    return code
