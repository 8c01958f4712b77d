"""Rust extractor: items, references, comments, doc comments and string literals via tree-sitter.

One query pass (`queries/rust/tags.scm` + `text.scm` compiled together) finds every node we need;
Python then only reads the captured nodes, never walks the tree. Node attribute reads cost about
as much as a Python call, so the hot loops read each one once and slice `source` themselves.

Decisions:
- The module path comes from `rel_path`: the components after the last `src/` or the last folder
  whose name is no identifier (a crate's: `walkdir-list/main.rs` is its crate's root), or all of
  them, without `.rs` and without a final `lib`, `main` or `mod`: `library/std/src/sync/mutex.rs`
  is `sync::mutex`, `src/lib.rs` is the crate root (empty, so root items are just `Pool`).
- An `impl` is named after its self type's last path segment without generics, and qualified with
  its trait named the same way: `impl<T> fmt::Display for Pool<T>` in `pool.rs` is the symbol
  `Pool`, qualified `pool::Display for Pool`. Items inside it are qualified by the self type
  (`pool::Pool::fmt`) and have the impl as `parent`. A self type written with a path keeps it:
  `impl From<Error> for io::Error` is `From for io::Error` (named `Error`), its items
  `io::Error::from`, not the file's own `Error`'s (`crate::`, `self::` and `super::` paths are
  read from the module; an inherent `impl super::Pool` is named as its type). Self types that
  are not paths keep their text without generics (`impl<T> Sync for &'a [T]` is named `&'a [T]`).
- Items nested in functions, consts or other items are qualified by them (`outer::helper`).
- Functions declared in `extern { }` blocks are `function`s; `const _` (no name) is not a symbol.
- Named fields of structs, unions and struct-like enum variants are `field`s, as C and C++ data
  members are, named inside their record: `Pool::items`; a variant's inside the variant (itself
  `Kind::Large`): `Kind::Large::size`, its parent the variant. Tuple fields have no name: no
  symbol. A field's lines are its declaration's, without the attributes above it; its signature
  is the declaration as written (`pub items: Vec<T>`), its doc its `///`. It owns no comment,
  string nor reference: those stay its record's (its doc comment's row too).
- References are type names, what is called (functions, methods in `a.b()`, macros), fields
  used (`self.depth`, read or written, as C's `p->len`), path segments and `use` names, once per
  (name, line, symbol), in source order. An impl's self type and trait are references (they name
  items defined elsewhere); a definition's own name is not. Macro arguments are unparsed token
  trees: there only what is called (`f(..)`, `m!(..)`) counts.
- Outer doc comments (`///`, `/** */`) name the item they document; when that is not a symbol
  (a `use`, a macro call) or is a field, they name the enclosing symbol instead. Inner doc
  comments (`//!`, `/*! */`) name their enclosing item (an inline module, or an impl/fn body in
  rare code), or the file's module path at file level (None for a crate root).
- Plain line comments lose their whole leading run of slashes (`//// x` -> `x`).
- Items inside a macro call where items stand (`cfg_rt! { .. }`, `cfg_if! { if #[cfg(..)] { .. }
  }`) are parsed as items where they are written (rust_macros.py); in a function body a macro
  call stays a call.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import cache
from importlib import resources
from operator import itemgetter
from typing import NamedTuple

from tree_sitter import Node, Query, QueryCursor

from . import rust_macros
from .model import Extraction, Reference, Symbol, TextElement
from .treesitter import language

# Capture name -> symbol kind; functions inside an impl or trait become "method".
_DEFINITIONS = {
    "definition.function": "function",
    "definition.struct": "struct",
    "definition.enum": "enum",
    "definition.union": "union",
    "definition.trait": "trait",
    "definition.impl": "impl",
    "definition.module": "module",
    "definition.macro": "macro",
    "definition.constant": "constant",
    # An enum's variant is its constant, as a C or C++ enumerator is (`DecodeError::InvalidByte`
    # is looked up by name as often as the enum): named inside its enum, documented by its `///`.
    "definition.variant": "constant",
    "definition.type": "type",
    # A named field, as a C or C++ data member is: named inside its struct, union or variant.
    "definition.field": "field",
}

# The field where each item's body (or value) starts: the signature stops there.
_BODY_FIELD = {
    "function_item": "body",
    "struct_item": "body",
    "enum_item": "body",
    "union_item": "body",
    "trait_item": "body",
    "impl_item": "body",
    "mod_item": "body",
    "const_item": "value",
    "static_item": "value",
    "enum_variant": "body",  # `Named { .. }`: the fields are the variant's body
    "macro_definition": "name",  # `macro_rules! name`: the rules follow the name
}

# Siblings between an outer doc comment and the item it documents.
_BETWEEN_DOC_AND_ITEM = frozenset(("attribute_item", "line_comment", "block_comment"))
_MAX_SIBLINGS_BEFORE_ITEM = 64  # more attributes and comments than any real item has

# A comment's first three bytes -> its style; `////`, `/***` and `/**/` are plain comments.
_DOC_STYLES = {b"///": "///", b"//!": "//!", b"/**": "/**", b"/*!": "/*!"}
_DOCSTRING_STYLES = frozenset(_DOC_STYLES.values())
_OUTER_DOC_STYLES = frozenset(("///", "/**"))

# A run of line comments of one style, from the first one's marker: each further line holds only
# whitespace before the same style's marker (the first one too, or it is a run of one). Matching the run in C beats visiting each node, and
# is exact: a line after a line comment starts outside any string or block comment.
_PLAIN = rb"//(?:(?=//)|(?![/!]))"  # `//` but not `///` (unless `////`) nor `//!`
_LINE_RUNS = {
    "///": re.compile(rb"///(?!/)[^\n]*(?:\n[^\S\n]*///(?!/)[^\n]*)*"),
    "//!": re.compile(rb"//![^\n]*(?:\n[^\S\n]*//![^\n]*)*"),
    "//": re.compile(rb"//[^\n]*(?:\n[^\S\n]*" + _PLAIN + rb"[^\n]*)*"),
}
_REST_OF_LINE = re.compile(rb"[^\n]*")
# The marker (and one space) starting each further line of a run; plain comments lose all slashes.
_NEXT_MARKERS = {
    "///": re.compile(rb"\n[^\S\n]*/// ?"),
    "//!": re.compile(rb"\n[^\S\n]*//! ?"),
    "//": re.compile(rb"\n[^\S\n]*/+ ?"),
}
_TRAILING_SPACE = re.compile(rb"[^\S\n]+$", re.MULTILINE)
_INDENT = (b" ", b"\t")
# What may stand between a doc comment and its item: whitespace, comments and attributes with
# strings and brackets nested three deep; `_documented` asks the tree about anything harder. Each
# repetition is unrolled (`a*(?:b a*)*`), so a failed match cannot backtrack exponentially.
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_BRACKETED = rb'[^\[\]"]*(?:' + _STRING + rb'[^\[\]"]*)*'
for _ in range(2):
    _BRACKETED = rb'[^\[\]"]*(?:(?:' + _STRING + rb"|\[" + _BRACKETED + rb'\])[^\[\]"]*)*'
# Plain comments only (not nested): the gap stops at the next outer doc comment.
_PLAIN_BLOCK = rb"/\*(?:(?=\*[*/])|(?!\*))[^*/]*(?:(?:\*(?!/)|/(?!\*))[^*/]*)*\*/"
_PLAIN_LINE = rb"//(?:(?=//)|(?!/))[^\n]*"
_DOC_GAP = re.compile(
    rb"(?:\s+|" + _PLAIN_LINE + rb"|" + _PLAIN_BLOCK + rb"|#\[" + _BRACKETED + rb"\])*", re.DOTALL
)

# An escape in a string that is not raw, as the lexer pairs them (`\\` then a newline is an
# escaped `\` and a newline kept): a line's `\` at its end continues it (group 1), and the
# value has neither the newline nor the blanks (and blank lines) starting the next line.
_ESCAPE = re.compile(rb"\\(?:(\r?\n)[ \t\r\n]*|.)", re.DOTALL)

# Spaces a collapsed multi-line header keeps inside brackets: `fn f( a: u8, )` -> `fn f(a: u8)`.
_BRACKET_SPACE = re.compile(r"(?<=[(\[]) |,? (?=[)\]])")


@cache
def _query() -> Query:
    """tags.scm and text.scm compiled as one query: one traversal per tree instead of two."""
    folder = resources.files(__package__) / "queries" / "rust"
    source = "\n".join(
        folder.joinpath(f"{purpose}.scm").read_text() for purpose in ("tags", "text")
    )
    return Query(language("rust"), source)


def extract(source: bytes, rel_path: str) -> Extraction:
    """Symbols, references, comments, docstrings and string literals of one Rust file."""
    root, _parsed, hidden = rust_macros.parse(source)  # items inside `cfg_rt! { .. }` too
    found = QueryCursor(_query()).captures(root)
    for flags in hidden:  # bitflags' flag lists, blanked to parse: their calls and strings
        for capture, nodes in QueryCursor(_query()).captures(flags).items():
            if capture.startswith("reference.") or capture == "string":
                found.setdefault(capture, []).extend(nodes)
    module = module_path(rel_path)
    items = _items(found, source, module)
    # A field owns no comment, string nor reference: they stay its record's, as C's do.
    owners = _Owners([item for item in items if item.kind != "field"])
    texts = _strings(found.get("string", []), source, owners)
    texts += _Comments(source, items, owners, module).elements(found.get("comment", []))
    texts.sort(key=itemgetter(0))
    return Extraction(
        symbols=[_symbol(item, source) for item in items],
        references=_references(found, source, items, owners),
        texts=[element for _, element in texts],
        note="syntax errors" if root.has_error else None,
    )


def module_path(rel_path: str) -> str:
    """`library/std/src/sync/mutex.rs` -> `sync::mutex`; `src/lib.rs` -> `` (the crate root).
    A name that is no identifier is no module's: a folder so named is a crate's, the path
    starting after it as after `src/` (`walkdir-list/main.rs`, a binary's root, is ``, not
    `walkdir-list`), and a file so named a crate's root (`tests/run-time-detect.rs`)."""
    parts = [part for part in rel_path.replace("\\", "/").split("/") if part not in ("", ".")]
    folders = [i for i, part in enumerate(parts[:-1]) if part == "src" or not part.isidentifier()]
    if folders:
        parts = parts[folders[-1] + 1 :]
    if parts and parts[-1].endswith(".rs"):
        parts[-1] = parts[-1][:-3]
        if not parts[-1].isidentifier():
            return ""
    if parts and parts[-1] in ("lib", "main", "mod"):
        parts.pop()
    return "::".join(parts)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}::{name}" if prefix else name


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class _Item:
    """A definition being built; becomes a Symbol once its doc comments are known."""

    __slots__ = (
        "node",
        "kind",
        "name",
        "qualified_name",
        "parent",
        "scope",
        "start",
        "end",
        "name_start",
        "docs",
    )

    def __init__(self, node: Node, kind: str, start: int, end: int) -> None:
        self.node, self.kind, self.start, self.end = node, kind, start, end
        self.name = self.qualified_name = self.scope = ""
        self.parent: str | None = None
        self.name_start = -1  # byte offset of the name node; -1 for impls, named by a type
        self.docs: list[str] = []


def _items(found: dict[str, list[Node]], source: bytes, module: str) -> list[_Item]:
    """Definitions in source order, each named and qualified inside its enclosing definition."""
    entries = [
        (node.start_byte, -node.end_byte, kind, node)
        for capture, kind in _DEFINITIONS.items()
        for node in found.get(capture, ())
    ]
    entries.sort(key=itemgetter(0, 1))  # outer before inner at the same start
    items: list[_Item] = []
    stack: list[_Item] = []  # the enclosing definitions of the current one
    for start, negative_end, kind, node in entries:
        while stack and stack[-1].end <= start:
            stack.pop()
        item = _Item(node, kind, start, -negative_end)
        if _name(item, stack[-1] if stack else None, source, module):
            items.append(item)
            if kind != "field":  # what a field's type holds (`[u8; { N }]`) is its record's
                stack.append(item)
    return items


def _name(item: _Item, parent: _Item | None, source: bytes, module: str) -> bool:
    """Fill in the item's names and kind; False when it has none (`const _`), or only a MISSING
    node error recovery made up, zero bytes wide."""
    prefix = parent.scope if parent else module
    node = item.node
    if item.kind == "impl":
        self_type = node.child_by_field_name("type")
        written = _type_name(self_type, source) if self_type else ""
        if self_type is None or not written:
            return False
        # Named by the type it is for (`Map` for `&'a Map`: indexmap's 22 impls on references
        # were named `&'a Map`, `&'_ mut Slice`), its label as written (`IntoIterator for &'a Map`)
        referent = _referent(self_type)
        item.name = _type_name(referent, source) or written
        path = _type_path(referent, source)
        if path is not None and referent is self_type:
            written = path  # `From for io::Error`, not `From for Error`
        trait = node.child_by_field_name("trait")
        trait_name = _type_name(trait, source) if trait else ""
        label = f"{trait_name} for {written}" if trait_name else written
        item.qualified_name = _join(prefix, label)
        item.scope = _join(prefix, item.name)
        if path is not None:
            # `impl From<Error> for io::Error`: its items are io::Error's (`io::Error::from`),
            # not those of the file's own `Error`; an inherent impl is named as its type
            item.scope = _resolved(path, prefix)
            if not trait_name:
                item.qualified_name = item.scope
    else:
        name = node.child_by_field_name("name")
        if name is None or name.start_byte == name.end_byte:
            return False
        item.name_start = name.start_byte
        item.name = _decode(source[item.name_start : name.end_byte])
        item.qualified_name = item.scope = _join(prefix, item.name)
        if item.kind == "function" and parent is not None and parent.kind in ("impl", "trait"):
            item.kind = "method"
    item.parent = parent.qualified_name if parent else None
    return True


def _referent(node: Node) -> Node:
    """The type a reference or pointer type points to (`&'a mut Bar<T>` -> `Bar<T>`): an impl
    for `&'a Utf8Sequence` puts its items under `Utf8Sequence`, as rustdoc lists them, not
    under `&'a Utf8Sequence` (`utf8::&'a Utf8Sequence::into_iter`)."""
    while node.type in ("reference_type", "pointer_type"):
        inner = node.child_by_field_name("type")
        if inner is None:
            break
        node = inner
    return node


def _type_path(node: Node, source: bytes) -> str | None:
    """A type written with a path, as written without generics or spaces (`io::Error`,
    `crate::pool::Pool` for `crate::pool::Pool<T>`); None for a name alone, or a qualified
    path (`<T as Trait>::Output`)."""
    if node.type == "generic_type":
        node = node.child_by_field_name("type") or node
    if node.type != "scoped_type_identifier":
        return None
    text = "".join(_decode(source[node.start_byte : node.end_byte]).split())
    if text.startswith("<"):
        return None
    return _strip_generics(text).removeprefix("::")


def _resolved(path: str, prefix: str) -> str:
    """`path` from the module `prefix`: `crate::` from the crate's root, `self::` and `super::`
    from `prefix`; any other path as written (`io::Error`: what `use` line names `io` is not
    read here)."""
    parts = path.split("::")
    if parts[0] == "crate":
        return "::".join(parts[1:])
    if parts[0] not in ("self", "super"):
        return path
    scope = prefix.split("::") if prefix else []
    while parts and parts[0] in ("self", "super"):
        if parts.pop(0) == "super" and scope:
            scope.pop()
    return "::".join(scope + parts)


def _type_name(node: Node, source: bytes) -> str:
    """A type's name without path or generics: `io::Pool<T>` -> `Pool`; `&'a [T]` as written."""
    if node.type == "generic_type":
        node = node.child_by_field_name("type") or node
    if node.type == "scoped_type_identifier":
        node = node.child_by_field_name("name") or node
    type_text = _decode(source[node.start_byte : node.end_byte])
    if node.type == "type_identifier":
        return type_text
    return " ".join(_strip_generics(type_text).split())


def _strip_generics(type_text: str) -> str:
    """`Box<dyn Fn() -> T>` -> `Box`: drops balanced `<...>` (an arrow's `>` is no bracket)."""
    kept = []
    depth = 0
    previous = ""
    for char in type_text:
        if char == "<":
            depth += 1
        elif char == ">" and previous != "-" and depth:
            depth -= 1
        elif not depth:
            kept.append(char)
        previous = char
    return "".join(kept)


class _Owners:
    """Innermost enclosing symbol of a byte offset: `names[bisect_right(bounds, offset) - 1]`."""

    def __init__(self, items: list[_Item]) -> None:
        self.bounds = [0]
        self.names: list[str | None] = [None]
        stack: list[_Item] = []
        for item in items:  # source order, outer first
            self._close(stack, item.start)
            self.bounds.append(item.start)
            self.names.append(item.qualified_name)
            stack.append(item)
        self._close(stack, None)

    def _close(self, stack: list[_Item], until: int | None) -> None:
        while stack and (until is None or stack[-1].end <= until):
            self.bounds.append(stack.pop().end)
            self.names.append(stack[-1].qualified_name if stack else None)

    def __call__(self, offset: int) -> str | None:
        return self.names[bisect_right(self.bounds, offset) - 1]


def _symbol(item: _Item, source: bytes) -> Symbol:
    node = item.node
    start, end = node.start_point, node.end_point
    # Positional: keyword arguments would cost a dict per symbol.
    return Symbol(
        item.name,
        item.qualified_name,
        item.kind,
        start.row + 1,  # start_line
        end.row + 1,  # end_line
        start.column,  # start_col
        end.column,  # end_col
        item.start,  # start_byte
        item.end,  # end_byte
        _signature(node, source),
        item.parent,
        "\n".join(item.docs) if item.docs else None,  # doc
    )


def _signature(node: Node, source: bytes) -> str:
    """The item's header up to its body or value, on one line: `pub fn get(&self) -> u8`."""
    body_field = _BODY_FIELD.get(node.type)
    cut = node.child_by_field_name(body_field) if body_field else None
    if node.type == "enum_variant" and cut is not None and cut.type != "field_declaration_list":
        cut = None  # a tuple variant's fields are its signature: `InvalidByte(usize, u8)`
    if cut is None:
        end = node.end_byte
    elif body_field == "name":
        end = cut.end_byte
    else:
        end = cut.start_byte
    header = _decode(b" ".join(source[node.start_byte : end].split()).rstrip(b" ;=,"))
    # str, not bytes: `bytes in bytes` first tries the needle as an int and formats an error.
    if "( " in header or "[ " in header or " )" in header or " ]" in header:
        header = _BRACKET_SPACE.sub("", header)
    return header


def _references(
    found: dict[str, list[Node]], source: bytes, items: list[_Item], owners: _Owners
) -> list[Reference]:
    """Names used, once per (name, line, enclosing symbol), leaving out definitions' own names."""
    defined = {item.name_start for item in items}
    bounds, names = owners.bounds, owners.names
    # Captures come in an order that varies from one parse to the next: visited by offset, the
    # first offset of each (line, name, owner) comes first, and a dict keeps that order (one
    # C sort by offset beat a Python-level comparison per node to keep each key's first offset).
    spans = [
        (node.start_byte, node)
        for capture, nodes in found.items()
        if capture.startswith("reference.")
        for node in nodes
    ]
    spans.sort(key=itemgetter(0))
    keys: dict[tuple[int, bytes, str | None], None] = {}
    for start, node in spans:  # the hottest loop: each node attribute is read once
        name = source[start : node.end_byte]
        if name and start not in defined:  # no name: error recovery made the node up
            keys[node.start_point.row, name, names[bisect_right(bounds, start) - 1]] = None
    return [Reference(name.decode("utf-8", "replace"), row + 1, owner) for row, name, owner in keys]


def _strings(nodes: list[Node], source: bytes, owners: _Owners) -> list[tuple[int, TextElement]]:
    """String literals by start byte, as written between their quotes (and raw strings' `#`s),
    escapes kept but for line continuations (_continued)."""
    bounds, names = owners.bounds, owners.names
    strings = []
    for node in nodes:
        start = node.start_byte
        raw = source[start : node.end_byte]
        content: str | None
        if raw[:1] == b'"' and raw[-1:] == b'"' and len(raw) > 1:  # the common `"..."`
            content = _continued(raw[1:-1])
        elif (content := _prefixed_string_content(raw)) is None:
            continue
        row = node.start_point.row + 1
        symbol = names[bisect_right(bounds, start) - 1]
        element = TextElement("string_literal", content, row, row + raw.count(b"\n"), symbol)
        strings.append((start, element))
    return strings


def _prefixed_string_content(raw: bytes) -> str | None:
    """`br#"a"#` -> `a`; None for a node error recovery made up without quotes."""
    quote = raw.find(b'"')
    if quote < 0:
        return None
    closing = b'"' + b"#" * raw.count(b"#", 0, quote)
    end = len(raw) - len(closing) if raw.endswith(closing) else len(raw)
    body = raw[quote + 1 : max(end, quote + 1)]
    return _decode(body) if b"r" in raw[:quote] else _continued(body)


def _continued(body: bytes) -> str:
    """The body of a string that is not raw, its lines joined where a backslash ends one: Rust
    drops the backslash, the newline and the whitespace that starts the next line, so a message
    written over two lines is searched for as the one line it prints. Other escapes stay."""
    if b"\\\n" not in body and b"\\\r" not in body:  # most strings: no look at each escape
        return body.decode("utf-8", "replace")
    return _decode(_ESCAPE.sub(_kept_escape, body))


def _kept_escape(escape: re.Match[bytes]) -> bytes:
    return b"" if escape[1] else escape[0]


def _style(head: bytes) -> str:
    """A comment's style from its first four bytes: a doc marker, or `//` / `/*` for plain ones."""
    style = _DOC_STYLES.get(head[:3])
    if (
        style is None
        or (style == "///" and head[3:4] == b"/")
        or (style == "/**" and head[3:4] in (b"*", b"/"))
    ):
        return "//" if head[:2] == b"//" else "/*"
    return style


class _Run(NamedTuple):
    """A block comment, or a run of line comments of one style on consecutive lines."""

    style: str
    start: int
    end: int
    row: int  # 1-based
    end_row: int
    content: str
    last: Node  # the run's last comment node


class _Comments:
    """Turns comment nodes into elements, filling outer doc comments into their items."""

    def __init__(self, source: bytes, items: list[_Item], owners: _Owners, module: str) -> None:
        self.source, self.items, self.owners, self.module = source, items, owners, module
        self.item_starts = [item.start for item in items]

    def elements(self, nodes: list[Node]) -> list[tuple[int, TextElement]]:
        """Elements by start byte, one per block comment or run of line comments."""
        runs = self._runs(nodes)
        documented = self._documented(runs)
        return [(run.start, self._element(run, documented.get(i))) for i, run in enumerate(runs)]

    def _runs(self, nodes: list[Node]) -> list[_Run]:
        # Captures do not come in source order; runs need it.
        spans = sorted([(node.start_byte, node) for node in nodes], key=itemgetter(0))
        starts = [start for start, _ in spans]
        runs = []
        index = 0
        while index < len(spans):
            start, node = spans[index]
            style = _style(self.source[start : start + 4])
            point = node.start_point
            run = None
            if (
                style[1] == "/"
            ):  # a comment after code on its line stays alone: it is about that line
                alone = not point.column or self.source[start - point.column : start].isspace()
                run = (_LINE_RUNS[style] if alone else _REST_OF_LINE).match(self.source, start)
            if run is None:
                end = node.end_byte
                content = _block_text(self.source[start:end], len(style))
                rows = self.source.count(b"\n", start, end)
                index += 1
            else:
                end = run.end()
                content = _line_text(run.group(), style)
                rows = run.group().count(b"\n")
                index = bisect_left(starts, end, index + 1)  # skip the run's other lines
            row = point.row + 1
            runs.append(_Run(style, start, end, row, row + rows, content, spans[index - 1][1]))
        return runs

    def _documented(self, runs: list[_Run]) -> dict[int, _Item]:
        """Index of each outer doc comment run -> the item it documents, when that is a symbol.

        That is the first item after it when only whitespace, plain comments and attributes lie
        between, or what the next outer doc comment documents when that comes first: walking
        backwards, every gap is scanned once. Asking the tree (`_next_item`) starts from the root,
        so it is asked only when `_DOC_GAP` stops at an attribute or comment too complex for it.
        """
        documented: dict[int, _Item] = {}
        run_at = {run.start: index for index, run in enumerate(runs)}
        for index in range(len(runs) - 1, -1, -1):
            run = runs[index]
            next_item = bisect_left(self.item_starts, run.end)
            if run.style not in _OUTER_DOC_STYLES or next_item == len(self.items):
                continue
            item = self.items[next_item]
            gap = _DOC_GAP.match(self.source, run.end, item.start)  # never None: matches ""
            stop = gap.end() if gap is not None else run.end
            follower = run_at.get(stop)
            if stop == item.start:
                documented[index] = item
            elif follower is not None and runs[follower].style in _OUTER_DOC_STYLES:
                if follower in documented:  # the next doc comment documents the same item
                    documented[index] = documented[follower]
            elif (
                self.source[stop : stop + 1] in (b"#", b"/") and _next_item(run.last) == item.start
            ):
                documented[index] = item
        return documented

    def _element(self, run: _Run, item: _Item | None) -> TextElement:
        owner = self.owners(run.start)
        if run.style not in _DOCSTRING_STYLES:
            return TextElement("comment", run.content, run.row, run.end_row, owner)
        if item is not None:
            item.docs.append(run.content)
            if item.kind != "field":  # a field's doc stays its record's text, as in C
                owner = item.qualified_name
        elif run.style not in _OUTER_DOC_STYLES:  # inner docs document what encloses them
            owner = owner or self.module or None
        return TextElement("docstring", run.content, run.row, run.end_row, owner)


def _next_item(node: Node) -> int | None:
    """Start byte of the first sibling after `node` that is no attribute or comment, if it is near.

    A cursor from the parent steps between siblings in constant time; `next_named_sibling` would
    search the parent's children again at every step.
    """
    parent = node.parent
    if parent is None:
        return None
    cursor = parent.walk()
    if cursor.goto_first_child_for_byte(node.end_byte) is None:
        return None
    for _ in range(_MAX_SIBLINGS_BEFORE_ITEM):
        sibling = cursor.node
        if sibling is None:  # a cursor on a child always has a node
            return None
        if sibling.is_named and sibling.type not in _BETWEEN_DOC_AND_ITEM:
            return sibling.start_byte if sibling.start_byte >= node.end_byte else None
        if not cursor.goto_next_sibling():
            return None
    return None


def _line_text(run: bytes, style: str) -> str:
    """A run of line comments without markers (and one space after them), dedented."""
    first = run.lstrip(b"/") if style == "//" else run[3:]
    text = _NEXT_MARKERS[style].sub(b"\n", first[1:] if first[:1] == b" " else first)
    if text.find(b"\r") >= 0 or text.find(b" \n") >= 0 or text.find(b"\t\n") >= 0:
        text = _TRAILING_SPACE.sub(b"", text)
    text = text.rstrip().lstrip(b"\n")
    if text[:1] in _INDENT:  # only then can every line be indented
        return _clean(text.split(b"\n"), 0)
    return _decode(text)


def _block_text(raw: bytes, opener: int) -> str:
    """A block comment without opener, `*/` and the `*` that starts each continuation line."""
    body = raw[opener:-2] if raw.endswith(b"*/") and len(raw) >= opener + 2 else raw[opener:]
    lines = [line.rstrip() for line in body.split(b"\n")]
    if all(line.lstrip()[:1] == b"*" for line in lines[1:] if line):
        lines[1:] = [_unstar(line) for line in lines[1:]]
    lines[0] = lines[0].strip()
    return _clean(lines, 1)


def _unstar(line: bytes) -> bytes:
    line = line.lstrip()[1:]
    return line[1:] if line[:1] == b" " else line


def _clean(lines: list[bytes], first: int) -> str:
    """Like inspect.cleandoc: drop the indentation common to lines[first:], then blank end lines."""
    indented = [line for line in lines[first:] if line]
    # Most comments have an unindented line, often the first: then there is nothing to drop.
    if indented and indented[0][:1] in _INDENT and all(line[:1] in _INDENT for line in indented):
        margin = min(len(line) - len(line.lstrip()) for line in indented)
        lines[first:] = [line[margin:] for line in lines[first:]]
    start, end = 0, len(lines)
    while start < end and not lines[start]:
        start += 1
    while end > start and not lines[end - 1]:
        end -= 1
    return _decode(b"\n".join(lines[start:end]))
