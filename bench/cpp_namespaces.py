"""C++ namespaces opened by macros: how many members get their namespace, at what cost.

    python bench/cpp_namespaces.py [--corpus llvm,nlohmann,fmt,...] [--dir NAME=PATH ...]

For each corpus (bench/c_recall.py's, plus any `--dir`) it reads the namespace macros as
`repomap index` does (repomap/index/namespaces.py: the files that may hold C++, read once
before the workers; timed, page cache warm), then extracts every C/C++ file twice, without
and with that table, and compares: the symbols' names, kinds and lines must be the same but
for the namespace symbols the macros open (the parse is not changed); it counts the symbols
whose qualified name gained a namespace. pybind11 comes with `pip download pybind11` (its
wheel's pybind11/include/pybind11 folder, `--dir pybind11=PATH`).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import c_recall
import common
from repomap.extractors import extract
from repomap.extractors.cpp_namespaces import Opener

from repomap.index import namespaces
from repomap.index.discover import code_files, walk
from repomap.languages import language_of_header

DEFAULT = "llvm,nlohmann,spdlog,fmt,absl,gtest,eigen"


def measure(root: Path) -> list[str]:
    walked = walk(root)
    files = list(code_files(walked))
    headers = namespaces.reads_headers([found.rel_path for found in walked.files])
    read = [(found.rel_path, Path(found.abs_path), root, 2_000_000) for found, language in files
            if namespaces.may_be_cpp(found.rel_path, language, headers)]  # fmt: skip
    namespaces.updated({}, read, set())  # page cache warm
    started = time.perf_counter()
    per_file = namespaces.updated({}, read, {found.rel_path for found, _ in files})
    seconds = time.perf_counter() - started
    table = namespaces.table_of(per_file)
    symbols = requalified = moved = added = 0
    for found, language in files:
        source = Path(found.abs_path).read_bytes()
        language = language_of_header(found.rel_path, language, source)
        if language not in ("c", "cpp"):
            continue
        plain = extract(language, source, found.rel_path).symbols
        named = extract(language, source, found.rel_path, table).symbols
        shape = Counter((s.name, s.kind, s.start_line, s.end_line) for s in plain)
        after = Counter((s.name, s.kind, s.start_line, s.end_line) for s in named)
        moved += sum((shape - after).values())
        added += sum((after - shape).values())
        symbols += len(plain)
        qualified = {(s.start_byte, s.end_byte, s.name, s.kind): s.qualified_name for s in plain}
        requalified += sum(
            1 for s in named
            if qualified.get((s.start_byte, s.end_byte, s.name, s.kind), s.qualified_name)
            != s.qualified_name
        )  # fmt: skip
    openers = sorted(n for n, d in table.macros.items() if isinstance(d, Opener))
    return [
        root.name, f"{len(read):,}", f"{seconds * 1000:.0f} ms", ", ".join(openers) or "none",
        f"{symbols:,}", f"{requalified:,}", f"{added:,}", f"{moved:,}",
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=DEFAULT)
    parser.add_argument("--dir", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    roots = [c_recall.CORPORA[name][0] for name in args.corpus.split(",") if name]
    roots += [Path(spec.partition("=")[2]) for spec in args.dir]
    rows = [measure(root) for root in roots if root.is_dir()]
    header = ["corpus", "files read first", "their read", "opening macros", "symbols",
              "in a macro's namespace", "namespace symbols added", "symbols moved or lost"]  # fmt: skip
    print(common.markdown_table(header, rows))


if __name__ == "__main__":
    main()
