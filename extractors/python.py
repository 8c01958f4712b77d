"""Python: `ast` for structure, a purpose-built lexer for comments and strings.

Files `ast` rejects (Python 2, syntax newer than the running interpreter, nesting past the
recursion limit) fall back to tree-sitter-python; no file is dropped for a parse error.
"""

from __future__ import annotations

import ast
import bisect
import functools
import inspect
import keyword
import re
import sys
from collections.abc import Iterator
from itertools import filterfalse, repeat

from .model import Extraction, Reference, Symbol, TextElement
from .pylex import Token, lex
from .python_structure import (
    VALUE_KINDS,
    Definition,
    SourceText,
    Structure,
    assigned_kind,
    is_overload,
)

_IDENTIFIER = re.compile(r"\b[^\W\d]\w*")
# The same matches on ASCII text, 2.4x faster (Unicode's classes cost the general pattern).
_ASCII_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*", re.ASCII)
_GROUP, _START = re.Match.group, re.Match.start
_NOT_REFERENCES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_WHITESPACE = re.compile(r"\s+")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ASSIGNMENTS: tuple[type[ast.stmt], ...] = (ast.Assign, ast.AnnAssign)
if sys.version_info >= (3, 12):  # `type X = ...` (PEP 695); older Pythons' ast rejects the
    _ASSIGNMENTS += (ast.TypeAlias,)  # file, and tree-sitter reads it
_MAX_VALUE = 80  # characters of an assignment kept as its signature, then " …"


def extract(source: bytes, rel_path: str) -> Extraction:
    """Symbols, references, comments, docstrings and strings of one Python file."""
    text = SourceText(source.decode("utf-8", "replace"))
    tokens = lex(text.text)
    note: str | None
    try:
        tree = ast.parse(text.text, filename=rel_path, type_comments=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        structure, status, note = _fallback(source, text, error)
    else:
        try:
            structure = _structure_from_ast(tree, text)
            status, note = "ok", None
        except (AttributeError, TypeError, KeyError, IndexError, RecursionError) as error:
            # A node shape this reader does not know (a newer Python's grammar, as `match`
            # once was): the file is read with tree-sitter rather than lost, and the note
            # names what failed so the gap is seen and fixed.
            structure, status, note = _fallback(source, text, error, "reading ast failed: ")
    symbols = [_symbol(d, text, tokens) for d in structure.defs]
    owners = _owners(symbols, len(text.line_starts))
    documented: dict[tuple[int, int], str | None] = {
        d.docstring_at: d.qualified_name for d in structure.defs if d.docstring_at
    }
    if structure.module_docstring_at:
        documented[structure.module_docstring_at] = _module_name(rel_path)
    texts = list(_texts(tokens, documented, structure.statement_starts, text, owners))
    references = _references(tokens, text, owners, symbols)
    # By where each docstring starts, not by its owner's name: a property's getter and setter
    # share one (rich's `Console.width` showed "Set width." for the getter; 21 such pairs).
    doc_at_line = {t.line: t.content for t in texts if t.element_type == "docstring"}
    symbols = [
        _with_doc(s, doc_at_line.get(d.docstring_at[0]) if d.docstring_at else None)
        for s, d in zip(symbols, structure.defs, strict=True)
    ]
    return Extraction(symbols, references, texts, status, note)


def _fallback(
    source: bytes, text: SourceText, error: BaseException, why: str = ""
) -> tuple[Structure, str, str]:
    from . import python_fallback  # tree-sitter is only loaded for files ast cannot serve

    detail = f"{why}{type(error).__name__}: {getattr(error, 'msg', error)}"
    return python_fallback.structure(source, text), "fallback", detail


def _module_name(rel_path: str) -> str | None:
    """Dotted module path of `rel_path` (`pkg/db/__init__.py` -> `pkg.db`), for module docstrings."""
    parts = rel_path.removesuffix(".pyi").removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or None


# --- definitions from ast ------------------------------------------------------------------


def _structure_from_ast(tree: ast.Module, text: SourceText) -> Structure:
    """Classes, functions, methods and module-level names; plus every statement's start."""
    defs: list[Definition] = []
    starts: set[tuple[int, int]] = set()
    stack: list[tuple[list[ast.stmt], str | None, bool]] = [(tree.body, None, False)]
    ascii = text.ascii  # byte columns are character columns: no call per statement
    while stack:
        body, parent, in_class = stack.pop()
        for node in body:
            if isinstance(node, ast.match_case):  # a `case` block: no position of its own
                stack.append((node.body, parent, in_class))
                continue
            line = node.lineno
            starts.add((line, node.col_offset if ascii else text.char_col(line, node.col_offset)))
            if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                qualified = f"{parent}.{node.name}" if parent else node.name
                kind = (
                    "class"
                    if isinstance(node, ast.ClassDef)
                    else ("method" if in_class else "function")
                )
                defs.append(_definition(node, qualified, kind, parent, text))
                stack.append((node.body, qualified, kind == "class"))
                continue
            if (parent is None or in_class) and isinstance(node, _ASSIGNMENTS):
                defs.extend(_assigned_names(node, parent, in_class, text))
            for field in _NESTED_FIELDS[type(node)]:  # none for most statements
                children = getattr(node, field, None)
                if children:
                    stack.append((children, parent, in_class))
    defs.sort(key=lambda d: d.start)
    return Structure(defs, starts, _docstring_at(tree.body, text))


class _NestedFields(dict[type[ast.AST], tuple[str, ...]]):
    """The fields of a statement type that hold statements, found on a type's first use (five
    getattr calls on each of Django's 400k statements found them)."""

    def __missing__(self, node_type: type[ast.AST]) -> tuple[str, ...]:
        fields = ("body", "orelse", "finalbody", "handlers", "cases")
        found = self[node_type] = tuple(f for f in fields if f in node_type._fields)
        return found


_NESTED_FIELDS = _NestedFields()


def _definition(
    node: ast.stmt, qualified: str, kind: str, parent: str | None, text: SourceText
) -> Definition:
    start = (node.lineno, text.char_col(node.lineno, node.col_offset))
    end = (
        node.end_lineno or node.lineno,
        text.char_col(node.end_lineno or node.lineno, node.end_col_offset or 0),
    )
    first = node.body[0]  # type: ignore[attr-defined]
    # A decorated first statement starts at its first `@` (ast's lineno is its `def` line),
    # in the same column: the header stops there, not after the decorators.
    decorators = getattr(first, "decorator_list", None)
    line = decorators[0].lineno if decorators else first.lineno
    header_end = (line, text.char_col(line, first.col_offset))
    doc = _docstring_at(node.body, text)  # type: ignore[attr-defined]
    overload = not isinstance(node, ast.ClassDef) and any(
        is_overload(_dotted(d))
        for d in node.decorator_list  # type: ignore[attr-defined]
    )
    return Definition(node.name, qualified, kind, start, end, header_end, parent, doc, overload)  # type: ignore[attr-defined]


def _dotted(node: ast.expr) -> str:
    """`typing.overload` for a decorator that is a (dotted) name; '' for a call or the like."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (value := _dotted(node.value)):
        return f"{value}.{node.attr}"
    return ""


def _docstring_at(body: list[ast.stmt], text: SourceText) -> tuple[int, int] | None:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return (first.lineno, text.char_col(first.lineno, first.col_offset))
    return None


def _assigned_names(
    node: ast.stmt, parent: str | None, in_class: bool, text: SourceText
) -> Iterator[Definition]:
    """The names an assignment at module level or in a class body binds (`A = 1`, `b: int`,
    `c, *d = ...`, `e = f = ...`, `X: TypeAlias = ...`, `type Y = ...`)."""
    if isinstance(node, ast.Assign):
        targets, alias = node.targets, False
    elif isinstance(node, ast.AnnAssign):
        targets, alias = [node.target], node.value is not None and _is_alias(node.annotation)
    else:  # ast.TypeAlias
        targets, alias = [node.name], True  # type: ignore[attr-defined]
    start = (node.lineno, text.char_col(node.lineno, node.col_offset))
    end_line = node.end_lineno or node.lineno
    end = (end_line, text.char_col(end_line, node.end_col_offset or 0))
    for name in _target_names(targets):
        qualified = f"{parent}.{name}" if parent else name
        kind = assigned_kind(name, in_class, alias)
        yield Definition(name, qualified, kind, start, end, end, parent, None)


def _target_names(targets: list[ast.expr]) -> Iterator[str]:
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, (ast.Tuple, ast.List)):
            yield from _target_names(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _target_names([target.value])


def _is_alias(annotation: ast.expr) -> bool:
    """`TypeAlias` or `typing.TypeAlias` (any module prefix)."""
    return (isinstance(annotation, ast.Name) and annotation.id == "TypeAlias") or (
        isinstance(annotation, ast.Attribute) and annotation.attr == "TypeAlias"
    )


# --- records ---------------------------------------------------------------------------------


def _symbol(d: Definition, text: SourceText, tokens: list[Token]) -> Symbol:
    start = text.offset(*d.start)
    end = text.offset(*d.end)
    header_end = text.offset(*d.header_end)
    signature = None
    if d.kind in VALUE_KINDS:  # an assignment: its name and the start of its value
        signature = _value_signature(text, start, end, tokens)
    return Symbol(
        name=d.name,
        qualified_name=d.qualified_name,
        kind=d.kind,
        start_line=d.start[0],
        end_line=d.end[0],
        start_col=text.byte_offset(start) - text.byte_offset(text.offset(d.start[0], 0)),
        end_col=text.byte_offset(end) - text.byte_offset(text.offset(d.end[0], 0)),
        start_byte=text.byte_offset(start),
        end_byte=text.byte_offset(end),
        signature=signature or _signature(text, start, header_end, tokens),
        parent=d.parent,
        is_definition=not d.overload,
    )


def _value_signature(text: SourceText, start: int, end: int, tokens: list[Token]) -> str:
    """`DEFAULT_TIMEOUT = 30`: an assignment's first line, at most _MAX_VALUE characters, and
    ` …` when the statement goes on (a long list, a call over several lines)."""
    # Bounded: an unbounded find() scans to the end of a minified line once per name.
    line_end = text.text.find("\n", start, min(end, start + _MAX_VALUE))
    cut = min(end, line_end if line_end >= 0 else end, start + _MAX_VALUE)
    header = _signature(text, start, cut, tokens)
    return header if cut >= end or not header else f"{header} …"


def _signature(text: SourceText, start: int, header_end: int, tokens: list[Token]) -> str:
    """The header from `def`/`class` to the colon before the body, comments left out."""
    pieces, pos = [], start
    for token in _tokens_between(tokens, start, header_end):
        if token.is_comment:
            pieces.append(text.text[pos : token.start])
            pos = token.end
    pieces.append(text.text[pos:header_end])
    header = _WHITESPACE.sub(" ", "".join(pieces)).strip()
    return header.removesuffix(":").rstrip() if header.endswith(":") else header


def _tokens_between(tokens: list[Token], start: int, end: int) -> list[Token]:
    # A token is a tuple whose first field is its start, and (start,) sorts before every token
    # starting there: tuples compared in C, not a key function called per step.
    first = bisect.bisect_left(tokens, (start,))
    last = bisect.bisect_left(tokens, (end,), first)
    return tokens[first:last]


def _with_doc(symbol: Symbol, doc: str | None) -> Symbol:
    return symbol if doc is None else symbol._replace(doc=doc)


def _owners(symbols: list[Symbol], lines: int) -> list[str | None]:
    """For each 1-based line, the qualified name of the innermost symbol around it."""
    owners: list[str | None] = [None] * (lines + 2)
    for symbol in sorted(symbols, key=lambda s: (s.start_line, -s.end_line)):
        if symbol.kind in ("class", "function", "method"):
            span = symbol.end_line - symbol.start_line + 1
            owners[symbol.start_line : symbol.end_line + 1] = [symbol.qualified_name] * span
    return owners


def _texts(
    tokens: list[Token],
    documented: dict[tuple[int, int], str | None],
    statement_starts: set[tuple[int, int]],
    text: SourceText,
    owners: list[str | None],
) -> Iterator[TextElement]:
    """Comments, docstrings and string literals (implicit concatenation is one literal)."""
    source = text.text
    for group in _groups(tokens, source, statement_starts, text):
        first, last = group[0], group[-1]
        line = text.line_of(first.start)
        end_line = text.line_of(last.end - 1) if last.end > last.start else line
        if first.is_comment:
            content = "\n".join(source[t.body_start : t.body_end].strip() for t in group)
            yield TextElement("comment", content, line, end_line, owners[line])
            continue
        body = "".join(source[t.body_start : t.body_end] for t in group)
        at = (line, first.start - text.line_starts[line - 1])
        if at in documented and len(group) == 1:
            yield TextElement("docstring", inspect.cleandoc(body), line, end_line, documented[at])
        else:
            yield TextElement("string_literal", body, line, end_line, owners[line])


def _groups(
    tokens: list[Token], source: str, statement_starts: set[tuple[int, int]], text: SourceText
) -> Iterator[list[Token]]:
    """Tokens that form one element: a block of `#` lines, or implicitly joined strings."""
    group: list[Token] = []
    for token in tokens:
        if group and _joins(group[-1], token, source, statement_starts, text):
            group.append(token)
            continue
        if group:
            yield group
        group = [token]
    if group:
        yield group


def _joins(
    previous: Token, token: Token, source: str, starts: set[tuple[int, int]], text: SourceText
) -> bool:
    gap = source[previous.end : token.start]
    if previous.is_comment and token.is_comment:
        # Consecutive lines holding only a comment: one block.
        if gap.count("\n") != 1 or gap.strip():
            return False
        line_start = source.rfind("\n", 0, previous.start) + 1
        return not source[line_start : previous.start].strip()
    if previous.is_comment or token.is_comment or gap.strip(" \t\r\n\\\f"):
        return False
    if "\n" not in gap:
        return True
    # Across a line break, adjacent strings are one literal unless the next starts a statement.
    line = text.line_of(token.start)
    return (line, token.start - text.line_starts[line - 1]) not in starts


def _references(
    tokens: list[Token], text: SourceText, owners: list[str | None], symbols: list[Symbol]
) -> list[Reference]:
    """Identifiers in code (strings and comments blanked), once per (name, enclosing symbol)."""
    code = _blank(text.text, tokens)
    starts = text.line_starts
    defined: dict[str, set[int]] = {}  # a name -> the lines a symbol of that name starts on
    for symbol in symbols:
        defined.setdefault(symbol.name, set()).add(symbol.start_line)
    seen: dict[str | None, set[str]] = {}  # per owner, the names already referenced
    identifiers = (_ASCII_IDENTIFIER if code.isascii() else _IDENTIFIER).finditer
    references: list[Reference] = []
    # Runs of lines with one owner are scanned whole; only a name's first use there is kept.
    # Every per-name step runs in C (map, filterfalse, zip, dict): a Python loop over each
    # run's distinct names was a quarter of Python's extraction on Django.
    for first_line, last_line, owner in _runs(owners, len(starts)):
        offset = starts[first_line - 1]
        end = starts[last_line] if last_line < len(starts) else len(code)
        matches = list(identifiers(code, offset, end))
        names = list(map(_GROUP, matches))
        # A name's first offset is the value left by inserting the matches last to first.
        first_use = dict(zip(reversed(names), map(_START, reversed(matches)), strict=True))
        done = seen.setdefault(owner, set())
        distinct = filterfalse(_NOT_REFERENCES.__contains__, dict.fromkeys(names))
        new = list(filterfalse(done.__contains__, distinct))  # in order of first use
        lines = list(map(bisect.bisect_right, repeat(starts), map(first_use.__getitem__, new)))
        if not defined.keys().isdisjoint(new):  # a definition's own name is no use of it
            kept, again = [], set()
            last_use = dict(zip(names, map(_START, matches), strict=True))  # the last wins
            for name, line in zip(new, lines, strict=True):
                own = defined.get(name)
                if own is None or line not in own:
                    kept.append((name, line))
                elif last_use[name] != first_use[name]:
                    again.add(name)  # used again in the run: a recursive call, maybe
            if again:
                kept += _later_uses(names, matches, again, starts, defined).items()
            new, lines = [name for name, _ in kept], [line for _, line in kept]
        done.update(new)
        references.extend(map(_new_reference, zip(new, lines, repeat(owner))))
    return references


def _later_uses(
    names: list[str],
    matches: list[re.Match[str]],
    wanted: set[str],
    starts: list[int],
    defined: dict[str, set[int]],
) -> dict[str, int]:
    """Each of `wanted`'s first use in a run on no line a definition of it starts on (`def
    walk(node):` ... `walk(child)`: the recursive call was lost), by one pass over the run's
    names (a search per name from the run's start was quadratic on a line of 80,000)."""
    found: dict[str, int] = {}
    for name, match in zip(names, matches, strict=True):
        if name in wanted and name not in found:
            line = bisect.bisect_right(starts, match.start())
            if line not in defined[name]:
                found[name] = line
                if len(found) == len(wanted):
                    break
    return found


# Reference._make without its Python frame: tuple.__new__ called from C (0.1 s on Django).
_new_reference = functools.partial(tuple.__new__, Reference)


def _blank(source: str, tokens: list[Token]) -> str:
    """`source` with comments and strings turned to spaces, offsets and line breaks kept."""
    pieces, pos = [], 0
    for token in tokens:
        pieces.append(source[pos : token.start])
        piece = source[token.start : token.end]
        if "\n" in piece:
            pieces.append("\n".join(" " * len(line) for line in piece.split("\n")))
        else:  # most tokens: one line
            pieces.append(" " * len(piece))
        pos = token.end
    pieces.append(source[pos:])
    return "".join(pieces)


def _runs(owners: list[str | None], lines: int) -> Iterator[tuple[int, int, str | None]]:
    """Maximal runs of lines (1-based, inclusive) with the same owner."""
    start = 1
    for line in range(2, lines + 1):
        if owners[line] != owners[start]:
            yield start, line - 1, owners[start]
            start = line
    if lines:
        yield start, lines, owners[start]
