"""Structure of Python files that `ast` rejects, read with tree-sitter-python instead."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from .python_structure import Definition, SourceText, Structure, assigned_kind, is_overload
from .treesitter import parse

_ASSIGNMENT_STATEMENTS = ("expression_statement", "type_alias_statement")
# Parts of a compound statement that hold a block of statements (`else:`, `except E:`, ...)
_CLAUSES = (
    "else_clause",
    "elif_clause",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "case_clause",
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
            if node.type == "case_clause":  # as ast's match_case: no statement of its own
                stack.extend((block, parent, in_class) for block in _blocks(node))
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
                overload = (
                    node is not definition
                    and not is_class
                    and any(
                        is_overload(_decorated_name(d))
                        for d in node.named_children
                        if d.type == "decorator"
                    )
                )
                defs.append(
                    _definition(definition, block, name, qualified, kind, parent, text, overload)
                )
                stack.append((block, qualified, is_class))
                continue
            if (parent is None or in_class) and node.type in _ASSIGNMENT_STATEMENTS:
                defs.extend(_assigned_names(node, parent, in_class, text))
            stack.extend((block, parent, in_class) for block in _blocks(node))
    defs.sort(key=lambda d: d.start)
    return Structure(defs, starts, _docstring_at(root, text))


def _blocks(node: Node) -> Iterator[Node]:
    """The blocks of statements in a compound statement, its clauses' included, as ast's
    `body`, `orelse`, `handlers` and `finalbody` (a match statement's block holds its cases)."""
    for child in node.named_children:
        if child.type == "block":
            yield child
        elif child.type in _CLAUSES and child.type != "case_clause":
            yield from _blocks(child)


def _assigned_names(
    statement: Node, parent: str | None, in_class: bool, text: SourceText
) -> list[Definition]:
    """The names an assignment at module level or in a class body binds, as the ast path finds
    them (`A = 1`, `b: int`, `c, *d = ...`, `e = f = ...`, `X: TypeAlias = ...`, `type Y =
    ...`): a file with one syntax error keeps its constants and attributes."""
    names: list[str] = []
    alias = statement.type == "type_alias_statement"
    if alias:  # `type Y[T] = ...`: the name is the first identifier of the left side
        left = statement.child_by_field_name("left")
        names += [_text(n) for n in _first_identifier(left)]
    for child in statement.named_children if not alias else ():
        assignment: Node | None = child
        while assignment is not None and assignment.type == "assignment":
            left = assignment.child_by_field_name("left")
            if left is not None:
                names += _target_names(left)
            annotation = assignment.child_by_field_name("type")
            value = assignment.child_by_field_name("right")
            if annotation is not None and value is not None:
                alias = _text(annotation).split(".")[-1] == "TypeAlias"
            assignment = value
    names = [name for name in names if name]  # error recovery inserts empty MISSING names
    start, end = _position(statement, text), _end(statement, text)
    return [
        Definition(
            name,
            f"{parent}.{name}" if parent else name,
            assigned_kind(name, in_class, alias),
            start,
            end,
            end,
            parent,
            None,
        )
        for name in names
    ]


_TARGET_LISTS = ("pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern")


def _target_names(target: Node) -> list[str]:
    """The names an assignment's left side binds: `a`, `a, (b, c)`, `[d, *e]`."""
    if target.type == "identifier":
        return [_text(target)]
    if target.type in _TARGET_LISTS:
        return [name for child in target.named_children for name in _target_names(child)]
    return []  # `a.b = ...`, `a[0] = ...`: binds no new name


def _decorated_name(decorator: Node) -> str:
    """`typing.overload` for `@typing.overload  # noqa`: the decorator's expression, without
    the `@` and a trailing comment, whose text the decorator node also holds."""
    expression = next((c for c in decorator.named_children if c.type != "comment"), None)
    if expression is None or expression.type not in ("identifier", "attribute"):
        return ""
    return "".join(_text(expression).split())


def _first_identifier(node: Node | None) -> list[Node]:
    while node is not None and node.type != "identifier":
        node = node.named_children[0] if node.named_children else None
    return [node] if node is not None else []


def _definition(
    node: Node,
    block: Node,
    name: str,
    qualified: str,
    kind: str,
    parent: str | None,
    text: SourceText,
    overload: bool = False,
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
        overload,
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
