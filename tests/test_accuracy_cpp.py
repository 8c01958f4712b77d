"""C++ comments, docstrings and string literals of real LLVM headers against pygments.

pygments' CppLexer reads a deterministic sample of ~150 headers. Its Comment.* and String.*
tokens, merged the way the extractor merges (`//` comments of one kind on consecutive lines
with only blanks between; adjacent string literals), are matched with the extractor's text
elements by (start line, text with delimiters removed and whitespace runs collapsed).
Collapsing whitespace hides dedenting choices; every character and every boundary still counts.

pygments gets three things wrong, and only those are adjusted on its side:
- A preprocessor directive is opaque Comment.Preproc text to it, so the strings of
  `#define DEBUG_TYPE "isel"` are not strings and the `//` of `#define URL "http://x"`
  starts a comment. Directives other than `#include` are re-lexed with pygments itself from
  after the directive name, as the compiler reads a macro body.
- `#include "foo.h"`: the path is Comment.PreprocFile; it is the string literal it is
  (tree-sitter's string_literal), so it counts as one. `#include <foo>` is a string on
  neither side. The rest of that line is one Comment.Single, leading blanks included: it
  is stripped, and dropped when blank.
- `#if 0` blocks are plain Comment; tree-sitter reads them as code, so they are re-lexed too.
And one merging rule follows the compiler rather than either lexer: `"a" PRIx32 "b"` is one
literal, as tree-sitter's concatenated_string has it (a macro name between two literals).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections import Counter
from pathlib import Path

import pytest
from repomap.extractors import cpp

pytest.importorskip("pygments")
from pygments.lexers import CppLexer  # noqa: E402
from pygments.token import Comment, String, Text, Whitespace  # noqa: E402

CORPUS = Path(os.environ.get("REPOMAP_CORPORA", "~/.cache/repomap-corpora")).expanduser() / "cpp"
SAMPLE_SIZE = 150

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no C++ corpus at {CORPUS}"),
]

Lexeme = tuple[int, object, str]  # (offset, token type, text) as get_tokens_unprocessed yields
_LEXER = CppLexer()
_DIRECTIVE = re.compile(r"\s*#\s*(\w*)")
# Between two literals the compiler joins: blanks, line continuations, at most one macro name.
_JOINABLE = re.compile(r"[\s\\]*(?:(?!(?:extern|return|case|throw|asm)\b)[A-Za-z_]\w*[\s\\]*)?")
# (prefix, kind), longest first; `//` comments merge only with their own kind.
_LINE_MARKERS = (("///<", "trailing"), ("//!<", "trailing"), ("////", "line"), ("///", "doc"))
_LINE_MARKERS += (("//!", "doc"), ("//", "line"))
_BLOCK_MARKERS = (("/**<", 4), ("/*!<", 4), ("/***", 2), ("/**/", 2), ("/**", 3), ("/*!", 3))
_BLOCK_MARKERS += (("/*", 2),)


def sample_files() -> list[Path]:
    """Every n-th header in path order: the same ~150 files on every run."""
    files = sorted(p for p in CORPUS.rglob("*.h") if p.is_file())
    step = max(1, len(files) // SAMPLE_SIZE)
    return files[::step][:SAMPLE_SIZE]


def normalise(text: str) -> str:
    return " ".join(text.split())


# --- the reference: pygments tokens --------------------------------------------------------


def reference_tokens(text: str) -> list[Lexeme]:
    """pygments' tokens, with directives and `#if 0` blocks re-lexed (see the module doc)."""
    raw = list(_LEXER.get_tokens_unprocessed(text))
    tokens: list[Lexeme] = []
    index = 0
    while index < len(raw):
        offset, kind, value = raw[index]
        if kind in Comment.Preproc and value.lstrip().startswith("#"):
            end = _directive_end(raw, index, text)
            name = _DIRECTIVE.match(text, offset)[1]
            if name in ("include", "import"):
                tokens += _include_tokens(raw[index:end])
            else:
                tokens += _relex(text, offset, _end_offset(raw[end - 1]), skip_name=True)
            index = end
        elif kind is Comment:  # a line of an `#if 0` block
            end = index
            while end < len(raw) and raw[end][1] is Comment:
                end += 1
            tokens += _relex(text, offset, _end_offset(raw[end - 1]), skip_name=False)
            index = end
        else:
            tokens.append(raw[index])
            index += 1
    return tokens


def _end_offset(token: Lexeme) -> int:
    return token[0] + len(token[2])


def _directive_end(raw: list[Lexeme], index: int, text: str) -> int:
    """Index after the last token of the directive that starts at raw[index]."""
    for end in range(index + 1, len(raw)):
        offset, kind, value = raw[end]
        if kind in Comment.Single:
            return end + 1
        if kind in Comment.Preproc and value == "\n" and text[offset - 1 : offset] != "\\":
            return end + 1
        blank = (kind in Whitespace or kind in Text) and "\n" not in value
        directive = kind in Comment.Preproc or kind in Comment.PreprocFile
        if not (blank or directive or kind in Comment.Multiline):
            return end  # `#if 0` goes on in pygments' if0 state
    return len(raw)


def _relex(text: str, start: int, end: int, skip_name: bool) -> list[Lexeme]:
    """pygments' tokens for text[start:end] read as code, from after `#name` if asked."""
    chunk = text[start:end]
    if skip_name:
        name_end = _DIRECTIVE.match(chunk).end()
        chunk = " " * name_end + chunk[name_end:]
    return [
        (start + offset, kind, value)
        for offset, kind, value in _LEXER.get_tokens_unprocessed(chunk)
    ]


def _include_tokens(raw: list[Lexeme]) -> list[Lexeme]:
    """`#include "path" // note`: the quoted path is a string, the rest of the line a comment."""
    tokens: list[Lexeme] = []
    for offset, kind, value in raw:
        if kind in Comment.PreprocFile and value.startswith('"'):
            tokens += [(offset, String, '"'), (offset + 1, String, value[1:-1])]
            tokens.append((offset + len(value) - 1, String, '"'))
        elif (kind in Comment.Single or kind in Comment.Multiline) and value.strip():
            stripped = value.lstrip()
            kind = Comment.Single if stripped.startswith("//") else Comment.Multiline
            tokens.append((offset + len(value) - len(stripped), kind, stripped))
    return tokens


# --- the reference: merged into elements ----------------------------------------------------


def reference_elements(text: str) -> tuple[Counter, Counter]:
    """(comments, strings) from pygments, as Counters of (line, normalised text)."""
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line(offset: int) -> int:
        return bisect_right(newlines, offset - 1) + 1

    tokens = reference_tokens(text)
    comments = Counter(
        (line(group[0][0]), normalise(_comment_text(group)))
        for group in _comment_groups(tokens, text)
    )
    strings = Counter((line(start), body) for start, body in _string_literals(tokens, text))
    return comments, strings


def _comment_groups(tokens: list[Lexeme], text: str) -> list[list[tuple[int, str, str]]]:
    """Comments as (offset, kind, text) runs: `//` ones of one kind on consecutive lines merge."""
    groups: list[list[tuple[int, str, str]]] = []
    previous_end = -1
    for offset, kind, value in tokens:
        if not (kind in Comment.Single or kind in Comment.Multiline):
            continue
        value = value.rstrip("\r\n")
        if kind in Comment.Single and value.startswith("//"):
            comment_kind = next(k for marker, k in _LINE_MARKERS if value.startswith(marker))
            gap = text[previous_end:offset]
            last = groups[-1][-1] if groups else None
            if last and last[1] == comment_kind and gap.count("\n") == 1 and not gap.strip():
                groups[-1].append((offset, comment_kind, value))
            else:
                groups.append([(offset, comment_kind, value)])
            previous_end = offset + len(value)
        else:
            groups.append([(offset, "block", value)])
    return groups


def _comment_text(group: list[tuple[int, str, str]]) -> str:
    """A comment without its markers: `//`-style ones per line, `/* */` with its `*` margin."""
    if group[0][1] != "block":
        return "\n".join(_strip_line_marker(value, kind) for _, kind, value in group)
    value = group[0][2]
    cut = next(length for marker, length in _BLOCK_MARKERS if value.startswith(marker))
    body = value[cut:-2] if value.endswith("*/") and len(value) >= cut + 2 else value[cut:]
    lines = body.split("\n")
    lines[1:] = [ln.lstrip()[1:] if ln.lstrip().startswith("*") else ln for ln in lines[1:]]
    return "\n".join(lines)


def _strip_line_marker(value: str, kind: str) -> str:
    marker = next(m for m, k in _LINE_MARKERS if value.startswith(m) and k == kind)
    return value[2 if marker == "////" else len(marker) :]


def _string_literals(tokens: list[Lexeme], text: str) -> list[tuple[int, str]]:
    """(offset, body) of each literal; literals the compiler joins are one, bodies joined."""
    literals: list[tuple[int, str]] = []
    joined: list[str] = []  # bodies of the literals joined so far
    first = -1  # offset of the first of them
    body: list[str] | None = None  # the literal being read, between its quotes
    last_end = affix = -1
    for offset, kind, value in tokens:
        is_string = kind in String and kind not in String.Char
        if body is not None and not is_string:  # unterminated: it ends with its line
            joined.append("".join(body))
            body, last_end = None, offset
        if not is_string or kind in String.Delimiter:
            continue
        if kind in String.Affix:
            affix = offset
        elif value != '"':
            if body is not None:
                body.append(value)
        elif body is not None:  # the closing quote
            joined.append("".join(body))
            body, last_end = None, offset + 1
        else:  # an opening quote
            start = affix if affix >= 0 else offset
            if first < 0 or not _JOINABLE.fullmatch(text, last_end, start):
                if first >= 0:
                    literals.append((first, "".join(joined)))
                first, joined = start, []
            body, affix = [], -1
    if body is not None:
        joined.append("".join(body))
    if first >= 0:
        literals.append((first, "".join(joined)))
    return literals


# --- the extractor's side and the comparison ------------------------------------------------


def extracted_elements(source: bytes) -> tuple[Counter, Counter]:
    comments: Counter = Counter()
    strings: Counter = Counter()
    for element in cpp.extract(source, "sample.h").texts:
        if element.element_type == "string_literal":
            strings[element.line, element.content] += 1
        else:
            comments[element.line, normalise(element.content)] += 1
    return comments, strings


def compare(files: list[Path]) -> dict[str, tuple[int, int, int]]:
    """Per category: (matched, pygments' count, extractor's count)."""
    totals = {"comments and docstrings": [0, 0, 0], "string literals": [0, 0, 0]}
    for path in files:
        source = path.read_bytes()
        ours = extracted_elements(source)
        theirs = reference_elements(source.decode("utf-8", "replace"))
        for counts, mine, reference in zip(totals.values(), ours, theirs, strict=True):
            counts[0] += sum((mine & reference).values())
            counts[1] += sum(reference.values())
            counts[2] += sum(mine.values())
    return {
        name: (matched, reference, extracted)
        for name, (matched, reference, extracted) in totals.items()
    }


def test_comments_docstrings_and_strings_match_pygments_on_llvm_headers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = sample_files()
    results = compare(files)
    recall, precision = {}, {}
    for name, (matched, reference, extracted) in results.items():
        recall[name], precision[name] = matched / max(reference, 1), matched / max(extracted, 1)
        with capsys.disabled():
            print(  # noqa: T201 -- the figures are what this test is for
                f"\n{name}: recall {recall[name]:.2%} ({matched}/{reference}), "
                f"precision {precision[name]:.2%} ({matched}/{extracted}), {len(files)} files"
            )
    assert recall["comments and docstrings"] >= 0.99
    assert recall["string literals"] >= 0.97
    assert min(precision.values()) >= 0.98
