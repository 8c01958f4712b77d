"""Which files repomap reads, and as what: the one table of languages and doc formats.

Discovery, the watcher, the docs index and every `--lang`/`--language` filter read it here.
"""

from __future__ import annotations

import re

# C++ sources: a `.h` beside one of them is C++ (see header_languages below).
CPP_SOURCE_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".ipp", ".inl")
# Extension -> language of the extractor that reads it; every other file is not code. A `.h`
# is C++ here; header_languages() makes it C inside a C project.
LANGUAGE_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".rs": "rust",
    ".c": "c",
    **dict.fromkeys((*CPP_SOURCE_SUFFIXES, ".h"), "cpp"),
}
LANGUAGES = ("python", "rust", "c", "cpp")
LANGUAGE_NAMES = {
    "python": "Python",
    "rust": "Rust",
    "c": "C",
    "cpp": "C++",
}  # as people write them
# What a filter accepts (lower case) -> the language it means.
LANGUAGE_ALIASES = {
    "python": "python", "py": "python",
    "rust": "rust", "rs": "rust",
    "c": "c",
    "cpp": "cpp", "c++": "cpp", "cxx": "cpp", "cc": "cpp",
}  # fmt: skip

# What only C++ writes, at the start of a line (comments aside, C never does): a namespace, a
# template, a class with a body or a base, an access label, `using namespace`, `extern "C++"`,
# `std::`. `extern "C"` is C's own header guard and does not count.
_CPP_SYNTAX = re.compile(
    rb"^[ \t]*(?:namespace\b|template[ \t]*<|class[ \t]+\w+[^;()\n]*[{:]"
    rb"|(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b)"
    rb'|\bstd::|\bextern[ \t]+"C\+\+"',
    re.MULTILINE,
)

# Suffix (lower case) -> doc_files.format; every other file is not a doc.
DOC_FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text"}
# Data files read as records (repomap/index/records.py).
DATA_FORMATS = {
    ".csv": "csv", ".tsv": "tsv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
}  # fmt: skip


def _suffix(rel_path: str) -> str | None:
    dot = rel_path.rfind(".")
    return rel_path[dot:].lower() if dot > rel_path.rfind("/") else None


def language_of(rel_path: str) -> str | None:
    """The language a code file is read as, or None when it is not code (a `.h`: "cpp", which
    header_languages and language_of_header may turn into "c")."""
    suffix = _suffix(rel_path)
    return LANGUAGE_BY_SUFFIX.get(suffix) if suffix else None


def doc_format(rel_path: str) -> str | None:
    """`markdown`, `text`, or None when the file is not indexed as a doc."""
    suffix = _suffix(rel_path)
    return DOC_FORMATS.get(suffix) if suffix else None


def data_format(rel_path: str) -> str | None:
    """csv, tsv, json, jsonl, toml or yaml; None when the file is not read as data."""
    suffix = _suffix(rel_path)
    return DATA_FORMATS.get(suffix) if suffix else None


def resolve_language(name: str) -> str:
    """The language a `--lang`/`--language` value names (`py`, `C++`, ` rust `)."""
    from repomap.errors import BadArgument

    language = LANGUAGE_ALIASES.get(name.strip().lower())
    if language is None:
        raise BadArgument(f"unknown language {name!r}; use one of {', '.join(LANGUAGES)}")
    return language


def header_languages(rel_paths: list[str]) -> dict[str, str]:
    """The language each `.h` among `rel_paths` (one tree's code files) is first read as.

    The rule: a `.h` is C when the tree has `.c` files and no C++ source (`.cc`, `.cpp`, `.hpp`,
    ...) sits in the header's folder; otherwise C++. A C candidate is still read as C++ when
    its text shows C++ syntax (language_of_header). A tree of headers alone (LLVM's include/)
    is C++: C++ headers outnumber C ones where no `.c` file says otherwise.
    """
    has_c = False
    cpp_folders: set[str] = set()
    headers = []
    for rel_path in rel_paths:
        suffix = _suffix(rel_path)
        if suffix == ".h":
            headers.append(rel_path)
        elif suffix == ".c":
            has_c = True
        elif suffix in CPP_SOURCE_SUFFIXES:
            cpp_folders.add(rel_path.rpartition("/")[0])
    return {
        rel_path: "c" if has_c and rel_path.rpartition("/")[0] not in cpp_folders else "cpp"
        for rel_path in headers
    }


def language_of_header(rel_path: str, language: str, source: bytes) -> str:
    """A file's language once its text is known: a C candidate `.h` with C++ syntax is C++."""
    if language == "c" and _suffix(rel_path) == ".h" and _CPP_SYNTAX.search(source):
        return "cpp"
    return language
