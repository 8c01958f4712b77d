"""The namespace macros of a C++ tree (`FMT_BEGIN_NAMESPACE`), kept current from run to run.

A library defines them in one header and uses them in every other, so the extractor of any
one file needs the whole tree's definitions (extractors/cpp_namespaces.py). They are kept in
the index's meta, per defining file: a run reads the definitions of the C++ files it
re-extracts (reading the file once more, before the workers), drops those of files gone, and
merges the rest. When the merged table changes (a definition edited, its header added or
removed), the C++ files that use a changed macro are extracted again although their bytes did
not change; the definitions change rarely, so this is rare too.

Which files may hold C++ (`may_be_cpp`): those first read as C++, and every `.h` unless the
tree is a C tree (`.c` files and no C++ source: the Linux kernel's, Lua's), whose headers
are C (C has no namespaces). A tree of headers alone (LLVM's include/, fmt's) has its `.h`
read, as their text may show C++.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from repomap import store
from repomap.extractors.cpp_namespaces import EMPTY, Opener, Table, definitions, merged
from repomap.index.discover import read_file
from repomap.languages import CPP_SOURCE_SUFFIXES

META_KEY = "cpp_namespaces"

PerFile = dict[str, dict[str, object]]  # rel_path -> Table.to_json() of that file's own


def reads_headers(rel_paths: list[str]) -> bool:
    """Whether a tree's `.h` files are read for definitions: unless it is a C tree (`.c` files
    and no C++ source; the Linux kernel's 23,000 headers took 4 s to read)."""
    has_c = has_cpp = False
    for rel_path in rel_paths:
        suffix = rel_path[rel_path.rfind(".") :]
        has_c = has_c or suffix == ".c"
        has_cpp = has_cpp or suffix in CPP_SOURCE_SUFFIXES
        if has_cpp:
            return True
    return not has_c


def may_be_cpp(rel_path: str, language: str, headers: bool) -> bool:
    return language == "cpp" or (headers and rel_path.endswith(".h"))


def stored(db: store.Store) -> tuple[PerFile, bool | None]:
    """The definitions kept per file, and whether `.h` files were read for them."""
    raw = store.get_meta(db, META_KEY)
    if not raw:
        return {}, None
    found = json.loads(raw)
    if not isinstance(found, dict) or not isinstance(found.get("files"), dict):
        return {}, None  # another layout: read again
    return found["files"], bool(found.get("headers"))


def table_of(per_file: PerFile) -> Table:
    if not per_file:
        return EMPTY
    tables = ((path, Table.from_json(entry)) for path, entry in per_file.items())
    return merged((path, dict(t.macros), dict(t.aliases)) for path, t in tables)


def updated(
    per_file: PerFile, read: Iterable[tuple[str, Path, Path, int]], present: set[str]
) -> PerFile:
    """`per_file` with the definitions of the files `read` (rel_path, path, root, max size)
    taken from their bytes now, and those of files no longer `present` dropped."""
    result = {path: entry for path, entry in per_file.items() if path in present}
    for rel_path, path, root, max_size in read:
        raw, _problem = read_file(path, root, max_size)
        macros, aliases = definitions(raw) if raw is not None else ({}, {})
        if macros or aliases:
            result[rel_path] = Table(macros, aliases).to_json()
        else:
            result.pop(rel_path, None)
    return result


def save(db: store.Store, per_file: PerFile, headers: bool) -> None:
    value = {"headers": headers, "files": per_file}
    store.set_meta(db, {META_KEY: json.dumps(value, sort_keys=True)})


def changed_names(old: Table, new: Table) -> set[str]:
    """The macros whose uses read differently under `new`: every opener when the aliases
    changed (an opener's namespace may be named by one)."""
    names = {
        name
        for name in old.macros.keys() | new.macros.keys()
        if old.macros.get(name) != new.macros.get(name)
    }
    if old.aliases != new.aliases:
        names |= {n for t in (old, new) for n, d in t.macros.items() if isinstance(d, Opener)}
    return names


def uses_any(path: Path, root: Path, max_size: int, names: Iterable[str]) -> bool:
    """Whether the file's bytes hold one of `names` (a use, or a word that looks like one)."""
    raw, _problem = read_file(path, root, max_size)
    return raw is not None and any(name.encode("ascii") in raw for name in names)
