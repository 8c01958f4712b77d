"""A purpose-built Python lexer for comments and string tokens only.

`tokenize` is the slowest step of reading Python (about twice `ast.parse`); this scanner finds the
same comments and string tokens by jumping between `#`, quote characters and line starts with
C-level regex searches, and it keeps going on source that `ast` rejects (Python 2, newer syntax).
Tests compare it with `tokenize` on real files.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# A quote or a comment start; the prefix letters are checked by hand (see _prefix_start).
_INTERESTING = re.compile(r"[#'\"]")
_PREFIX_CHARS = frozenset("rRbBuUfF")
_VALID_PREFIXES = frozenset(
    p.lower() for p in ("r", "u", "b", "f", "br", "rb", "fr", "rf", "ur")
)  # `ur` is Python 2, kept so Python 2 files lex as a reader expects
# Where each kind of string ends; a backslash escapes the next character, newline included.
_STRING_END = {
    "'": re.compile(r"(?:[^'\\\n]|\\.)*'", re.S),
    '"': re.compile(r'(?:[^"\\\n]|\\.)*"', re.S),
    "'''": re.compile(r"(?:[^'\\]|\\.|'(?!''))*'''", re.S),
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.S),
}


class Token(NamedTuple):
    """A comment (`quote` is "#") or a string; offsets are character offsets into the text.

    A named tuple rather than a frozen dataclass: Django's files make 167k of them, and a
    frozen dataclass's __init__ (object.__setattr__ per field) costs ~4x a named tuple's."""

    start: int  # first character, the prefix included for strings
    end: int  # one past the last character
    body_start: int  # first character of the text without delimiters
    body_end: int
    quote: str  # "#", "'", '"', "'''" or '"""'
    prefix: str  # string prefix as written ("", "rb", "f" ...)

    @property
    def is_comment(self) -> bool:
        return self.quote == "#"


def _prefix_start(text: str, quote_at: int) -> int:
    """Where the string whose quote is at `quote_at` starts, its prefix letters included."""
    start = quote_at
    while start > 0 and quote_at - start < 2 and text[start - 1] in _PREFIX_CHARS:
        start -= 1
    if start == quote_at:
        return start
    # `xr"..."` is an identifier followed by a string, not a prefix.
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        return quote_at
    if text[start:quote_at].lower() not in _VALID_PREFIXES:
        return quote_at
    return start


def lex(text: str) -> list[Token]:
    """Every comment and string token of Python `text`, in order; unterminated strings end at EOL."""
    tokens: list[Token] = []
    search = _INTERESTING.search
    pos = 0
    size = len(text)
    while True:
        found = search(text, pos)
        if found is None:
            return tokens
        at = found.start()
        char = text[at]
        if char == "#":
            end = text.find("\n", at)
            end = size if end < 0 else end
            if end > at and text[end - 1] == "\r":
                end -= 1
            tokens.append(Token(at, end, at + 1, end, "#", ""))
            pos = end
            continue
        quote = text[at : at + 3] if text.startswith(char * 3, at) else char
        body_start = at + len(quote)
        closed = _STRING_END[quote].match(text, body_start)
        if closed is None:  # unterminated: tokenize reports an error; we keep the line's text
            end = text.find("\n", body_start)
            end = size if end < 0 else end
            body_end = end
        else:
            end = closed.end()
            body_end = end - len(quote)
        start = _prefix_start(text, at)
        tokens.append(Token(start, end, body_start, body_end, quote, text[start:at]))
        pos = end
