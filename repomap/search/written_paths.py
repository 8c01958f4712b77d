"""A symbol named by its path as code writes it, where no qualified name in the index is that path.

Python's qualified names start inside the module (`QuerySet.filter`), while people, imports and
tracebacks name a symbol through its module (`django.db.models.query.QuerySet.filter`), often
through a package that re-exports it (`django.db.models.QuerySet`, `pydantic_core.SchemaValidator`).
Rust's start at the crate's modules (`vec::Vec`), while `use` lines start at `crate::`, `self::`,
`super::` or the crate's name (`alloc::vec::Vec`, `_pydantic_core::validators::UnionValidator`).

`alternatives(db, name)` yields what `find_symbol` tries next, in order. A Python module is the
file whose path ends with the module's (`django/db/models/query.py`,
`python/pydantic_core/__init__.py`: a source folder before it is allowed), and the rest of the
name must be a qualified name in it exactly; a name the module does not define is followed
through its imports as Python follows them (`from .query import QuerySet` from the importing
file's own folder, absolute ones by their path, aliases, `*`), a hop at a time, at most
MAX_HOPS hops and MAX_MODULES modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from repomap import store
from repomap.index.discover import read_file
from repomap.store import Store

MAX_HOPS = 4  # re-exports followed from the module named first
MAX_MODULES = 400  # modules looked up for one name
MAX_PARTS = 32  # a longer dotted name is no module path
MAX_SOURCE_BYTES = 2_000_000  # a module read for its imports


class Alternative(NamedTuple):
    """A qualified name to look up, where, and how."""

    name: str
    file_ids: list[int] | None  # the files it must be in (None: any of the language's)
    language: str
    exact: bool  # the qualified name is `name` (else it may end with it, as `symbols` matches)


def alternatives(db: Store, name: str) -> Iterator[Alternative]:
    if "::" in name:
        yield from _rust(db, name)
    elif "." in name:
        parts = [part for part in name.split(".") if part != "__init__"]  # `pkg.__init__.X`
        if 1 < len(parts) <= MAX_PARTS and all(part.isidentifier() for part in parts):
            root = store.indexed_root(db, db.path.parent)
            yield from _PythonPaths(db, root).alternatives(parts)


def _rust(db: Store, name: str) -> Iterator[Alternative]:
    """The path without `crate::`, `self::` or `super::` (any module's parent: the rest may end
    a longer path); a path from a crate's name (`alloc::vec::Vec`, `::alloc::vec::Vec`) without
    it, in the crate's folder first (a workspace's crates each have a `resolver::Resolver`)."""
    parts = name.split("::")
    if len(parts) > MAX_PARTS:
        return
    absolute = parts[0] == ""
    parts = parts[1:] if absolute else parts
    prefix = []
    while parts and parts[0] in ("crate", "self", "super"):
        prefix.append(parts.pop(0))
    if not parts or not all(parts):
        return
    if prefix:
        yield Alternative("::".join(parts), None, "rust", "super" not in prefix)
    elif len(parts) > 1:
        rest = "::".join(parts[1:])
        if parts[0].isidentifier():
            folder = _crate_files(db, parts[0])
            if folder:
                yield Alternative(rest, folder, "rust", True)
        yield Alternative(rest, None, "rust", True)


# A crate's folder is named as the crate, or with `-` where the crate's name has `_`.
_CRATE_FILES_SQL = """SELECT id FROM files WHERE language = 'rust'
AND (path GLOB :a || '/*' OR path GLOB '*/' || :a || '/*'
     OR path GLOB :b || '/*' OR path GLOB '*/' || :b || '/*')"""


def _crate_files(db: Store, crate: str) -> list[int]:
    rows = db.conn.execute(_CRATE_FILES_SQL, {"a": crate, "b": crate.replace("_", "-")})
    return [file_id for (file_id,) in rows]


class _Module(NamedTuple):
    """A module as path parts: the end of its files' paths, or (`exact`) the whole of them (a
    relative import's, resolved from the importing file's folder)."""

    parts: tuple[str, ...]
    exact: bool


class _Import(NamedTuple):
    """One name a module imports: `bound` is the name it has there (None: a star import), from
    module `origin`, where its name is `name` (a star's: None)."""

    bound: str | None
    origin: _Module
    name: str | None


class _PythonPaths:
    """A Python name's modules and the imports followed from them, for one lookup: each
    module's files looked up once, each file's imports read once, every source of one hop
    before the next, and at most MAX_MODULES modules in all (a package that star-imports
    hundreds of modules, each of which does too, would otherwise make a path through every
    chain of them)."""

    def __init__(self, db: Store, root: Path) -> None:
        self.root = root
        self.by_name = db.per_content("python modules", lambda: _python_modules(db))
        self.files: dict[_Module, list[tuple[int, str]]] = {}
        self.imports: dict[str, list[_Import]] = {}
        self.packages: set[str] | None = None

    def alternatives(self, parts: list[str]) -> Iterator[Alternative]:
        """The longest module first (`a.b.C.d` is `C.d` in module a.b, else `b.C.d` in a);
        then, a hop at a time, the modules those import the name from: every module of a hop
        tried before any of them is read for its imports, names imported by name before
        star imports."""
        level = [
            (_Module(tuple(parts[:cut]), False), tuple(parts[cut:]))
            for cut in range(len(parts) - 1, 0, -1)
        ]
        seen = set(level)
        for hops in range(MAX_HOPS + 1):
            found: list[tuple[tuple[str, ...], list[tuple[int, str]]]] = []
            for module, rest in level:
                files = self.module_files(module)
                if files is None:
                    return  # MAX_MODULES looked up
                if files:
                    yield Alternative(".".join(rest), [i for i, _ in files], "python", True)
                    found.append((rest, files))
            if hops == MAX_HOPS:
                return
            named: list[tuple[_Module, tuple[str, ...]]] = []
            starred: list[tuple[_Module, tuple[str, ...]]] = []
            for rest, files in found:
                for _, path in files:
                    for item in self.imports_of(path):
                        if item.name is None:  # `from m import *`
                            starred.append((item.origin, rest))
                        elif item.bound == rest[0]:
                            named.append((item.origin, (item.name, *rest[1:])))
                            if len(rest) > 1:  # `from a import b` may import the module a.b
                                inner = _Module((*item.origin.parts, item.name), item.origin.exact)
                                named.append((inner, rest[1:]))
            level = [pair for pair in dict.fromkeys(named + starred) if pair not in seen]
            seen.update(level)

    def module_files(self, module: _Module) -> list[tuple[int, str]] | None:
        if module not in self.files:
            if len(self.files) >= MAX_MODULES:
                return None
            self.files[module] = _module_files(self.by_name, module)
        return self.files[module]

    def imports_of(self, path: str) -> list[_Import]:
        if path not in self.imports:
            if self.packages is None:  # the folders that hold an `__init__.py` or `.pyi`
                self.packages = {
                    path.rpartition("/")[0]
                    for paths in self.by_name.values()
                    for _, path in paths
                    if path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")
                }
            self.imports[path] = _imports(self.root, path, self.packages)
        return self.imports[path]


def _module_files(
    by_name: dict[str, list[tuple[int, str]]], module: _Module
) -> list[tuple[int, str]]:
    """(id, path) of the files that are `module` (`a/b.py`, `a/b/__init__.py`, their stubs),
    under any folder unless it is exact; shortest path first."""
    if not module.parts:
        return []
    stem = "/".join(module.parts)
    forms = (f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py", f"{stem}/__init__.pyi")
    tails = () if module.exact else tuple(f"/{form}" for form in forms)
    found = [
        (file_id, path)
        for file_id, path in by_name.get(module.parts[-1], ())
        if path in forms or path.endswith(tails)
    ]
    return sorted(found, key=lambda row: (len(row[1]), row[1]))


def _python_modules(db: Store) -> dict[str, list[tuple[int, str]]]:
    """The Python files by the last name of the module each is (`b` for a/b.py and for
    a/b/__init__.py): one read of `files` per lookup (per index content in a server)."""
    by_name: dict[str, list[tuple[int, str]]] = {}
    for file_id, path in db.conn.execute("SELECT id, path FROM files WHERE language = 'python'"):
        folder, _, file_name = path.rpartition("/")
        stem = file_name.split(".", 1)[0]
        if stem == "__init__":
            stem = folder.rpartition("/")[2]
        by_name.setdefault(stem, []).append((file_id, path))
    return by_name


def _imports(root: Path, path: str, packages: set[str]) -> list[_Import]:
    """The names the module at `path` imports, and from where: a relative import from the
    file's own folder (`from ..helpers import x` in src/lib/core/__init__.py is src/lib/
    helpers), if the folder it climbs to is a package (one of `packages`), an absolute one by
    its module path."""
    source, _ = read_file(root / path, root, MAX_SOURCE_BYTES)
    if source is None:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # not Python this version parses, or nested past the parser's limits
    folder = path.split("/")[:-1]  # the package a module's relative imports start from
    found: list[_Import] = []
    for node in _top_level(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:  # `import a.b as c`: c is module a.b
                    *package, last = alias.name.split(".")
                    found.append(_Import(alias.asname, _Module(tuple(package), False), last))
        elif isinstance(node, ast.ImportFrom):
            named = tuple(node.module.split(".")) if node.module else ()
            if node.level:
                base = folder[: len(folder) - node.level + 1]
                if node.level - 1 > len(folder) or (
                    node.level > 1 and "/".join(base) not in packages
                ):
                    continue  # beyond the top package: Python refuses it
                origin = _Module((*base, *named), True)
            else:
                origin = _Module(named, False)
            for alias in node.names:
                if alias.name == "*":
                    found.append(_Import(None, origin, None))
                else:
                    found.append(_Import(alias.asname or alias.name, origin, alias.name))
    return found


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A module's statements, with those inside its top-level `if` and `try` blocks (imports
    under `if TYPE_CHECKING:`, or `try: from ._speedups import x`)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                yield from _top_level(handler.body)
