"""Rust comments, docstrings and strings checked against an independent tokenizer on real code.

On a fixed sample of ~150 files from `$REPOMAP_CORPORA/rust` (Rust's standard library), the
extractor's text elements are matched with pygments' RustLexer tokens by (start line, text with
delimiters removed and whitespace collapsed). Pygments' tokens are merged the way the extractor
merges: adjacent pieces of one comment or string are one token, and consecutive line comments of
one style on consecutive lines, with only whitespace between, are one element, unless the first
follows code on its line.

Systematic pygments errors normalised away (each is the lexer's bug, not a disagreement about
where Rust comments and strings are):
- Inside an attribute (`#[...]`, pygments' Comment.Preproc state) pygments lexes `"..."` strings
  but no comments: a `// why` line inside a multi-line `#[cfg(any(...))]`, common in std, is
  invisible to it. Our comments inside a span pygments lexed as an attribute are therefore not
  compared; strings there are, on both sides.
- Pygments needs a newline to end a `//` comment, so a file's last line is only a comment with one;
  we append a newline to each file before lexing it.
- Pygments lexes `c"..."`/`cr"..."` as a name `c` followed by a string; prefixes are dropped on
  both sides anyway.

What remains are our own misses, counted as such: the few files where tree-sitter-rust 0.24 does
not know the syntax (trait aliases, `macro` 2.0 items) and its error recovery loses or mis-splits
the comments and strings around it (11 of 118k elements over the whole corpus).
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from pygments.lexers.rust import RustLexer
from pygments.token import Comment, String, Token
from repomap.extractors import rust

CORPUS = Path(os.environ.get("REPOMAP_CORPORA", Path.home() / ".cache" / "repomap-corpora"))
RUST = CORPUS / "rust"
SAMPLE_SIZE = 150

_STRING_BODY = re.compile(r'[bcr]*(#*)"(.*)"\1', re.DOTALL)
_LINE_MARKERS = {
    style: re.compile(r"^\s*" + marker, re.MULTILINE)
    for style, marker in (("///", "///"), ("//!", "//!"), ("//", "/+"))
}


def _sample() -> list[Path]:
    files = sorted(RUST.rglob("*.rs"))
    return sorted(random.Random(20240601).sample(files, min(SAMPLE_SIZE, len(files))))


def _normal(text: str) -> str:
    return " ".join(text.split())


def _kind(token_type: object) -> str | None:
    """The element a pygments token belongs to: "comment", "string" or None."""
    if token_type in Comment.Single or token_type in Comment.Multiline or token_type in String.Doc:
        return "comment"
    if token_type in String and token_type not in String.Char:
        return "string"
    return None


def _pygments_pieces(tokens: list[tuple[int, object, str]]) -> list[tuple[str, int, int, str]]:
    """(kind, start, end, text) of each comment or string, its pieces joined.

    A line comment is one token; a block comment comes as its opener, text, nested `/*` and `*/`
    pieces, and a string as quotes, text and escapes.
    """
    pieces: list[list] = []
    depth = 0  # block comment nesting
    for index, token_type, value in tokens:
        kind = _kind(token_type)
        if kind == "comment" and depth:
            depth += value == "/*"
            depth -= value == "*/"
        elif kind == "string" and pieces and pieces[-1][0] == "string" and pieces[-1][2] == index:
            pass
        elif kind:
            depth = 1 if value.startswith("/*") else 0
            pieces.append([kind, index, index, ""])
        else:
            continue
        pieces[-1][2] += len(value)
        pieces[-1][3] += value
    return [tuple(piece) for piece in pieces]


def _line_style(value: str) -> str | None:
    if not value.startswith("//"):
        return None
    if value.startswith("//!"):
        return "//!"
    return "///" if value.startswith("///") and not value.startswith("////") else "//"


def _pygments_elements(text: str) -> tuple[Counter, Counter, list[tuple[int, int, str]]]:
    """Comments and strings as (line, normalised text) counters, and the attribute spans."""
    comments: Counter = Counter()
    strings: Counter = Counter()
    runs: list[list] = []  # [style, first alone on its line, first line, last line, end, [values]]
    tokens = list(RustLexer().get_tokens_unprocessed(text))
    for kind, start, end, value in _pygments_pieces(tokens):
        line = text.count("\n", 0, start) + 1
        if kind == "string":
            body = _STRING_BODY.fullmatch(value)
            strings[line, _normal(body.group(2) if body else value)] += 1
            continue
        style = _line_style(value)
        alone = not text[text.rfind("\n", 0, start) + 1 : start].strip()  # no code before it
        previous = runs[-1] if runs else None
        if (
            style
            and previous
            and previous[0] == style
            and previous[1]
            and previous[3] + 1 == line
            and not text[previous[4] : start].strip()
        ):
            previous[3], previous[4] = line, end
            previous[5].append(value)
            continue
        runs.append([style, alone, line, line, end, [value]])
    for style, _, line, _, _, values in runs:
        comments[line, _normal(_comment_text(style, values))] += 1
    return comments, strings, _attributes(text, tokens)


def _attributes(text: str, tokens: list[tuple[int, object, str]]) -> list[tuple[int, int, str]]:
    """(first line, last line, normalised text) of each `#[...]` pygments lexes as an attribute."""
    spans = []
    depth = start = 0
    for index, token_type, value in tokens:
        if token_type not in Comment.Preproc:
            continue
        if not depth and value.startswith("#") and value.endswith("["):
            depth, start = 1, index
        elif depth:  # only Comment.Preproc pieces hold the attribute's own brackets
            depth += value.count("[") - value.count("]")
            if depth <= 0:
                depth = 0
                spans.append((start, index + len(value)))
    return [
        (text.count("\n", 0, a) + 1, text.count("\n", 0, b) + 1, _normal(text[a:b]))
        for a, b in spans
    ]


def _comment_text(style: str | None, values: list[str]) -> str:
    if style:
        return _LINE_MARKERS[style].sub("", "".join(values))
    value = values[0]
    opener = 3 if value[:3] in ("/**", "/*!") and value[:4] not in ("/***", "/**/") else 2
    body = value[opener:-2] if value.endswith("*/") else value[opener:]
    first, *rest = body.split("\n")
    if all(line.lstrip().startswith("*") for line in rest if line.strip()):
        rest = [line.lstrip()[1:] for line in rest]
    return "\n".join([first, *rest])


def _ours(source: bytes, attributes: list[tuple[int, int, str]]) -> tuple[Counter, Counter]:
    """Our comments and strings as (line, normalised text), but not comments inside attributes."""
    comments: Counter = Counter()
    strings: Counter = Counter()
    for element in rust.extract(source, "src/sample.rs").texts:
        key = element.line, _normal(element.content)
        if element.element_type == "string_literal":
            strings[key] += 1
        elif not any(_inside(element.line, key[1], attribute) for attribute in attributes):
            comments[key] += 1
    return comments, strings


def _inside(line: int, content: str, attribute: tuple[int, int, str]) -> bool:
    """Whether a comment starting on `line` is in the attribute (not after it on its last line)."""
    first, last, text = attribute
    return first <= line < last or (line == last and content in text)


def _matched(expected: Counter, found: Counter) -> int:
    return sum((expected & found).values())


@pytest.mark.slow
@pytest.mark.skipif(not RUST.exists(), reason="Rust corpus not fetched")
def test_comments_docstrings_and_strings_agree_with_pygments():
    totals = Counter()
    misses: list[tuple[str, str, int, str]] = []
    for path in _sample():
        source = path.read_bytes()
        text = source.decode("utf-8", "replace")
        expected_comments, expected_strings, attributes = _pygments_elements(text + "\n")
        comments, strings = _ours(source, attributes)
        for name, expected, found in (
            ("comments", expected_comments, comments),
            ("strings", expected_strings, strings),
        ):
            totals[name + " expected"] += sum(expected.values())
            totals[name + " found"] += sum(found.values())
            totals[name + " matched"] += _matched(expected, found)
            misses += [(name, path.name, line, t) for (line, t) in expected - found][:3]
            misses += [(name + " extra", path.name, line, t) for (line, t) in found - expected][:3]
    figures = {}
    for name in ("comments", "strings"):
        figures[name + " recall"] = totals[name + " matched"] / totals[name + " expected"]
        figures[name + " precision"] = totals[name + " matched"] / totals[name + " found"]
    print({k: f"{v:.4f}" for k, v in figures.items()}, dict(totals))  # noqa: T201
    for miss in misses[:40]:
        print(miss)  # noqa: T201
    assert figures["comments recall"] >= 0.99
    assert figures["strings recall"] >= 0.97
    assert figures["comments precision"] >= 0.98
    assert figures["strings precision"] >= 0.98


def test_token_kinds_are_read_as_intended():
    # Guards the classification above against a pygments upgrade renaming token types.
    kinds = [_kind(t) for _, t, _ in RustLexer().get_tokens_unprocessed("/// d\n'c' \"s\" // x\n")]
    assert "comment" in kinds and "string" in kinds
    assert _kind(Token.Literal.String.Char) is None
