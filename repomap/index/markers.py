"""Ignore markers: authors keep a file, or lines of it, out of the index from inside it.

- a comment holding `repomap: noindex` in a file's first NOINDEX_LINES lines: the file is not
  indexed (the summary lists it as skipped, with the reason);
- the lines from a comment holding `repomap: ignore-start` to one holding `repomap: ignore-end`
  (inclusive; without an end, to the end of the file): kept out of the text rows and the chunks
  (generated blocks, fixtures with secrets). Definitions there stay symbols.

A marker counts only on a line that starts with a comment (`#`, `//`, `/*`, `*`, `<!--`, `--`,
`;`), so prose or a string that mentions one does not. The words are spelled in two parts
below, so this file's own text holds no marker.
"""

from __future__ import annotations

import re

NOINDEX_LINES = 5
_PREFIX = b"repomap" + b":"
_MARKER = re.compile(
    rb"^[ \t]*(?:#|//|/\*|\*|<!--|--|;)[ \t#/*!-]*"
    + re.escape(_PREFIX)
    + rb"[ \t]*(noindex|ignore-start|ignore-end)\b",
    re.MULTILINE,
)
NOINDEX_REASON = "noindex marker (" + "repomap" + ": noindex)"


def noindex(source: bytes) -> bool:
    """The file asks not to be indexed (a marker comment in its first lines)."""
    if _PREFIX not in source:
        return False
    head = b"\n".join(source.split(b"\n", NOINDEX_LINES)[:NOINDEX_LINES])
    return any(match.group(1) == b"noindex" for match in _MARKER.finditer(head))


def ignored_lines(source: bytes) -> list[tuple[int, int]]:
    """The (first, last) line ranges, 1-based and inclusive, between ignore markers."""
    if _PREFIX not in source:
        return []
    ranges, start = [], None
    for match in _MARKER.finditer(source):
        line = source.count(b"\n", 0, match.start()) + 1
        if match.group(1) == b"ignore-start" and start is None:
            start = line
        elif match.group(1) == b"ignore-end" and start is not None:
            ranges.append((start, line))
            start = None
    if start is not None:
        ranges.append((start, source.count(b"\n") + 1))
    return ranges


def blanked(source: bytes, ranges: list[tuple[int, int]]) -> bytes:
    """`source` with the lines in `ranges` emptied (line numbers kept)."""
    if not ranges:
        return source
    lines = source.split(b"\n")
    for first, last in ranges:
        for index in range(first - 1, min(last, len(lines))):
            lines[index] = b""
    return b"\n".join(lines)


def inside(ranges: list[tuple[int, int]], first: int, last: int) -> bool:
    """Lines first..last overlap an ignored range."""
    return any(first <= end and last >= start for start, end in ranges)
