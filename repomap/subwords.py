"""Identifier parts for search: `ConnectionPool` is also found as `connection pool`.

FTS5's unicode61 tokenizer already splits snake_case at `_`; camelCase and PascalCase need
this: their parts go into a second indexed column beside `content`.
"""

from __future__ import annotations

import re

# Runs of ASCII letters and digits; a run (leading digits dropped) with an upper-case letter
# after its first is a mixed-case identifier. Two linear steps: the single pattern
# `[A-Za-z][A-Za-z0-9]*(?:[A-Z][A-Za-z0-9]*)+` backtracks quadratically on a long lower-case
# run (a 50 kB string literal took a minute).
_RUN = re.compile(r"[A-Za-z0-9]+")
_UPPER = re.compile(r"[A-Z]")
_MIXED = re.compile(r"[A-Za-z0-9][A-Z]")  # linear pre-check: most text has no mixed-case word
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifier(identifier: str) -> list[str]:
    """`HTTPServerError` -> ["http", "server", "error"]; `getX2` -> ["get", "x", "2"]."""
    return [part.lower() for part in _PART.findall(identifier)]


def subwords(content: str) -> str:
    """The parts of every mixed-case identifier in `content`, one identifier's parts adjacent."""
    if not _MIXED.search(content):
        return ""
    parts = []
    for identifier in dict.fromkeys(_identifiers(content)):
        split = split_identifier(identifier)
        if len(split) > 1:
            parts.append(" ".join(split))
    return " \n".join(parts)


def _identifiers(content: str) -> list[str]:
    """Words with an upper-case letter after the first (`getX2`, `HTTPServer`, `UPPER`)."""
    found = []
    for run in _RUN.findall(content):
        word = run.lstrip("0123456789")
        if _UPPER.search(word, 1):
            found.append(word)
    return found
