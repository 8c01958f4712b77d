"""Tree-sitter grammars, parsers and queries, each loaded once per process."""

from __future__ import annotations

from functools import cache
from importlib import resources

import tree_sitter_c
import tree_sitter_cpp
import tree_sitter_python
import tree_sitter_rust
from tree_sitter import Language, Node, Parser, Query, QueryCursor

_GRAMMARS = {
    "python": tree_sitter_python.language,
    "rust": tree_sitter_rust.language,
    "cpp": tree_sitter_cpp.language,
    "c": tree_sitter_c.language,
}


@cache
def language(name: str) -> Language:
    """The tree-sitter Language for `name` ("python", "rust", "cpp" or "c")."""
    return Language(_GRAMMARS[name]())


@cache
def parser(name: str) -> Parser:
    """A parser for `name`, reused for every file of that language in this process."""
    return Parser(language(name))


@cache
def query(lang: str, purpose: str) -> Query:
    """The compiled query `queries/<lang>/<purpose>.scm`, read from the installed package."""
    source = (resources.files(__package__) / "queries" / lang / f"{purpose}.scm").read_text()
    return Query(language(lang), source)


def parse(lang: str, source: bytes) -> Node:
    """The root node of `source` parsed as `lang` (tree-sitter never fails, it marks errors)."""
    return parser(lang).parse(source).root_node


def captures(lang: str, purpose: str, node: Node) -> dict[str, list[Node]]:
    """Every capture of the `purpose` query under `node`, by capture name."""
    return QueryCursor(query(lang, purpose)).captures(node)


def matches(lang: str, purpose: str, node: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    """Every match of the `purpose` query under `node`, captures kept together per match."""
    return QueryCursor(query(lang, purpose)).matches(node)


def text(node: Node) -> str:
    """The source text of `node`, decoded leniently (sources may hold invalid UTF-8)."""
    return node.text.decode("utf-8", "replace") if node.text is not None else ""
