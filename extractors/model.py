"""Records every extractor returns: plain data, no I/O, picklable for worker processes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

# Symbol kinds shared by every language (the `symbols.kind` column).
KINDS = (
    "attribute",  # Python: a name bound in a class body
    "class",
    "constant",
    "enum",
    "field",  # C, C++: a struct's, union's or class's data member; Rust: a named field
    "function",
    "impl",
    "macro",
    "method",
    "module",
    "namespace",
    "struct",
    "trait",
    "type",
    "union",
    "variable",
)

ELEMENT_TYPES = ("comment", "docstring", "string_literal")
# What a licence says (a file's header): no description of the code below it.
LICENCE = re.compile(
    r"SPDX-License-Identifier|\bCopyright\s*(?:\(c\)|©|\d)|All rights reserved"
    r"|Permission is hereby granted|General Public License|Licensed under the",
    re.IGNORECASE,
)


# A named tuple too (see Reference below): ~1.1 µs less per symbol than the frozen dataclass it
# was, whose __init__ called object.__setattr__ once per field (the kernel: ~4.4 million
# symbols). Its fields are store.SYMBOL_FIELDS in order, so a row is tuple(symbol).
class Symbol(NamedTuple):
    """One definition (or, for C++, an in-class declaration) found in a file."""

    name: str
    qualified_name: str
    kind: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    start_col: int  # 0-based, in bytes
    end_col: int
    start_byte: int
    end_byte: int
    signature: str  # the declaration header, never the body
    parent: str | None = None  # qualified name of the enclosing symbol
    doc: str | None = None  # docstring or doc comment, cleaned
    # C++: False for a member declared in a class body but defined elsewhere
    # (`int add(int);`), so an out-of-line `int Foo::add(int) {...}` links to it.
    is_definition: bool = True


# References and text elements are named tuples: immutable like the frozen dataclasses they
# were, made ~4x faster (a frozen dataclass's __init__ calls object.__setattr__ per field;
# Django's files make 339k references and 153k text elements), and the index hands them to
# the writer as plain tuples with a C-level tuple() each.
class Reference(NamedTuple):
    """An identifier used in a file, for ranking files by what they use."""

    name: str
    line: int
    symbol: str | None  # qualified name of the enclosing symbol, None at top level


class TextElement(NamedTuple):
    """A comment, docstring or string literal, without its delimiters."""

    element_type: str  # one of ELEMENT_TYPES
    content: str
    line: int  # 1-based line where the element starts
    end_line: int
    symbol_name: str | None  # documented symbol (docstrings) or enclosing symbol


@dataclass(slots=True)
class Extraction:
    """Everything one file yields; `status` is "ok", or "fallback" when a second parser read it."""

    symbols: list[Symbol] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    texts: list[TextElement] = field(default_factory=list)
    status: str = "ok"
    note: str | None = None  # why a fallback parser was used, or what was partial
