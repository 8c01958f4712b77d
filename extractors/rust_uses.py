"""A Rust file's re-exports: the `use` declarations with a visibility (`pub use`, `pub(crate) use`).

A crate names its items by the paths it exports (`regex::Regex`, `std::collections::HashMap`),
while a symbol's qualified name follows the file that defines it (`re_unicode::Regex`,
`collections::hash::map::HashMap`); the search layer follows these re-exports to go from one to
the other. A private `use` binds a name for the module's own code only, so it is left out. An
`extern crate alloc as alloc_crate;` is kept whatever its visibility, as a binding of the crate
(`alloc_crate` -> `::alloc`): paths in the crate may start with it.

Each use tree is flattened: `pub use crate::re_unicode::{escape, Regex as R, self};` is three
re-exports, binding `escape`, `R` and `re_unicode`. Paths are kept as written (`crate`, `self`,
`super`, a crate's name, or "" for a leading `::`): resolving them needs the module they are in,
which is the caller's. Declarations inside inline modules (`pub mod bytes { pub use ...; }`)
carry the modules' names; those in item-level macro calls (`cfg_if! { .. }`) are read as the
extractor reads that call's items (rust_macros.py); those in function bodies are not read.
"""

from __future__ import annotations

from typing import NamedTuple

from tree_sitter import Node

from . import rust_macros

_PATHS = ("identifier", "scoped_identifier", "crate", "self", "super", "metavariable")


class Reexport(NamedTuple):
    module: tuple[str, ...]  # the inline modules it is declared in, outermost first
    bound: str | None  # the name it binds there; None for a glob (`pub use a::b::*`)
    target: tuple[str, ...]  # the path it names (a glob's: the module it takes everything of)


def reexports(source: bytes) -> list[Reexport]:
    """Every re-export of the file, in source order."""
    found: list[Reexport] = []
    root, text, _ = rust_macros.parse(source)  # `text`: the source, macro calls unwrapped
    _read_items(root, (), text, found)
    return found


def _read_items(items: Node, module: tuple[str, ...], source: bytes, found: list[Reexport]) -> None:
    for item in items.named_children:
        if item.type == "use_declaration":
            argument = item.child_by_field_name("argument")
            if argument is not None and any(
                child.type == "visibility_modifier" for child in item.named_children
            ):
                _flatten(argument, (), module, source, found)
        elif item.type == "extern_crate_declaration":
            name, alias = item.child_by_field_name("name"), item.child_by_field_name("alias")
            if name is not None:
                crate = _text(name, source)
                bound = _text(alias, source) if alias is not None else crate
                if bound != "_" and crate != "self":
                    found.append(Reexport(module, bound, ("", crate)))
        elif item.type == "mod_item":
            name = item.child_by_field_name("name")
            body = item.child_by_field_name("body")
            if name is not None and body is not None:
                _read_items(body, (*module, _text(name, source)), source, found)


def _flatten(
    tree: Node,
    prefix: tuple[str, ...],
    module: tuple[str, ...],
    source: bytes,
    found: list[Reexport],
) -> None:
    kind = tree.type
    if kind in _PATHS:
        path = (*prefix, *_path(tree, source))
        if path[-1] == "self":  # `a::{self}` binds `a`
            path = path[:-1]
        if path and path[-1] not in ("crate", "self", "super", ""):
            found.append(Reexport(module, path[-1], path))
    elif kind == "use_as_clause":
        named, alias = tree.child_by_field_name("path"), tree.child_by_field_name("alias")
        if named is not None and alias is not None and _text(alias, source) != "_":
            path = (*prefix, *_path(named, source))
            if path[-1] == "self":
                path = path[:-1]
            if path:
                found.append(Reexport(module, _text(alias, source), path))
    elif kind == "use_wildcard":
        paths = [child for child in tree.named_children if child.type in _PATHS]
        path = (*prefix, *(_path(paths[0], source) if paths else ()))
        if path:
            found.append(Reexport(module, None, path))
    elif kind == "scoped_use_list":
        named, listed = tree.child_by_field_name("path"), tree.child_by_field_name("list")
        inner = (*prefix, *(_path(named, source) if named is not None else ()))
        if listed is not None:
            for child in listed.named_children:
                _flatten(child, inner, module, source, found)
    elif kind == "use_list":
        for child in tree.named_children:
            _flatten(child, prefix, module, source, found)


def _path(node: Node, source: bytes) -> tuple[str, ...]:
    """`crate::a::b` -> ("crate", "a", "b"); `::alloc::vec` -> ("", "alloc", "vec")."""
    return tuple("".join(_text(node, source).split()).split("::"))


def _text(node: Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
