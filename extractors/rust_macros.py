"""Rust items written inside a macro call at item level, made visible to the parser.

Crates gate whole groups of items behind their own macros: `cfg_rt! { pub fn spawn() {} }`
(tokio keeps about a tenth of its functions in such blocks, `Runtime::new` among them), and
`cfg_if::cfg_if! { if #[cfg(unix)] { mod unix; } else { mod other; } }`. tree-sitter reads a
macro call's body as a flat token tree, so none of those items was a definition. Here the call's
head (`cfg_rt! {`) and closing brace are blanked, and for the `cfg_if` form each branch's
condition, `else` and braces, so the items stand where they are written, at the level of the
call; the file is parsed again from the old tree (an incremental parse). A call whose body does
not start like an item (`from_transmute! { unsafe u32x4 => __m128i }`) is kept as it was, and so
is one whose unwrapped body holds a syntax error. `bitflags! { pub struct F: u8 { const A = 1; } }`
is unwrapped to `pub struct F { }`: the struct the crate defines, its flags' docs kept as comments.

Blanking turns bytes into spaces and keeps newlines, so every offset, line and column is the
file's own: the extractor reads the tree of the blanked text and slices the original source.
"""

from __future__ import annotations

import re

from tree_sitter import Node, Point, Tree

from .treesitter import parser

# Before the first item of a body: blanks and comments (a doc comment `///` among them), then
# what may start an item, or the `if #[cfg(..)]` of the cfg_if form.
_ITEM_START = re.compile(
    rb"(?:\s|//[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)*"  # one blank at a time: no backtracking blow-up
    rb"(?:(?:pub|fn|mod|use|struct|enum|union|impl|trait|type|const|static|extern"
    rb"|unsafe\s+(?:fn|impl|trait|extern)|async\s+(?:fn|unsafe))\b"
    rb"|#!?\[|macro_rules!|(?P<cfg_if>if\s*#\s*\[))"
)
_CALL_HINT = re.compile(rb"!\s*\{")  # no file without one holds a candidate
_CONTAINERS = frozenset({"source_file", "declaration_list"})  # where items stand
_COMMENTS = frozenset({"line_comment", "block_comment"})
_NESTED = frozenset({"mod_item", "impl_item", "trait_item", "foreign_mod_item"})
ROUNDS = 3  # a block inside an unwrapped block is found on the next round
_SPACE = 0x20
_NEWLINE = 0x0A
_CLOSING, _SEMICOLON = ord("}"), ord(";")


def parse(source: bytes) -> tuple[Node, bytes, list[Node]]:
    """The tree of `source` with the items of item-level macro calls parsed as items, the
    text it was parsed from (`source` itself when nothing was unwrapped), and the flag lists
    of `bitflags!` structs as they were read before their tokens were blanked (so that their
    names and strings can still be taken from them)."""
    tree = parser("rust").parse(source)
    if not _CALL_HINT.search(source):
        return tree.root_node, source, []
    text = source
    hidden: list[Node] = []
    for _ in range(ROUNDS):
        calls = _calls(tree.root_node)
        spans = [span for call in calls for span in _blanks(call, text)]
        if not spans:
            break
        clean = not tree.root_node.has_error
        candidate = _blanked(text, spans)
        reparsed = _reparse(tree, text, candidate, spans)
        broken = _failed(reparsed, spans, clean)
        if broken:
            # Keep the broken calls as they were, the others unwrapped. Which call is broken
            # is found by unwrapping each alone: the parser's recovery can show one call's
            # error inside the next (nix's aio.rs: `libc_enum! { enum E {..} impl TryFrom<i32>
            # }` lacks a `;`, and only the well-formed call after it looked broken).
            spans = [
                span
                for own in _by_call(spans)
                if not _failed(_reparse(tree, text, _blanked(text, own), own), own, clean)
                for span in own
            ]
            candidate = _blanked(text, spans)
            reparsed = _reparse(tree, text, candidate, spans)
            broken = _failed(reparsed, spans, clean)
        while broken and spans:  # well-formed alone, broken together: the first one out
            first = min(broken)
            spans = [span for span in spans if span[2] != first]
            candidate = _blanked(text, spans)
            reparsed = _reparse(tree, text, candidate, spans)
            broken = _failed(reparsed, spans, clean)
        if not spans:
            break
        unwrapped = {span[2] for span in spans}
        hidden += [
            flags
            for call in calls
            if call.start_byte in unwrapped and _is_bitflags(call, text)
            for _, flags in _flag_lists(call.named_children[-1])
        ]
        tree, text = reparsed, candidate
    return tree.root_node, text, hidden


def _by_call(spans: list[Span]) -> list[list[Span]]:
    """The spans grouped by the call they belong to, in the calls' order."""
    groups: dict[int, list[Span]] = {}
    for span in spans:
        groups.setdefault(span[2], []).append(span)
    return [groups[call] for call in sorted(groups)]


def _failed(reparsed: Tree, spans: list[Span], clean: bool) -> set[int]:
    """The calls whose unwrapping broke the parse: an error within their reach, or, in a file
    that parsed without error before, any error at all (recovery can put it past the call)."""
    broken = _broken_calls(reparsed.root_node, spans)
    if not broken and clean and reparsed.root_node.has_error:
        return {span[2] for span in spans}
    return broken


def _calls(root: Node) -> list[Node]:
    """The macro calls standing where items stand, with a `{ .. }` body that starts like an
    item, in the file, in modules, impls, traits and extern blocks (not in function bodies)."""
    found = []
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            kind = child.type
            if kind == "macro_invocation" and node.type in _CONTAINERS:
                found.append(child)
            elif kind == "expression_statement" and node.type in _CONTAINERS:
                # `inner! { .. }` then the `;` an unwrapped outer call's brace became
                call = child.named_children[0] if child.named_child_count == 1 else None
                if call is not None and call.type == "macro_invocation":
                    found.append(call)
            elif kind in _NESTED or kind in _CONTAINERS:
                stack.append(child)
    return found


# (start, end, the call's start byte): a range to blank, named by the call it belongs to
Span = tuple[int, int, int]


def _blanks(call: Node, text: bytes) -> list[Span]:
    body = call.named_children[-1] if call.named_child_count else None
    if body is None or body.type != "token_tree" or text[body.start_byte] != ord("{"):
        return []
    head = call.start_byte
    start = _ITEM_START.match(text, body.start_byte + 1)
    if start is None:
        return []
    spans = [(head, body.start_byte + 1, head), (body.end_byte - 1, body.end_byte, head)]
    if _is_bitflags(call, text):
        return spans + _flag_structs(body, head)
    if start.group("cfg_if") is None:
        return spans
    # `if #[cfg(a)] { .. } else if #[cfg(b)] { .. } else { .. }`: every token but the branches'
    # insides; a body of another shape is left alone.
    tokens = body.children[1:-1]
    branches = [t for t in tokens if t.type == "token_tree" and text[t.start_byte] == ord("{")]
    if not branches or tokens[-1] is not branches[-1]:
        return []
    for token in tokens:
        if token in branches:
            spans += [(token.start_byte, token.start_byte + 1, head)]
            spans += [(token.end_byte - 1, token.end_byte, head)]
        else:
            spans.append((token.start_byte, token.end_byte, head))
    return spans


def _is_bitflags(call: Node, text: bytes) -> bool:
    """`bitflags!`, and wrappers named after it (nix's `libc_bitflags!`)."""
    name = call.child_by_field_name("macro")
    return name is not None and text[name.end_byte - 8 : name.end_byte] == b"bitflags"


def _flag_lists(body: Node) -> list[tuple[Node, Node]]:
    """(the `:` after the name, the `{ .. }` of flags) of each `struct Name: Type { .. }`."""
    found = []
    tokens = body.children[1:-1]
    for index, token in enumerate(tokens[:-3]):
        if token.type != "struct" or tokens[index + 2].type != ":":
            continue
        for inner in tokens[index + 3 :]:
            if inner.type == "token_tree" and inner.text is not None and inner.text[:1] == b"{":
                found.append((tokens[index + 2], inner))
                break
    return found


def _flag_structs(body: Node, head: int) -> list[Span]:
    """`bitflags! { pub struct OFlags: u32 { const RDONLY = 0; } }`: each struct's `: u32` and
    every token of its braces but the comments (the flags are `const` without a type), so that
    `pub struct OFlags { /// Read only. }` is left: the struct the crate defines, with the
    flags' docs as comments. The flags themselves are not symbols."""
    spans: list[Span] = []
    for colon, flags in _flag_lists(body):
        spans.append((colon.start_byte, flags.start_byte, head))
        spans += [
            (flag.start_byte, flag.end_byte, head)
            for flag in flags.children[1:-1]
            if flag.type not in _COMMENTS
        ]
    return spans


def _blanked(text: bytes, spans: list[Span]) -> bytes:
    """`text` with the spans blanked, and a lone closing brace made a `;`: an empty statement
    where items stand, which ends an item the macro let go without one (`thread_local! {
    static X: Cell<u8> = { Cell::new(0) } }`: Rust std's OUTPUT_CAPTURE)."""
    out = bytearray(text)
    for start, end, _call in spans:
        if end - start == 1 and text[start] == _CLOSING:
            out[start] = _SEMICOLON
        else:
            out[start:end] = bytes(_NEWLINE if b == _NEWLINE else _SPACE for b in text[start:end])
    return bytes(out)


def _reparse(tree: Tree, text: bytes, candidate: bytes, spans: list[Span]) -> Tree:
    """`candidate` parsed again from `tree` (of `text`): the edits change no length."""
    old = tree.copy()
    for start, end, _call in spans:
        point = _point(text, start), _point(text, end)
        old.edit(start, end, end, point[0], point[1], point[1])
    return parser("rust").parse(candidate, old)


def _point(text: bytes, offset: int) -> Point:
    row = text.count(b"\n", 0, offset)
    return Point(row, offset - (text.rfind(b"\n", 0, offset) + 1))


def _broken_calls(root: Node, spans: list[Span]) -> set[int]:
    """The calls (by start byte) whose unwrapped body the parser could not read: an ERROR or a
    missing token between their first and last blanked byte."""
    if not root.has_error:
        return set()
    reach: dict[int, int] = {}
    for _start, end, call in spans:
        reach[call] = max(reach.get(call, end), end)
    errors = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            errors.append((node.start_byte, node.end_byte))
        elif node.has_error:
            stack.extend(node.children)
    return {
        call
        for call, end in reach.items()
        if any(start < end and stop > call for start, stop in errors)
    }
