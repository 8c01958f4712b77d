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
import json
from collections.abc import Iterator
from pathlib import Path

from repomap import store
from repomap.index.discover import read_file
from repomap.store import Store

MAX_HOPS = 4  # re-exports followed from the module named first
MAX_SOURCE_BYTES = 2_000_000  # a module read for its imports

Alternative = tuple[str, list[int] | None]  # (qualified name, the files it must be in)


def alternatives(db: Store, name: str) -> Iterator[Alternative]:
    if "::" in name:
        yield from _rust(db, name)
    elif "." in name:
        parts = name.split(".")
        if all(part.isidentifier() for part in parts):
            root = store.indexed_root(db, db.path.parent)
            yield from _python(db, root, parts, hops=0, seen={name})


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


def _python(
    db: Store, root: Path, parts: list[str], hops: int, seen: set[str]
) -> Iterator[Alternative]:
    """The longest module first: `a.b.C.d` is `C.d` in module a.b, else `b.C.d` in a."""
    for cut in range(len(parts) - 1, 0, -1):
        module, rest = parts[:cut], parts[cut:]
        files = _module_files(db, module)
        if not files:
            continue
        yield ".".join(rest), [file_id for file_id, _ in files]
        if hops >= MAX_HOPS:
            continue
        for _, path in files:
            for target in _imported(root, path, module, rest[0]):
                onward = [*target, *rest[1:]]
                if ".".join(onward) not in seen:
                    seen.add(".".join(onward))
                    yield from _python(db, root, onward, hops + 1, seen)


# `files.path`, spelled out: json_each has a column `path` of its own.
_MODULE_FILES_SQL = """SELECT id, path FROM files WHERE language = 'python'
AND (files.path IN (SELECT value FROM json_each(:forms))
     OR EXISTS (SELECT 1 FROM json_each(:forms) j WHERE files.path GLOB '*/' || j.value))"""


def _module_files(db: Store, module: list[str]) -> list[tuple[int, str]]:
    """(id, path) of the files that are module `module` (`a/b.py`, `a/b/__init__.py`, their
    stubs), under any folder. The parts are identifiers: nothing GLOB would read as a pattern."""
    stem = "/".join(module)
    forms = [f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py", f"{stem}/__init__.pyi"]
    rows = db.conn.execute(_MODULE_FILES_SQL, {"forms": json.dumps(forms)})
    return sorted(rows, key=lambda row: (len(row[1]), row[1]))


def _imported(root: Path, path: str, module: list[str], wanted: str) -> list[list[str]]:
    """Where module `module` (the file at `path`) imports the name `wanted` from, as module
    paths ending with the name there: `from .query import QuerySet` in django/db/models gives
    django.db.models.query.QuerySet. A star import is a place it may come from, tried last."""
    source, _ = read_file(root / path, root, MAX_SOURCE_BYTES)
    if source is None:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    is_package = path.endswith(("/__init__.py", "/__init__.pyi")) or path in (
        "__init__.py",
        "__init__.pyi",
    )
    package = module if is_package else module[:-1]
    named: list[list[str]] = []
    starred: list[list[str]] = []
    for node in _top_level(tree.body):
        if isinstance(node, ast.Import):
            named += [alias.name.split(".") for alias in node.names if alias.asname == wanted]
        elif isinstance(node, ast.ImportFrom):
            if node.level > len(package) + 1:
                continue  # beyond the top package
            base = package[: len(package) - node.level + 1] if node.level else []
            source_module = [*base, *(node.module.split(".") if node.module else [])]
            for alias in node.names:
                if alias.name == "*":
                    starred.append([*source_module, wanted])
                elif (alias.asname or alias.name) == wanted:
                    named.append([*source_module, alias.name])
    return named + starred


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
