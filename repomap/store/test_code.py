"""Which of a file's definitions are test code, by its chunks' is_test (index/chunks.py decides
it for search): what the ranking reads to put tests after the project's own code in the map
(index/ranking.py TEST_CODE), and what the writer compares to tell whether a rewrite changed it
(store/writer.py's graph digest)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from operator import itemgetter

# Where a file's test code is: True, all of it; else the lines of its test chunks, as disjoint
# (first, last) spans in order (a test module's chunks nest: an impl holds its methods).
TestLines = bool | list[tuple[int, int]]
_FIRST = itemgetter(0)  # of a span


def test_lines(chunks: Iterable[tuple[str, int, int, bool]]) -> TestLines | None:
    """Where a file's chunks (kind, start line, end line, is_test) say its test code is (see
    index/ranking.py TEST_CODE), None when they say it has none."""
    spans: list[tuple[int, int]] = []
    every = True
    for kind, start, end, is_test in chunks:
        if not is_test:
            every = False
        elif kind == "module":
            return True
        else:
            spans.append((start, end))
    if not spans:
        return None
    if every:
        return True
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def in_test_lines(lines: TestLines | None, line: int) -> bool:
    """Whether a definition starting at `line` is test code, by its file's test_lines()."""
    if isinstance(lines, list):
        # By bisection: a file of the Rust library holds up to hundreds of test functions, and
        # a look at each per definition cost 0.3 s of its cold run's CPU.
        at = bisect_right(lines, line, key=_FIRST) - 1
        return at >= 0 and line <= lines[at][1]
    return lines is True
