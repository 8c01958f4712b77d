"""What the click CLI (cli.py) and its fast path (fastcli.py) share: one-line errors, the argv
check, and the `search-text` command itself.

Imports neither click nor rich (rich only to print results for a person), because the fast
path exists to start a search without them. Output goes through an `echo(text, err=False)`
the caller passes: click.echo in cli.py, a plain write in fastcli.py, which only takes the
cases where the two write the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

Echo = Callable[..., None]  # echo(text, err=False): a line to stdout, or to stderr

# --type, in the order --help lists them
ELEMENT_TYPE_CHOICES = ("comment", "docstring", "string_literal", "all")
MAX_LIMIT = 1000  # --limit: repomap.query.MAX_LIMIT, not imported so cli.py starts without query.py
DEFAULT_LIMIT = 20
INTERRUPTED = "interrupted; the index keeps every file written so far"


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


def search_text(
    query: str,
    element_type: str,
    limit: int,
    path: str | None,
    language: str | None,
    literal: bool,
    ignore_case: bool,
    as_json: bool,
    db_path: Path | None,
    root: Path | None,
    echo: Echo,
) -> None:
    """`repomap search-text` with its options already read: search, then print."""
    from repomap import config
    from repomap.search.text import search_text as run_search
    from repomap.store import reading as searching

    settings = config.resolve(root, db_path, find_index=True)
    with searching(settings.db_path) as db:
        result = run_search(
            db, query, element_type, limit, path, language,
            "literal" if literal else "fts", ignore_case, log=settings.search_log,
        )  # fmt: skip
    if as_json:
        echo(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
        return
    from repomap.cli.render_search import print_search

    print_search(result)
