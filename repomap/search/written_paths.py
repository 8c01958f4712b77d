"""A symbol named by its path as code writes it, where no qualified name in the index is that path.

Python's qualified names start inside the module (`QuerySet.filter`), while people, imports and
tracebacks name a symbol through its module (`django.db.models.query.QuerySet.filter`), often
through a package that re-exports it (`django.db.models.QuerySet`, `pydantic_core.SchemaValidator`).
Rust's start at the crate's modules (`vec::Vec`), while `use` lines start at `crate::`, `self::`,
`super::` or the crate's name (`alloc::vec::Vec`, `_pydantic_core::validators::UnionValidator`).

`alternatives(db, name)` yields what `find_symbol` tries next, in order. A Python module is a
file whose path ends with the module's, under any folder (`django/db/models/query.py`,
`python/pydantic_core/__init__.py`; a tree that vendors `compat/json.py` has a module `json`:
the standard library is not in the index), and the rest of the name must be a qualified name
in it exactly; a name the module does not define is followed through its imports as Python
follows them (`from .query import QuerySet` from the importing file's own folder, absolute
ones by their path, aliases, `*` with `__all__`), a hop at a time, at most MAX_HOPS hops,
MAX_MODULES modules and MAX_PARSED_BYTES of source. A Rust path is followed through its crate's
re-exports the same way (`pub use`, globs, inline modules; `_RustModules`). Members a class
inherits are symbols.py's (`_inherited`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from repomap import store
from repomap.config import toml_module
from repomap.index import rust_paths
from repomap.index.discover import read_file
from repomap.store import Store

MAX_HOPS = 4  # re-exports followed from the module named first
MAX_MODULES = 400  # modules looked up for one name
MAX_PARTS = 32  # a longer dotted name is no module path
MAX_CRATES = 32  # crates of the tree looked up for one Rust path
MAX_SOURCE_BYTES = 2_000_000  # a module read for its imports
MAX_PARSED_BYTES = 2_000_000  # of modules read for one name (~1 s of `ast` at most)


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
    """The path without `crate::` (the crate's root: the rest is exact), `self::` or `super::`
    (a module unknown here: the rest ends a longer path), or without a crate's name
    (`alloc::vec::Vec`, `::alloc::vec::Vec`) in that crate's files: a crate a `Cargo.toml` of
    the tree names, or a folder named as the crate. `Vec::new` or `tokio::spawn` name no crate
    of the tree, so nothing. Then, from the crate's root, the paths its re-exports make of it
    (`regex::Regex` is `re_unicode::Regex`: `_RustModules`)."""
    parts = name.split("::")
    if len(parts) > MAX_PARTS:
        return
    parts = parts[1:] if parts[0] == "" else parts
    prefix = []
    while parts and parts[0] in ("crate", "self", "super"):
        prefix.append(parts.pop(0))
    if not parts or not all(parts):
        return
    if prefix:
        yield Alternative("::".join(parts), None, "rust", prefix == ["crate"])
        if prefix == ["crate"]:
            rows = db.conn.execute("SELECT id, path FROM files WHERE language = 'rust'")
            yield from _RustModules(db, rows.fetchall(), None).alternatives(None, tuple(parts))
    elif len(parts) > 1 and parts[0].isidentifier():
        files = _crate_files(db, parts[0])
        if files:
            yield Alternative("::".join(parts[1:]), [file_id for file_id, _ in files], "rust", True)
            yield from _RustModules(db, files, parts[0]).alternatives(parts[0], tuple(parts[1:]))


# A crate's folder: its Cargo.toml's (by `[package] name` or `[lib] name`, `-` read as `_`),
# else a folder named as the crate (the Rust standard library's `alloc/`, `core/`).
_CRATE_FOLDER_FILES_SQL = """SELECT id, path FROM files WHERE language = 'rust'
AND (path GLOB :a || '/*' OR path GLOB '*/' || :a || '/*'
     OR path GLOB :b || '/*' OR path GLOB '*/' || :b || '/*')"""
_MANIFESTS_SQL = """SELECT path FROM data_files
WHERE path = 'Cargo.toml' OR path GLOB '*/Cargo.toml'"""


def _crate_files(db: Store, crate: str) -> list[tuple[int, str]]:
    """(id, path) of the crate's Rust files."""
    crates = db.per_content("cargo crates", lambda: _cargo_crates(db))
    folders = crates.get(crate)
    if folders is not None:
        # A file is the crate's whose Cargo.toml is nearest above it: a workspace's root crate
        # does not take its members' files (nor their `pub use` lines).
        everyone = sorted({f for named in crates.values() for f in named}, key=len, reverse=True)
        rows = db.conn.execute("SELECT id, path FROM files WHERE language = 'rust'")
        return [
            (file_id, path)
            for file_id, path in rows
            if next((f for f in everyone if not f or path.startswith(f"{f}/")), None) in folders
        ]
    found = db.conn.execute(_CRATE_FOLDER_FILES_SQL, {"a": crate, "b": crate.replace("_", "-")})
    return found.fetchall()


def _cargo_crates(db: Store) -> dict[str, list[str]]:
    """Crate name -> the folders of the Cargo.toml files that name it ("" for the root)."""
    root = store.indexed_root(db, db.path.parent)
    crates: dict[str, list[str]] = {}
    for (path,) in db.conn.execute(_MANIFESTS_SQL).fetchall():
        raw, _ = read_file(root / path, root, MAX_SOURCE_BYTES)
        try:
            manifest = toml_module().loads(raw.decode("utf-8")) if raw is not None else {}
        except ValueError:  # not UTF-8, not TOML (tomllib's error is a ValueError)
            continue
        folder = path.rpartition("/")[0]
        for table in ("package", "lib"):
            section = manifest.get(table)
            named = section.get("name") if isinstance(section, dict) else None
            if isinstance(named, str):
                crates.setdefault(named.replace("-", "_"), []).append(folder)
    return crates


class _Sources:
    """Source files read for one lookup, at most MAX_PARSED_BYTES in all, MAX_SOURCE_BYTES each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.parsed = 0

    def read(self, path: str) -> bytes | None:
        """The file's bytes; None once the budget is spent, or when it cannot be read."""
        if self.parsed >= MAX_PARSED_BYTES:
            return None
        source, _ = read_file(self.root / path, self.root, MAX_SOURCE_BYTES)
        self.parsed += len(source or b"")
        return source


class _Crate(NamedTuple):
    ids: list[int]  # its Rust files
    by_module: dict[tuple[str, ...], list[str]]  # module path -> the files whose items it qualifies


_Path = tuple[str | None, tuple[str, ...]]  # (a crate's name, None for the tree's; a path in it)
# A module's re-exports: by the name each binds, and its globs.
_Uses = tuple[dict[str, list[rust_paths.Reexport]], list[rust_paths.Reexport]]


class _RustModules:
    """Crates' re-exports, followed for one lookup. A path's longest module first: the module's
    file (the file whose items it qualifies, or an inline `mod` in one), its `pub use` that
    binds the path's next name (else its globs), and the path that makes (`bytes::Regex` in
    regex's lib.rs, `pub mod bytes { pub use crate::re_bytes::*; }`, is `re_bytes::Regex`).
    A re-export from another crate of the tree is followed there (std's `pub use
    alloc_crate::vec;` after `extern crate alloc as alloc_crate;`). A hop at a time, at most
    MAX_HOPS hops, MAX_MODULES paths and MAX_PARSED_BYTES of source."""

    def __init__(self, db: Store, files: list[tuple[int, str]], crate: str | None) -> None:
        self.db = db
        self.sources = _Sources(store.indexed_root(db, db.path.parent))
        # The files a `mod` declaration loads as another module than their path says
        # (`#[path = "extern_impl.rs"] mod imp;`), as the index qualified their items.
        self.renamed = db.per_content("rust modules", lambda: rust_paths.stored_modules(db))
        self.crates: dict[str | None, _Crate | None] = {crate: _crate(files, self.renamed)}
        self.read: dict[str, list[rust_paths.Reexport]] = {}
        self.uses: dict[tuple[str | None, tuple[str, ...]], _Uses] = {}

    def alternatives(self, crate: str | None, path: tuple[str, ...]) -> Iterator[Alternative]:
        level: list[_Path] = [(crate, path)]
        seen = set(level)
        for _ in range(MAX_HOPS):
            onward = []
            for target in (t for item in level for t in self.targets(*item) if t not in seen):
                if len(seen) >= MAX_MODULES:
                    return
                seen.add(target)
                onward.append(target)
                found = self.crate(target[0])
                assert found is not None  # targets() only names crates of the tree
                yield Alternative("::".join(target[1]), found.ids, "rust", True)
            if not onward:
                return
            level = onward

    def crate(self, name: str | None) -> _Crate | None:
        if name not in self.crates:
            assert name is not None  # the tree's own crate is known from the start
            files = _crate_files(self.db, name) if len(self.crates) < MAX_CRATES else []
            self.crates[name] = _crate(files, self.renamed) if files else None
        return self.crates[name]

    def targets(self, crate: str | None, path: tuple[str, ...]) -> list[_Path]:
        """The paths the re-exports along `path` make of it, its longest module first."""
        found: list[_Path] = []
        for cut in range(len(path) - 1, -1, -1):
            module, name, rest = path[:cut], path[cut], path[cut + 1 :]
            by_name, globs = self.reexports(crate, module)
            for use in by_name.get(name) or globs:
                tail = rest if use.bound is not None else (name, *rest)
                for into, base in self.resolved(crate, use.target, module):
                    if base or tail:
                        found.append((into, (*base, *tail)))
        return list(dict.fromkeys(found))

    def reexports(self, crate: str | None, module: tuple[str, ...]) -> _Uses:
        """The re-exports of `module` by the name they bind, and its globs: those of the file it
        is, or of the inline `mod` it is in the nearest file above it. Once per module and
        lookup (a `lib.rs` of 20,000 globs was read again for each of them)."""
        key = (crate, module)
        if key not in self.uses:
            by_name: dict[str, list[rust_paths.Reexport]] = {}
            globs: list[rust_paths.Reexport] = []
            modules = self.crate(crate)
            for cut in range(len(module), -1, -1):
                paths = modules.by_module.get(module[:cut]) if modules is not None else None
                if paths:
                    inline = module[cut:]
                    for use in (u for path in paths for u in self.file(path) if u.module == inline):
                        if use.bound is None:
                            globs.append(use)
                        else:
                            by_name.setdefault(use.bound, []).append(use)
                    break
            self.uses[key] = (by_name, globs)
        return self.uses[key]

    def file(self, path: str) -> list[rust_paths.Reexport]:
        if path not in self.read:
            source = self.sources.read(path)
            self.read[path] = rust_paths.reexports(source) if source is not None else []
        return self.read[path]

    def resolved(
        self, crate: str | None, target: tuple[str, ...], module: tuple[str, ...]
    ) -> list[_Path]:
        """`target`, written in `module` of `crate`, as paths from a crate's root: `crate::`,
        `self::` and `super::` as Rust reads them; `::name` a crate of the tree; another first
        name a child module's (Rust 2018), one at the root (2015's `use` paths), or a crate of
        the tree, by its name or the name an `extern crate ... as` at the root gives it."""
        head, rest = target[0], target[1:]
        if head == "crate" or (head == crate and rest):
            return [(crate, rest)]
        if head == "":  # `::name::...`
            return [(rest[0], rest[1:])] if rest and self.crate(rest[0]) is not None else []
        if head in ("self", "super"):
            base = module
            while target and target[0] in ("self", "super"):
                if target[0] == "super":
                    if not base:
                        return []
                    base = base[:-1]
                target = target[1:]
            return [(crate, (*base, *target))]
        found: list[_Path] = [(crate, (*module, *target)), (crate, target)]
        aliased = [
            use.target[1]
            for use in self.reexports(crate, ())[0].get(head, ())
            if use.target[0] == "" and len(use.target) > 1
        ]
        for other in [*aliased, head]:
            if other != crate and self.crate(other) is not None:
                found.append((other, rest))
        return list(dict.fromkeys(found))


def _crate(files: list[tuple[int, str]], renamed: dict[str, str]) -> _Crate:
    by_module: dict[tuple[str, ...], list[str]] = {}
    for _, path in files:
        module = rust_paths.module_of(path, renamed)
        by_module.setdefault(tuple(module.split("::")) if module else (), []).append(path)
    return _Crate([file_id for file_id, _ in files], by_module)


class _Module(NamedTuple):
    """A module as path parts: the end of its files' paths, or (`exact`) the whole of them (a
    relative import's, resolved from the importing file's folder)."""

    parts: tuple[str, ...]
    exact: bool


class _Import(NamedTuple):
    """One name a module imports: `bound` is the name it has there (None: a star import), from
    module `origin`, where its name is `name` (a star's: None); `fallback`: in an `except`
    handler, which runs only when the `try` before it failed."""

    bound: str | None
    origin: _Module
    name: str | None
    fallback: bool


class _ModuleInfo(NamedTuple):
    imports: list[_Import]
    exports: frozenset[str] | None  # a literal `__all__`, what a star import of it takes


class _File(NamedTuple):
    id: int
    path: str  # relative to the root
    module_path: str  # as its module's path reads: the root's name first when it is a package


_NOTHING = _ModuleInfo([], None)
_Item = tuple[_Module, tuple[str, ...], bool]  # a module, the rest of the name, through a star


class _PythonPaths:
    """A Python name's modules and the imports followed from them, for one lookup: each
    module's files looked up once, each file read once, every module of one hop before the
    next, and at most MAX_MODULES modules and MAX_PARSED_BYTES of source in all (a package
    that star-imports hundreds of modules, each of which does too, would otherwise make a path
    through every chain of them)."""

    def __init__(self, db: Store, root: Path) -> None:
        self.sources = _Sources(root)
        self.by_name = db.per_content("python modules", lambda: _python_modules(db, root))
        self.files: dict[_Module, list[_File]] = {}
        self.infos: dict[str, _ModuleInfo] = {}
        self.packages: set[str] | None = None

    def alternatives(self, parts: list[str]) -> Iterator[Alternative]:
        """The longest module first (`a.b.C.d` is `C.d` in module a.b, else `b.C.d` in a);
        then, a hop at a time, where those modules import the name from: its last binding
        by name (an `except` handler's only when no other binds it), else the star imports,
        the last first, each only for a name it exports (`__all__`, else no leading `_`)."""
        level: list[_Item] = [
            (_Module(tuple(parts[:cut]), False), tuple(parts[cut:]), False)
            for cut in range(len(parts) - 1, 0, -1)
        ]
        seen = set(level)
        for hops in range(MAX_HOPS + 1):
            found: list[tuple[tuple[str, ...], list[_File]]] = []
            for module, rest, via_star in level:
                files = self.module_files(module)
                if files is None:
                    return  # MAX_MODULES looked up
                if via_star:
                    files = [f for f in files if _exported(self.info(f.path), rest[0])]
                if files:
                    yield Alternative(".".join(rest), [f.id for f in files], "python", True)
                    found.append((rest, files))
            if hops == MAX_HOPS:
                return
            onward: list[_Item] = []
            for rest, files in found:
                for file in files:
                    onward += _sources(self.info(file.path).imports, rest)
            level = [item for item in dict.fromkeys(onward) if item not in seen]
            seen.update(level)

    def module_files(self, module: _Module) -> list[_File] | None:
        if module not in self.files:
            if len(self.files) >= MAX_MODULES:
                return None
            self.files[module] = _module_files(self.by_name, module)
        return self.files[module]

    def info(self, path: str) -> _ModuleInfo:
        if path not in self.infos:
            if self.packages is None:  # the folders that hold an `__init__.py` or `.pyi`
                self.packages = {
                    file.path.rpartition("/")[0]
                    for files in self.by_name.values()
                    for file in files
                    if file.path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")
                }
            source = self.sources.read(path)
            self.infos[path] = _NOTHING if source is None else _read(source, path, self.packages)
        return self.infos[path]


def _sources(imports: list[_Import], rest: tuple[str, ...]) -> list[_Item]:
    """Where the name `rest[0]` of a module comes from (see alternatives)."""
    binding = [item for item in imports if item.bound == rest[0] and item.name is not None]
    chosen = [item for item in binding if not item.fallback] or binding
    if chosen:
        item = chosen[-1]
        assert item.name is not None
        found: list[_Item] = [(item.origin, (item.name, *rest[1:]), False)]
        if len(rest) > 1:  # `from a import b` may import the module a.b
            found.append(
                (_Module((*item.origin.parts, item.name), item.origin.exact), rest[1:], False)
            )
        return found
    return [(item.origin, rest, True) for item in reversed(imports) if item.name is None]


def _exported(info: _ModuleInfo, name: str) -> bool:
    return name in info.exports if info.exports is not None else not name.startswith("_")


def _module_files(by_name: dict[str, list[_File]], module: _Module) -> list[_File]:
    """The files that are `module` (`a/b.py`, `a/b/__init__.py`, their stubs), under any
    folder unless it is exact; a package over a module of the same name, as Python imports
    it; shortest path first."""
    if not module.parts:
        return []
    stem = "/".join(module.parts)
    forms = (f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py", f"{stem}/__init__.pyi")
    tails = tuple(f"/{form}" for form in forms)
    candidates = by_name.get(module.parts[-1], [])
    if module.exact:  # a relative import's: the path from the root
        found = [f for f in candidates if f.path in forms]
    else:
        found = [f for f in candidates if f.module_path in forms or f.module_path.endswith(tails)]
    packages = {_location(f.path) for f in found if _is_package(f.path)}
    found = [f for f in found if _is_package(f.path) or _location(f.path) not in packages]
    return sorted(found, key=lambda file: (len(file.path), file.path))


def _is_package(path: str) -> bool:
    return path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")


def _location(path: str) -> str:
    """Where a module is, whichever file it is: `a/b` for a/b.py and a/b/__init__.py."""
    if _is_package(path):
        return path.rpartition("/")[0]
    return path.rsplit(".", 1)[0]


def _python_modules(db: Store, root: Path) -> dict[str, list[_File]]:
    """The Python files by the last name of the module each is (`b` for a/b.py and for
    a/b/__init__.py): one read of `files` per lookup (per index content in a server). When
    the root itself is a package (an `__init__.py` in it), its name starts every module path."""
    rows = db.conn.execute("SELECT id, path FROM files WHERE language = 'python'").fetchall()
    is_package = any(path in ("__init__.py", "__init__.pyi") for _, path in rows)
    top = f"{root.name}/" if is_package and root.name.isidentifier() else ""
    by_name: dict[str, list[_File]] = {}
    for file_id, path in rows:
        module_path = top + path
        folder, _, file_name = module_path.rpartition("/")
        stem = file_name.split(".", 1)[0]
        if stem == "__init__":
            stem = folder.rpartition("/")[2]
        by_name.setdefault(stem, []).append(_File(file_id, path, module_path))
    return by_name


def _read(source: bytes, path: str, packages: set[str]) -> _ModuleInfo:
    """The names the module at `path` imports, and from where: a relative import from the
    file's own folder (`from ..helpers import x` in src/lib/core/__init__.py is src/lib/
    helpers), never up out of a package into a folder that is none (Python refuses it; a
    namespace package's folders are no packages either, and climb freely), an absolute one by
    its module path; and its literal `__all__`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _NOTHING  # not Python this version parses, or nested past the parser's limits
    folder = path.split("/")[:-1]  # the package a module's relative imports start from
    found: list[_Import] = []
    exports: set[str] | None = None
    for node, fallback in _top_level(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:  # `import a.b as c`: c is module a.b
                    *package, last = alias.name.split(".")
                    origin = _Module(tuple(package), False)
                    found.append(_Import(alias.asname, origin, last, fallback))
        elif isinstance(node, ast.ImportFrom):
            named = tuple(node.module.split(".")) if node.module else ()
            if node.level:
                base = folder[: len(folder) - node.level + 1]
                if node.level - 1 > len(folder) or not _may_climb(folder, base, packages):
                    continue
                origin = _Module((*base, *named), True)
            else:
                origin = _Module(named, False)
            for alias in node.names:
                if alias.name == "*":
                    found.append(_Import(None, origin, None, fallback))
                else:
                    found.append(_Import(alias.asname or alias.name, origin, alias.name, fallback))
        elif (listed := _all_names(node)) is not None:
            exports = (exports or set()) | listed if isinstance(node, ast.AugAssign) else listed
    return _ModuleInfo(found, None if exports is None else frozenset(exports))


def _may_climb(folder: list[str], base: list[str], packages: set[str]) -> bool:
    """Whether a relative import in `folder` may reach `base`: it is a package, or none of the
    folders between is one (namespace packages)."""
    if "/".join(base) in packages or len(base) == len(folder):
        return True
    between = ["/".join(folder[:end]) for end in range(len(base) + 1, len(folder) + 1)]
    return not any(place in packages for place in between)


def _all_names(node: ast.stmt) -> set[str] | None:
    """The names of `__all__ = [...]` or `__all__ += [...]` (strings only), else None."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    else:
        return None
    if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
        return None
    value = node.value
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    return {
        item.value
        for item in value.elts
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    }


def _top_level(body: list[ast.stmt], fallback: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """A module's statements, with those inside its top-level `if` and `try` blocks (imports
    under `if TYPE_CHECKING:`, or `try: from ._speedups import x`), each with whether it is in
    an `except` handler."""
    for node in body:
        yield node, fallback
        if isinstance(node, ast.If):
            yield from _top_level(node.body + node.orelse, fallback)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse + node.finalbody, fallback)
            for handler in node.handlers:
                yield from _top_level(handler.body, True)
