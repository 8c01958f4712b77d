"""Rust's module system as search and the index need it: the module path a file's items are
qualified by, and a file's re-exports (both read by the extractors: only repomap/index/
imports them).

A file's module path comes from its own path (`module_path`: `src/fmt/imp.rs` is `fmt::imp`),
unless a `mod` declaration loads it from elsewhere: `#[path = "extern_impl.rs"] mod imp;` in
src/fmt/mod.rs makes src/fmt/extern_impl.rs the module `fmt::imp`, not `fmt::extern_impl`.
`modules()` works these out for a tree from every file's `mod NAME;` declarations
(`declarations()`), where Rust finds their files:

- `#[path = "p"]` (or `#[cfg_attr(COND, path = "p")]`, among any other attributes) names a file
  relative to the declaring file's folder, whatever the file (a `mod.rs` or `foo.rs`); inside
  inline modules, relative to that folder joined with the inline modules' names (and, in a
  `foo.rs`, `foo/` first); an inline module's own `#[path]` names the folder its items are in.
  A file loaded through `#[path]` is read as a `mod.rs`: its own `mod x;` is `x.rs` beside it.
- A plain `mod x;` is `x.rs` or `x/mod.rs` in the folder of a `mod.rs`, `lib.rs` or `main.rs`
  (or a crate root), `foo/x.rs` or `foo/x/mod.rs` beside a `foo.rs`. A `cfg_attr` path may not
  apply, so a declaration with only those is looked for there too.
- A file declared from several places keeps its own path's module when one of them gives it
  (std's `#[path = "../unix/cmath.rs"] mod cmath;` in every platform's `mod.rs`: the file is
  `sys::unix::cmath`), and when they give it several others (each integration test's
  `#[path = "common/mod.rs"] mod common;`): no one of those is the file's more than the rest.
  Alternatives declared under one name (`#[cfg(a)] #[path = "regex.rs"] mod inner;` and
  `#[cfg(not(a))] #[path = "string.rs"] mod inner;`) give each file that module.
- A file its own path makes a crate root (`lib.rs`, `main.rs`) keeps its crate's naming: std's
  `#[path = "../../backtrace/src/lib.rs"] mod backtrace_rs;` leaves backtrace's names alone.
- Modules declared below a renamed one follow it (`fmt::imp::x`), a round at a time.
- A path to a file that is not in the index, or out of the tree, is passed over.

The result is kept in the index's meta (`stored`/`save`), with each file's declarations, so an
incremental run reads only the changed files' declarations again; the pipeline re-extracts a
file whose module changed though its bytes did not (index/pipeline.py, `_with_rust_modules`).
The extractor takes the module as the path it reads it from (`extraction_path`).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from tree_sitter import Node

from repomap import store
from repomap.extractors import rust_macros
from repomap.extractors.rust import module_path
from repomap.extractors.rust_uses import Reexport, reexports

__all__ = [
    "Declaration",
    "Reexport",
    "declarations",
    "extraction_path",
    "module_of",
    "module_path",
    "modules",
    "reexports",
]

META_KEY = "rust_modules"
_LAYOUT = 1  # of the meta's value: another one is read again from the files
MAX_ROUNDS = 16  # of modules declared below renamed ones (a chain deeper than this stops)
MAX_DEPTH = 64  # modules in a path: a cycle of `#[path]`s (rustc refuses one) ends here

# A file that declares no `mod NAME;` (most of them) is not parsed.
_DECLARES = re.compile(rb"\bmod\s+(?:r#)?[A-Za-z_][A-Za-z0-9_]*\s*;")
_MOD_RS = frozenset(("mod.rs", "lib.rs", "main.rs"))
_BETWEEN = frozenset(("attribute_item", "line_comment", "block_comment"))
_STRINGS = frozenset(("string_literal", "raw_string_literal"))


class Declaration(NamedTuple):
    """A `mod NAME;` whose items are in another file."""

    inline: tuple[tuple[str, str | None], ...]  # the inline modules around it: (name, #[path])
    name: str
    paths: tuple[str, ...]  # its `#[path]`s as written: the first plain one, any `cfg_attr`'s
    default: bool  # it may be where a plain `mod NAME;` is (no plain `#[path]`)


def declarations(source: bytes) -> list[Declaration]:
    """The file's `mod NAME;` declarations, in source order: at file level, in inline modules
    and in item-level macro calls (`cfg_if! { .. }`), not in function bodies."""
    if not _DECLARES.search(source):
        return []
    root, text, _ = rust_macros.parse(source)
    found: list[Declaration] = []
    _read_items(root, (), text, found)
    return found


def _read_items(
    items: Node, inline: tuple[tuple[str, str | None], ...], text: bytes, found: list[Declaration]
) -> None:
    for item in items.named_children:
        if item.type != "mod_item":
            continue
        name_node = item.child_by_field_name("name")
        if name_node is None:
            continue
        name = _unraw(_text(name_node, text))
        plain, conditional = _path_attributes(item, text)
        body = item.child_by_field_name("body")
        if body is not None:
            _read_items(body, (*inline, (name, plain)), text, found)
        else:
            paths = (*conditional, plain) if plain is not None else tuple(conditional)
            found.append(Declaration(inline, name, paths, plain is None))


def _path_attributes(item: Node, text: bytes) -> tuple[str | None, list[str]]:
    """The item's first `#[path = ".."]` (None without one, as rustc takes the first), and
    the paths of its `#[cfg_attr(.., path = "..")]`s: the attributes (and comments) above it."""
    attributes: list[Node] = []
    node = item.prev_named_sibling
    while node is not None and node.type in _BETWEEN:
        if node.type == "attribute_item":
            attributes.append(node)
        node = node.prev_named_sibling
    plain: str | None = None
    conditional: list[str] = []
    for attribute_item in reversed(attributes):  # in source order
        attribute = next((c for c in attribute_item.named_children if c.type == "attribute"), None)
        if attribute is None or not attribute.named_children:
            continue
        head = attribute.named_children[0]
        if head.type != "identifier":
            continue
        kind = _text(head, text)
        if kind == "path" and plain is None:
            value = attribute.child_by_field_name("value")
            if value is not None and value.type in _STRINGS:
                plain = _string(value, text)
        elif kind == "cfg_attr":
            arguments = attribute.child_by_field_name("arguments")
            if arguments is not None:
                conditional += _conditional_paths(arguments, text)
    return plain, conditional


def _conditional_paths(tree: Node, text: bytes) -> list[str]:
    """`path = ".."` in a cfg_attr's arguments (nested ones too), after its condition."""
    found = []
    children = tree.children
    for i, child in enumerate(children):
        if child.type == "token_tree":
            found += _conditional_paths(child, text)
        elif (
            i > 0  # the condition comes first: `cfg_attr(path = "..", ..)` names no path
            and child.type == "identifier"
            and _text(child, text) == "path"
            and i + 2 < len(children)
            and children[i + 1].type == "="
            and children[i + 2].type in _STRINGS
        ):
            found.append(_string(children[i + 2], text))
    return found


def _string(literal: Node, text: bytes) -> str:
    content = next((c for c in literal.named_children if c.type == "string_content"), None)
    return _text(content, text) if content is not None else ""


def _text(node: Node, text: bytes) -> str:
    return text[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _unraw(name: str) -> str:
    return name[2:] if name.startswith("r#") else name


class _Loaded(NamedTuple):
    """How a declaration loads a file: as which module, and whether through a `#[path]`."""

    module: str
    through_path: bool


def modules(declared: dict[str, list[Declaration]], present: Iterable[str]) -> dict[str, str]:
    """The module path of each of the `present` Rust files (relative paths) that is not its
    own path's (`module_path`), from the files' `declared` modules (see the module doc)."""
    files = set(present)
    chosen: dict[str, _Loaded] = {}  # the files loaded otherwise than their path says
    for _ in range(MAX_ROUNDS):
        found: dict[str, list[_Loaded]] = {}
        for declaring in sorted(declared):
            if declaring not in files:
                continue
            for target, loaded in _targets(declaring, declared[declaring], chosen.get(declaring)):
                if target in files and target != declaring:
                    found.setdefault(target, []).append(loaded)
        now = {
            target: pick
            for target, loads in found.items()
            if (pick := _choice(target, loads)) is not None
        }
        if now == chosen:
            break
        chosen = now
    return {
        path: loaded.module
        for path, loaded in chosen.items()
        if loaded.module != module_path(path) and extraction_path(loaded.module) is not None
    }


def _targets(
    declaring: str, found: list[Declaration], loaded: _Loaded | None
) -> Iterable[tuple[str, _Loaded]]:
    """The files `declaring`'s declarations may load, as what (rustc's module.rs)."""
    own = module_path(declaring) if loaded is None else loaded.module
    file_name = declaring.rpartition("/")[2]
    folder = posixpath.dirname(declaring)
    mod_rs = (loaded is not None and loaded.through_path) or file_name in _MOD_RS or not own
    for declaration in found:
        directory = folder
        relative = None if mod_rs else file_name[: -len(".rs")]  # `foo/` of a `foo.rs`
        names = [own] if own else []
        for name, path in declaration.inline:
            if path is not None:
                directory, relative = posixpath.join(directory, path), None
            else:
                if relative is not None:
                    directory, relative = posixpath.join(directory, relative), None
                directory = posixpath.join(directory, name)
            names.append(name)
        names.append(declaration.name)
        if len(names) > MAX_DEPTH:
            continue
        module = "::".join(names)
        for path in declaration.paths:
            target = _normal(posixpath.join(directory, path.replace("\\", "/")))
            if target is not None:
                yield target, _Loaded(module, True)
        if declaration.default:
            base = posixpath.join(directory, relative) if relative is not None else directory
            for form in (f"{declaration.name}.rs", f"{declaration.name}/mod.rs"):
                target = _normal(posixpath.join(base, form))
                if target is not None:
                    yield target, _Loaded(module, False)


def _normal(path: str) -> str | None:
    """The path without `.` and `..` steps; None when it leaves the tree."""
    normal = posixpath.normpath(path)
    if normal.startswith(("../", "/")) or normal in ("..", "."):
        return None
    return normal


def _choice(target: str, loads: list[_Loaded]) -> _Loaded | None:
    """How `target` is loaded (None: as its path says), of the ways declarations load it."""
    own = module_path(target)
    if not own:  # a crate's root: named by its crate, wherever else it is included
        return None
    at_home = [loaded for loaded in loads if loaded.module == own]
    if at_home:  # as its path says; read as a `mod.rs` if a `#[path]` loads it so
        return _Loaded(own, any(loaded.through_path for loaded in at_home))
    if len({loaded.module for loaded in loads}) > 1:
        return None  # several modules, none of them its path's: no one of them over the others
    return _Loaded(loads[0].module, any(loaded.through_path for loaded in loads))


def extraction_path(module: str) -> str | None:
    """A path the extractor reads as the module `module` (`fmt::imp`: `fmt/imp/mod.rs`); None
    for a module no path makes (one named `src`, or `r#try`)."""
    path = module.replace("::", "/") + "/mod.rs"
    return path if module and module_path(path) == module else None


def module_of(rel_path: str, renamed: dict[str, str]) -> str:
    """The module path the file's items are qualified by in the index."""
    return renamed.get(rel_path) or module_path(rel_path)


class Kept(NamedTuple):
    """What the index keeps: each file's declarations, and the modules they made."""

    declared: dict[str, list[Declaration]]
    modules: dict[str, str]


NOTHING_KEPT = Kept({}, {})


def stored(db: store.Store) -> Kept | None:
    """What the last run kept; None when it kept nothing (an index made before this was kept,
    or in another layout): every file's declarations are then read again."""
    raw = store.get_meta(db, META_KEY)
    if not raw:
        return None
    try:
        found = json.loads(raw)
        if not isinstance(found, dict) or found.get("layout") != _LAYOUT:
            return None
        declared = {
            path: [_declaration(entry) for entry in entries]
            for path, entries in found["files"].items()
        }
        renamed = {str(path): str(module) for path, module in found["modules"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return Kept(declared, renamed)


def stored_modules(db: store.Store) -> dict[str, str]:
    """The Rust files whose module is not their path's: rel_path -> module path."""
    kept = stored(db)
    return kept.modules if kept is not None else {}


def _declaration(entry: Any) -> Declaration:
    inline, name, paths, default = entry
    return Declaration(
        tuple((str(n), None if p is None else str(p)) for n, p in inline),
        str(name),
        tuple(str(p) for p in paths),
        bool(default),
    )


def save(db: store.Store, kept: Kept) -> None:
    value = {
        "layout": _LAYOUT,
        "files": {path: found for path, found in kept.declared.items() if found},
        "modules": kept.modules,
    }
    store.set_meta(db, {META_KEY: json.dumps(value, sort_keys=True)})
