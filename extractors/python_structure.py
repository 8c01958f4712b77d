"""What a Python parser (`ast`, or tree-sitter for files `ast` rejects) tells the extractor:
definitions and statement starts, with offsets into the decoded source."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate


@dataclass(frozen=True, slots=True)
class Definition:
    """A definition found by a parser, before byte offsets and text are attached."""

    name: str
    qualified_name: str
    kind: str
    start: tuple[int, int]  # (1-based line, 0-based character column) of `def`/`class`/name
    end: tuple[int, int]
    header_end: tuple[int, int]  # where the body starts: the signature stops here
    parent: str | None
    docstring_at: tuple[int, int] | None  # start of the docstring token, if any
    # A function decorated `@overload` (`@typing.overload`, `@t.overload`): a signature for type
    # checkers beside the one that does the work, so a declaration, not a definition.
    overload: bool = False


VALUE_KINDS = ("attribute", "constant", "type", "variable")  # names bound by an assignment


# What `typing` is imported as where `@typing.overload` is written (`plum.overload` and
# `multimethod.overload` register real implementations: not stubs).
_TYPING_MODULES = frozenset({"typing", "typing_extensions", "t", "tp", "typ", "te"})


def is_overload(decorator: str) -> bool:
    """A decorator's expression (`overload`, `typing.overload`, `t.overload`) is typing's
    `overload`: the function it decorates is a stub for type checkers."""
    module, _, name = decorator.rpartition(".")
    return name == "overload" and (not module or module in _TYPING_MODULES)


def assigned_kind(name: str, in_class: bool, type_alias: bool) -> str:
    """The kind of a name an assignment binds in a class body or at module level, one rule for
    both parsers: an explicit type alias (`X: TypeAlias = ...`, `type X = ...`) is a type, any
    other name in a class body an attribute, an UPPER_CASE module name a constant."""
    if type_alias:
        return "type"
    if in_class:
        return "attribute"
    return "constant" if name.isupper() else "variable"


@dataclass(slots=True)
class Structure:
    """What a parser tells about a file beyond the lexer: definitions and statement starts."""

    defs: list[Definition]
    statement_starts: set[tuple[int, int]]  # (line, column) where each statement begins
    module_docstring_at: tuple[int, int] | None


class SourceText:
    """Offsets in one decoded source: (line, column) <-> character offset, UTF-8 columns."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.ascii = text.isascii()
        # The 1-based line of a character offset: called for every text element and token
        # join, so a C call (bisect over line_starts), not a method with a Python frame.
        self.line_of: Callable[[int], int] = functools.partial(
            bisect.bisect_right, self.line_starts
        )

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[min(line, len(self.line_starts)) - 1] + col

    def char_col(self, line: int, byte_col: int) -> int:
        """ast reports UTF-8 byte columns; turn one into a character column."""
        if self.ascii:
            return byte_col
        start = self.line_starts[line - 1]
        return len(
            self.text[start : start + byte_col * 4].encode()[:byte_col].decode("utf-8", "ignore")
        )

    def byte_offset(self, offset: int) -> int:
        if self.ascii:
            return offset
        line_start = self.line_starts[self.line_of(offset) - 1]
        return self.line_byte_starts[self.line_of(offset) - 1] + len(
            self.text[line_start:offset].encode()
        )

    @cached_property
    def line_byte_starts(self) -> list[int]:
        lengths = [len(line.encode()) for line in self.text.split("\n")]
        return [0, *accumulate(length + 1 for length in lengths)]
