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

Only a path attribute, or a file whose path is no module's, loads a file as another module
than its path says (`may_load_elsewhere`, a bytes test): only such files' declarations are
read (parsed), with those of the files they load and of the few others that then matter
(`completed`); a plain `mod x;` elsewhere loads `x.rs` as its path says, without them.

The result is kept in the index's meta (`stored`/`save`), with the declarations read, so an
incremental run reads only the changed files' declarations again; the pipeline re-extracts a
file whose module changed though its bytes did not (index/pipeline.py, `_with_rust_modules`).
The extractor takes the module as the path it reads it from (`extraction_path`).
"""

from __future__ import annotations

import bisect
import functools
import json
import posixpath
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from tree_sitter import Node

from repomap import store
from repomap.extractors import rust_macros
from repomap.extractors.rust import module_path
from repomap.extractors.rust_uses import Reexport, reexports
from repomap.paths import is_demoted_path

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
_LAYOUT = 3  # of the meta's value: another one is read again from the files
MAX_ROUNDS = 16  # of modules declared below renamed ones (a chain deeper than this stops)
MAX_DEPTH = 64  # modules in a path: a cycle of `#[path]`s (rustc refuses one) ends here

# The module a file's path makes, asked for each file many times a run.
_path_module = functools.lru_cache(maxsize=1 << 16)(module_path)

# A file that declares no `mod NAME;` (most of them) is not parsed.
_DECLARES = re.compile(rb"mod\s+(?:r#)?[A-Za-z_][A-Za-z0-9_]*\s*;")  # no `\b`: 10x as fast
# A path attribute's value (`path = "..", `path = r"..`): its literal start makes it fast.
_PATH_VALUE = re.compile(rb'path\s*=\s*(?:r#*)?"')
_MOD_RS = frozenset(("mod.rs", "lib.rs", "main.rs"))
# The next brace, past what may hide one from the items' nesting: comments, strings and chars
# (one character between quotes: not a lifetime's `'a`), read by the pattern, whose Python
# loop sees braces only (half the time of one that took each token). What it cannot read
# ends a match too: a raw string's start (`r#"`: its end is found by `_blocks`), a string
# or block comment that does not end, a nested block comment; and the end of the source.
_NEXT_BRACE = re.compile(
    rb"(?:[^{}\"'/r]++|r(?!#*\")|//[^\n]*+|/\*(?:[^*/]|\*(?!/)|/(?!\*))*+\*/"
    rb'|"[^"\\]*+(?:\\.[^"\\]*+)*+"'
    rb"|'(?:[^'\\\n\x80-\xff]|[\xc0-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}"
    rb"|[\xf0-\xf7][\x80-\xbf]{3}|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|[^\n]))'"
    rb"|'|/(?!\*))*+"
    rb'(?:([{}])|(r#*")|"|/\*|\Z)',
    re.DOTALL,
)
_OPEN = ord("{")
_MERGED_GAP = 2048  # bytes between two spans parsed as one: a parse has its own cost
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
    and in item-level macro calls (`cfg_if! { .. }`), not in function bodies. Only the
    top-level items that hold one are parsed (`_spans`): a parse costs ~0.13 ms a KB, and
    stdarch's arm_shared/neon/mod.rs (416 KB) declares its four at its end. None for a file
    nested too deeply to walk (the worker skips it too; a review's 1,500 nested `mod a {`
    stopped the whole run with a RecursionError)."""
    if not _DECLARES.search(source):
        return []
    try:
        return _declarations(source)
    except RecursionError:
        return []


def _declarations(source: bytes) -> list[Declaration]:
    spans = _spans(source)
    if spans is None or 2 * sum(end - start for start, end in spans) > len(source):
        return _declared_in(source)  # cut where no item ends, or most of it: parsed whole
    found: list[Declaration] = []
    for start, end in spans:
        root, text, _ = rust_macros.parse(source[start:end])
        if root.has_error:
            return _declared_in(source)  # cut where no item ends, or a file with errors
        _read_items(root, (), text, found)
    return found


def _declared_in(source: bytes) -> list[Declaration]:
    """`declarations` of the whole file, parsed at once."""
    root, text, _ = rust_macros.parse(source)
    found: list[Declaration] = []
    _read_items(root, (), text, found)
    return found


def _spans(source: bytes) -> list[tuple[int, int]] | None:
    """Spans of `source`, each a run of whole top-level items, that hold every `mod NAME;`
    in it (a declaration in a top-level block: the whole block, its inline modules or macro
    call around it); None when the braces cannot be told (`_blocks`). A span starts after a
    top-level block's `}`: after an item's end, so the attributes and comments before an
    item are in its span (where a `}` at depth 0 ends no item, `S { .. }];`, the span does
    not parse, and the file is parsed whole)."""
    blocks = _blocks(source)
    if blocks is None:
        return None
    opened, closed = blocks
    spans: list[tuple[int, int]] = []
    for declared in _DECLARES.finditer(source):
        at = declared.start()
        block = bisect.bisect_right(opened, at) - 1  # the last top-level block opened before
        if block >= 0 and closed[block] > at:  # in it: the whole block
            spans.append((closed[block - 1] if block else 0, closed[block]))
        else:  # at file level (or in a comment there): from the last block's end to it
            spans.append((closed[block] if block >= 0 else 0, declared.end()))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + _MERGED_GAP:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _blocks(source: bytes) -> tuple[list[int], list[int]] | None:
    """Where each top-level block (`{ .. }`) opens, and where it ends (past its `}`); None
    when they cannot be told: a nested block comment, braces that do not pair, a string
    or comment that does not end."""
    opened: list[int] = []
    closed: list[int] = []
    depth = 0
    start: int | None = 0
    while start is not None:
        resume, start = start, None
        for token in _NEXT_BRACE.finditer(source, resume):
            brace = token.start(1)
            if brace >= 0:
                if source[brace] == _OPEN:
                    if not depth:
                        opened.append(brace)
                    depth += 1
                else:
                    depth -= 1
                    if not depth:
                        closed.append(brace + 1)
                    elif depth < 0:
                        return None
            elif token.start(2) >= 0:  # a raw string: on past its end
                closing = b'"' + b"#" * (token.end(2) - token.start(2) - 2)
                end = source.find(closing, token.end(2))
                if end < 0:
                    return None
                start = end + len(closing)
                break
            elif token.end() < len(source):
                return None
    return (opened, closed) if not depth else None


def may_load_elsewhere(rel_path: str, source: bytes) -> bool:
    """Whether the file's `mod` declarations may load a file as another module than that
    file's path makes, so that `declarations` must be read: only a path attribute does
    (`#[path = ".."]`, `cfg_attr(.., path = "..")`), or a plain `mod x;` in a file whose
    path is no module's (`tests/run-time-detect.rs`: its `x.rs` is `x`, not `tests::x`) or
    is `src.rs` (its `src/x.rs`). A bytes test, no parse: a `path = "` is taken unless a
    line comment or a name before it (`let path = "a";`) shows it is none. The others' plain
    declarations load their files as those files' paths say; they are read only when another
    file's make them matter (`completed`)."""
    file_name = rel_path.rpartition("/")[2]
    if file_name not in _MOD_RS and (
        file_name == "src.rs" or not file_name[: -len(".rs")].isidentifier()  # no module
    ):
        return True
    for match in _PATH_VALUE.finditer(source):
        line = source[source.rfind(b"\n", 0, match.start()) + 1 : match.start()].strip()
        if not line or (line[-1:] in b"[(,/" and not line.startswith(b"//")):
            return True
    return False


def completed(
    declared: dict[str, list[Declaration]],
    present: Iterable[str],
    read: Callable[[str], bytes | None],
) -> dict[str, list[Declaration]]:
    """`declared` (what files declare, for those `may_load_elsewhere` says may load one as
    another module, and any others already read) with the declarations of every other
    `present` file on which `modules` depends, `read` now: the files loaded as another
    module or through a `#[path]` (their own `mod x;` are found from there), and, for a file
    some declaration loads as another module than its path's, the files whose plain `mod x;`
    may load it as its own (which then keeps that: `_choice`), if they hold a `mod x;`. Each
    file parsed is in the result, with no declaration if it has none, so a later run need
    not read it again."""
    files = set(present)
    declared = {path: found for path, found in declared.items() if path in files}
    named_otherwise = _may_be_named_otherwise(files)
    targets: _Targets = {}
    lacking: dict[str, set[str]] = {}  # loaders read and passed over: the names they lack
    while True:
        rounds = _rounds(declared, files, targets)
        names: dict[str, set[str]] = {}  # the loaders to read: the names they may declare
        for target in rounds.contested | named_otherwise:
            name = _declared_name(target)
            for loader in _loaders(target, files):
                if loader not in declared and name not in lacking.get(loader, ()):
                    names.setdefault(loader, set()).add(name)
        new = sorted((rounds.otherwise - declared.keys()) | names.keys())
        if not new:
            return declared
        for path in new:
            raw = read(path)
            if path in names and path not in rounds.otherwise and raw is not None:
                sought = names[path]
                if not any(_declares(raw, name) for name in sought):
                    lacking.setdefault(path, set()).update(sought)
                    continue
            declared[path] = declarations(raw) if raw is not None else []


def _declared_name(target: str) -> str:
    """The NAME of a `mod NAME;` that loads `target` where its path says."""
    folder, _, file_name = target.rpartition("/")
    return folder.rpartition("/")[2] if file_name == "mod.rs" else file_name[: -len(".rs")]


def _declares(source: bytes, name: str) -> bool:
    """Whether `source` may declare `mod NAME;` (a bytes test)."""
    pattern = rb"mod\s+(?:r#)?" + re.escape(name.encode()) + rb"\s*;"
    return re.search(pattern, source) is not None


def _loaders(target: str, files: set[str]) -> Iterable[str]:
    """The files whose plain `mod NAME;` (at file level or in inline modules) may load
    `target` as its path's module: a `mod.rs`, `lib.rs` or `main.rs` in its folder or one
    above, or a `foo.rs` beside a folder `foo` on the way."""
    folder = posixpath.dirname(target)
    if target.rpartition("/")[2] == "mod.rs":
        folder = posixpath.dirname(folder)  # `mod x;` loads `x/mod.rs` from x's folder
    parts = folder.split("/") if folder else []
    for depth in range(len(parts) + 1):
        prefix = "".join(f"{part}/" for part in parts[:depth])
        below = (f"{parts[depth]}.rs",) if depth < len(parts) else ()
        for file_name in (*_MOD_RS, *below):
            path = prefix + file_name
            if path in files and path != target:
                yield path


def _may_be_named_otherwise(files: set[str]) -> set[str]:
    """The files a plain `mod lib;` or `mod main;` loads as a module their path does not
    make (`x/lib.rs` is `x`'s, declared `x::lib`)."""
    return {
        path
        for path in files
        if path.rpartition("/")[2] in ("lib.rs", "main.rs") and _path_module(path)
    }


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
    chosen = _rounds(declared, set(present)).chosen
    return {
        path: loaded.module
        for path, loaded in chosen.items()
        if loaded.module != _path_module(path) and extraction_path(loaded.module) is not None
    }


class _Rounds(NamedTuple):
    chosen: dict[str, _Loaded]  # how each file a declaration loads is loaded, at the end
    otherwise: set[str]  # the files loaded otherwise than their path says, in any round
    contested: set[str]  # the files a declaration loads as another module, in any round


# A declaring file's targets (for how it is loaded): each file, how, and whether as its path says
_Targets = dict[tuple[str, _Loaded | None], list[tuple[str, _Loaded, bool]]]


def _rounds(
    declared: dict[str, list[Declaration]], files: set[str], targets: _Targets | None = None
) -> _Rounds:
    """`modules`' rounds; `targets` keeps each declaring file's targets (for a file's
    declarations, and how it is loaded) from one call to the next. A load as the file's
    path says (a plain `mod x;` for `x.rs`, most of them) is only noted: a file loaded only
    so is loaded as no declaration at all would have it."""
    chosen: dict[str, _Loaded] = {}  # the files loaded otherwise than their path says
    otherwise: set[str] = set()
    contested: set[str] = set()
    targets = {} if targets is None else targets
    for _ in range(MAX_ROUNDS):
        found: dict[str, list[_Loaded]] = {}
        home: set[str] = set()  # the files a plain declaration loads as their path says
        for declaring in sorted(declared):
            if declaring not in files:
                continue
            key = (declaring, chosen.get(declaring))
            if key not in targets:  # a file's targets change only with how it is loaded
                borrowed = _borrows_only(declaring)
                targets[key] = [
                    (target, loaded, not loaded.through_path and loaded.module == own)
                    for target, loaded in _targets(declaring, declared[declaring], key[1])
                    if target in files and target != declaring
                    and not (borrowed and not is_demoted_path(target))
                    for own in (_path_module(target),)
                ]  # fmt: skip
            for target, loaded, at_home in targets[key]:
                if at_home:
                    home.add(target)
                else:
                    found.setdefault(target, []).append(loaded)
        now: dict[str, _Loaded] = {}
        for target, loads in found.items():
            own = _path_module(target)
            if own and any(loaded.module != own for loaded in loads):
                contested.add(target)
            pick = _choice(own, loads, target in home)
            if pick is not None:
                now[target] = pick
                if pick.through_path or pick.module != own:
                    otherwise.add(target)
        if now == chosen:
            break
        chosen = now
    return _Rounds(chosen, otherwise, contested)


def _borrows_only(declaring: str) -> bool:
    """Whether `declaring`'s `#[path]` loads only borrow the files they name: a test, bench or
    example crate (`tests/s2d_test.rs`'s `#[path = "../src/s2d.rs"] mod s2d;`) compiles the
    library's file into itself, but the file is the library's code, not a test's. Named so
    (`tests::s2d_test::s2d::s2d`) it was demoted as a test, and ryu's string-to-float parser was
    not among a search's first 40 answers."""
    return is_demoted_path(declaring)


def _targets(
    declaring: str, found: list[Declaration], loaded: _Loaded | None
) -> Iterable[tuple[str, _Loaded]]:
    """The files `declaring`'s declarations may load, as what (rustc's module.rs)."""
    own = _path_module(declaring) if loaded is None else loaded.module
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


def _choice(own: str, loads: list[_Loaded], home: bool) -> _Loaded | None:
    """How a file whose path makes the module `own` is loaded (None: as its path says), of
    the ways declarations load it (`home`: a plain one, too, as its path says)."""
    if not own:  # a crate's root: named by its crate, wherever else it is included
        return None
    at_home = [loaded for loaded in loads if loaded.module == own]
    if at_home or home:  # as its path says; read as a `mod.rs` if a `#[path]` loads it so
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
        "files": kept.declared,  # a file read with none too: not read again while unchanged
        "modules": kept.modules,
    }
    store.set_meta(db, {META_KEY: json.dumps(value, sort_keys=True)})
