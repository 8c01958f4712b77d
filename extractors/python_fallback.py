"""Structure of Python files that `ast` rejects, read with tree-sitter-python instead."""

from __future__ import annotations

from tree_sitter import Node

from .python_structure import Definition, SourceText, Structure
from .treesitter import parse

_BODIES = ("block", "module")
_COMPOUND_BODIES = (
    "block",
    "else_clause",
    "elif_clause",
    "except_clause",
    "finally_clause",
    "case_clause",
    "match_statement",
)


def structure(source: bytes, text: SourceText) -> Structure:
    """Classes, functions and methods, statement starts and docstrings, from tree-sitter."""
    root = parse("python", text.text.encode())
    defs: list[Definition] = []
    starts: set[tuple[int, int]] = set()
    stack: list[tuple[Node, str | None, bool]] = [(root, None, False)]
    while stack:
        body, parent, in_class = stack.pop()
        for node in body.named_children:
            if node.type == "comment":
                continue
            starts.add(_position(node, text))
            definition = (
                node.child_by_field_name("definition")
                if node.type == "decorated_definition"
                else node
            )
            if definition is not None and definition.type in (
                "function_definition",
                "class_definition",
            ):
                name_node = definition.child_by_field_name("name")
                block = definition.child_by_field_name("body")
                if name_node is None or block is None:
                    continue
                name = _text(name_node)
                qualified = f"{parent}.{name}" if parent else name
                is_class = definition.type == "class_definition"
                kind = "class" if is_class else ("method" if in_class else "function")
                defs.append(_definition(definition, block, name, qualified, kind, parent, text))
                stack.append((block, qualified, is_class))
                continue
            if parent is None and node.type == "expression_statement":
                defs.extend(_module_names(node, text))
            for child in node.named_children:
                if child.type in _COMPOUND_BODIES:
                    stack.append((child, parent, in_class))
    defs.sort(key=lambda d: d.start)
    return Structure(defs, starts, _docstring_at(root, text))


def _module_names(statement: Node, text: SourceText) -> list[Definition]:
    """Names bound at module level (`A = 1`, `b: int = 2`, `c, d = ...`, `e = f = ...`), as the
    ast path finds them: a file with one syntax error keeps its constants."""
    names: list[str] = []
    for child in statement.named_children:
        assignment: Node | None = child
        while assignment is not None and assignment.type == "assignment":
            left = assignment.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                names.append(_text(left))
            elif left is not None and left.type in ("pattern_list", "tuple_pattern"):
                names += [_text(c) for c in left.named_children if c.type == "identifier"]
            assignment = assignment.child_by_field_name("right")
    names = [name for name in names if name]  # error recovery inserts empty MISSING names
    start, end = _position(statement, text), _end(statement, text)
    return [
        Definition(
            name, name, "constant" if name.isupper() else "variable", start, end, end, None, None
        )  # fmt: skip
        for name in names
    ]


def _definition(
    node: Node,
    block: Node,
    name: str,
    qualified: str,
    kind: str,
    parent: str | None,
    text: SourceText,
) -> Definition:
    first = next((c for c in block.named_children if c.type != "comment"), block)
    return Definition(
        name,
        qualified,
        kind,
        _position(node, text),
        _end(node, text),
        _position(first, text),
        parent,
        _docstring_at(block, text),
    )


def _docstring_at(body: Node, text: SourceText) -> tuple[int, int] | None:
    first = next((c for c in body.named_children if c.type != "comment"), None)
    if first is not None and first.type == "expression_statement" and first.named_child_count == 1:
        value = first.named_children[0]
        if value.type == "string":
            return _position(value, text)
    return None


def _position(node: Node, text: SourceText) -> tuple[int, int]:
    row, byte_col = node.start_point
    return (row + 1, text.char_col(row + 1, byte_col))


def _end(node: Node, text: SourceText) -> tuple[int, int]:
    row, byte_col = node.end_point
    return (row + 1, text.char_col(row + 1, byte_col))


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text else ""
