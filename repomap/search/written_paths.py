"""A symbol named by its path as code writes it, where no qualified name in the index is that path.

Python's qualified names start inside the module (`QuerySet.filter`), while people, imports and
tracebacks name a symbol through its module (`django.db.models.query.QuerySet.filter`), often
through a package that re-exports it (`django.db.models.QuerySet`, `pydantic_core.SchemaValidator`).
Rust's start at the crate's modules (`vec::Vec`), while `use` lines start at `crate::`, `self::`
or the crate's name (`alloc::vec::Vec`, `_pydantic_core::validators::UnionValidator`).

`alternatives(db, name)` yields what `find_symbol` tries next, in order: a qualified name and the
files it must be in (None: any file). A Python module is the file whose path ends with the
module's (`django/db/models/query.py`, `python/pydantic_core/__init__.py`: a source folder
before it is allowed); a name the module does not define is followed through its `from ...
import` (relative or absolute, `*` too), as Python follows it, up to MAX_HOPS modules.
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
MAX_SOURCE_BYTES = 2_000_000  # a module read for its imports

Alternative = tuple[str, list[int] | None]  # (qualified name, the files it must be in)


def alternatives(db: Store, name: str) -> Iterator[Alternative]:
    if "::" in name:
        yield from _rust(db, name)
    elif "." in name:
        parts = name.split(".")
        if all(part.isidentifier() for part in parts):
            root = store.indexed_root(db, db.path.parent)
            yield from _PythonPaths(db, root).alternatives(parts)


def _rust(db: Store, name: str) -> Iterator[Alternative]:
    """Without `::`, `crate::` or `self::` in front, then without the crate's name: in the
    crate's folder first (a workspace's crates each have a `resolver::Resolver`), then in any."""
    parts = name.split("::")
    while parts and parts[0] in ("", "crate", "self"):
        parts = parts[1:]
    if len(parts) < 2:
        return
    if len(parts) < len(name.split("::")):
        yield "::".join(parts), None
    if len(parts) > 2:  # a crate's name (`alloc::vec::Vec`): one segment, a path left
        rest = "::".join(parts[1:])
        if parts[0].isidentifier():
            folder = _crate_files(db, parts[0])
            if folder:
                yield rest, folder
        yield rest, None


# A crate's folder is named as the crate, or with `-` where the crate's name has `_`.
_CRATE_FILES_SQL = """SELECT id FROM files WHERE language = 'rust'
AND (path GLOB :a || '/*' OR path GLOB '*/' || :a || '/*'
     OR path GLOB :b || '/*' OR path GLOB '*/' || :b || '/*')"""


def _crate_files(db: Store, crate: str) -> list[int]:
    rows = db.conn.execute(_CRATE_FILES_SQL, {"a": crate, "b": crate.replace("_", "-")})
    return [file_id for (file_id,) in rows]


class _PythonPaths:
    """A Python name's modules and the imports followed from them, for one lookup: each
    module's files looked up once, each file's imports read once, every source of one hop
    before the next, and at most MAX_MODULES modules in all (a package that star-imports
    hundreds of modules, each of which does too, would otherwise make a path through every
    chain of them)."""

    def __init__(self, db: Store, root: Path) -> None:
        self.db = db
        self.root = root
        self.seen: set[str] = set()  # (module, rest) pairs met, as text
        self.by_name = db.per_content("python modules", lambda: _python_modules(db))
        self.files: dict[tuple[str, ...], list[tuple[int, str]]] = {}
        self.imports: dict[tuple[str, tuple[str, ...]], list[_Import]] = {}

    def alternatives(self, parts: list[str]) -> Iterator[Alternative]:
        """The longest module first (`a.b.C.d` is `C.d` in module a.b, else `b.C.d` in a);
        then, a hop at a time, the modules those import the name from."""
        level = [(parts[:cut], parts[cut:]) for cut in range(len(parts) - 1, 0, -1)]
        for hops in range(MAX_HOPS + 1):
            onward: list[tuple[list[str], list[str]]] = []
            for module, rest in level:
                files = self.module_files(module)
                if files is None:
                    return  # MAX_MODULES looked up
                if not files:
                    continue
                yield ".".join(rest), [file_id for file_id, _ in files]
                if hops == MAX_HOPS:
                    continue
                for _, path in files:
                    for origin, name in _sources(self.imports_of(path, module), rest[0]):
                        onward.append((origin, [name, *rest[1:]]))
                        if len(rest) > 1:  # `from a import b` may import the module a.b
                            onward.append(([*origin, name], rest[1:]))
            level = []
            for module, rest in onward:
                key = f"{'.'.join(module)}:{'.'.join(rest)}"
                if key not in self.seen:
                    self.seen.add(key)
                    level.append((module, rest))

    def module_files(self, module: list[str]) -> list[tuple[int, str]] | None:
        key = tuple(module)
        if key not in self.files:
            if len(self.files) >= MAX_MODULES:
                return None
            self.files[key] = _module_files(self.by_name, module)
        return self.files[key]

    def imports_of(self, path: str, module: list[str]) -> list[_Import]:
        key = (path, tuple(module))
        if key not in self.imports:
            self.imports[key] = _imports(self.root, path, module)
        return self.imports[key]


def _module_files(
    by_name: dict[str, list[tuple[int, str]]], module: list[str]
) -> list[tuple[int, str]]:
    """(id, path) of the files that are module `module` (`a/b.py`, `a/b/__init__.py`, their
    stubs), under any folder; shortest path first."""
    stem = "/".join(module)
    forms = (f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py", f"{stem}/__init__.pyi")
    found = [
        (file_id, path)
        for file_id, path in by_name.get(module[-1], ())
        if path in forms or path.endswith(tuple(f"/{form}" for form in forms))
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


class _Import(NamedTuple):
    """One name a module imports: `bound` is the name it has there (None: a star import),
    `source` the module it comes from followed by its name there."""

    bound: str | None
    source: list[str]  # a star's: the module itself


def _imports(root: Path, path: str, module: list[str]) -> list[_Import]:
    """The names module `module` (the file at `path`) imports, with where from:
    `from .query import QuerySet` in django/db/models is (QuerySet, django.db.models.query.
    QuerySet); relative imports resolved against the module's package."""
    source, _ = read_file(root / path, root, MAX_SOURCE_BYTES)
    if source is None:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    is_package = path.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")
    package = module if is_package else module[:-1]
    found: list[_Import] = []
    for node in _top_level(tree.body):
        if isinstance(node, ast.Import):
            found += [
                _Import(alias.asname, alias.name.split(".")) for alias in node.names if alias.asname
            ]
        elif isinstance(node, ast.ImportFrom):
            if node.level > len(package) + 1:
                continue  # beyond the top package
            base = package[: len(package) - node.level + 1] if node.level else []
            origin = [*base, *(node.module.split(".") if node.module else [])]
            for alias in node.names:
                if alias.name == "*":
                    found.append(_Import(None, origin))
                else:
                    found.append(_Import(alias.asname or alias.name, [*origin, alias.name]))
    return found


def _sources(imports: list[_Import], wanted: str) -> list[tuple[list[str], str]]:
    """Where `wanted` may come from, as (module, its name there): the imports that bind it,
    then the star imports."""
    named = [(item.source[:-1], item.source[-1]) for item in imports if item.bound == wanted]
    return named + [(item.source, wanted) for item in imports if item.bound is None]


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
