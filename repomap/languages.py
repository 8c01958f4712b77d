"""Which files repomap reads, and as what: the one table of languages and doc formats.

Discovery, the watcher, the docs index and every `--lang`/`--language` filter read it here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

# C++ sources: a `.h` beside one of them is C++ (see header_languages below).
CPP_SOURCE_SUFFIXES = (
    ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl",
    ".tcc", ".tpp", ".txx",  # template definitions a header includes (libstdc++'s .tcc)
    ".cppm", ".ixx",  # C++20 module interfaces (Clang's, MSVC's)
)  # fmt: skip
# GCC's convention, kept by OpenFOAM and ROOT: an upper-case `.C` is C++ (a suffix is otherwise
# compared in lower case, and `.c` is C).
UPPER_CASE_CPP = ".C"
# Extension -> language of the extractor that reads it; every other file is not code. A `.h`
# is C++ here; header_languages() makes it C in a C project or a tree of C headers alone.
LANGUAGE_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".rs": "rust",
    ".c": "c",
    # yacc/bison and lex/flex grammars: the C they copy into the generated parser, read as C
    # (extractors/grammar.py)
    ".y": "c",
    ".l": "c",
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
# `std::`. `extern "C"` is C's own header guard and does not count. Three scans, not one
# alternation: the one regex tried its `\b` branches at every byte of a C header (0.62 s for the
# 3,978 headers of bench/extract_cpu.py's samples, 0.12 s now); here each has a literal to skip
# to (`\n` for the line starts, the first line matched on its own).
_CPP_LINE = (
    rb"[ \t]*(?:namespace\b|template[ \t]*<|class[ \t]+\w+[^;()\n]*[{:]"
    rb"|(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b)"
)
_CPP_FIRST_LINE = re.compile(_CPP_LINE)
_CPP_LINE_START = re.compile(rb"\n" + _CPP_LINE)
_STD = re.compile(rb"\bstd::")
_EXTERN_CPP = re.compile(rb'\bextern[ \t]+"C\+\+"')

_CPP_WORDS = re.compile(rb"^(?![ \t]*#)[^\n/]*\b(?:nullptr|noexcept)\b", re.MULTILINE)
# `enum class Mode`, `Point& operator+=(const Point&)`: C has neither (a C header of a mixed
# tree with them was read as C, and lost its member functions and operators).
_ENUM_CLASS = re.compile(rb"^(?![ \t]*[#*])[^\n/\"]*\benum[ \t]+(?:class|struct)[ \t]+\w", re.M)
_OPERATOR = re.compile(
    rb"^(?![ \t]*[#*])[^\n/\"]*\boperator[ \t]*(?:[^\w\s(]{1,3}|\(\))[ \t]*\(", re.M
)

# Suffix (lower case) -> doc_files.format; every other file is not a doc.
# `.rst` is prose of the text format, split by its own section titles (index/markdown.py).
DOC_FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".rst": "text"}
# Data files read as records (repomap/index/records.py).
DATA_FORMATS = {
    ".csv": "csv", ".tsv": "tsv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
}  # fmt: skip


# What the index reads at all (code, docs, data), by suffix: the walk stats only these files.
READ_SUFFIXES = frozenset(LANGUAGE_BY_SUFFIX) | frozenset(DOC_FORMATS) | frozenset(DATA_FORMATS)


def is_read(rel_path: str) -> bool:
    """Whether the index reads the file as code, a doc or data (by its name alone)."""
    return _suffix(rel_path) in READ_SUFFIXES


def _suffix(rel_path: str) -> str | None:
    dot = rel_path.rfind(".")
    if dot <= rel_path.rfind("/"):
        return None
    suffix = rel_path[dot:].lower()
    if suffix == ".in":  # a build's template of a C or C++ file is read as that file
        inner = _suffix(rel_path[:dot])
        return inner if inner in _TEMPLATED else suffix
    return suffix


# `logging.h.in`, `config.hpp.in`: CMake's and autoconf's templates, often a library's whole
# public header (glog's `LOG`, `CHECK` and `VLOG` live in `logging.h.in`), with `@VAR@` or
# `#cmakedefine` where the build puts values.
_TEMPLATED = frozenset(
    suffix for suffix, language in LANGUAGE_BY_SUFFIX.items() if language in ("c", "cpp")
) - {".y", ".l"}


def language_of(rel_path: str) -> str | None:
    """The language a code file is read as, or None when it is not code (a `.h`: "cpp", which
    header_languages and language_of_header may turn into "c")."""
    suffix = _suffix(rel_path)
    if suffix == ".c" and rel_path.endswith(UPPER_CASE_CPP):
        return "cpp"
    return LANGUAGE_BY_SUFFIX.get(suffix) if suffix else None


# A `.txt` file that is no prose: CMake's build script (muparser's four CMakeLists.txt pieces
# filled a search's first places, above its Install.txt).
NOT_DOCS = re.compile(r"(?:^|/)CMakeLists\.txt$")


def doc_format(rel_path: str) -> str | None:
    """`markdown`, `text`, or None when the file is not indexed as a doc."""
    suffix = _suffix(rel_path)
    if not suffix or (suffix == ".txt" and NOT_DOCS.search(rel_path)):
        return None
    return DOC_FORMATS.get(suffix)


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

    The rule: a `.h` is a C candidate when its folder holds no more C++ sources (`.cc`,
    `.cpp`, `.hpp`, ...) than `.c` files and the tree has `.c` files or no C++ source at all
    (a tree of headers alone: LLVM's include/, /usr/include/curl); otherwise C++ (a C++
    project's include/, a folder of `.cpp` files). A C folder's few C++ files do not make its
    headers C++: Lua's src/ holds 34 `.c` files and `lua.hpp` (a wrapper for C++ callers),
    Vim's src/ 162 `.c` files and three `.cpp`/`.cc` GUI files. A C candidate is read as C++
    when its text shows C++ syntax (language_of_header): LLVM's headers are C++ by their
    `namespace llvm`, its llvm-c/ ones C.
    """
    has_c = False
    c_sources: Counter[str] = Counter()  # `.c` files per folder
    cpp_sources: Counter[str] = Counter()  # C++ sources per folder
    headers = []
    for rel_path in rel_paths:
        suffix = _suffix(rel_path)
        folder = rel_path.rpartition("/")[0]
        if suffix == ".h":
            headers.append(rel_path)
        elif language_of(rel_path) == "c":
            has_c = True
            c_sources[folder] += 1
        elif language_of(rel_path) == "cpp":  # CPP_SOURCE_SUFFIXES and `.C`
            cpp_sources[folder] += 1
    cpp_folders = {folder for folder, count in cpp_sources.items() if count > c_sources[folder]}
    c_tree = has_c or not cpp_sources
    return {
        rel_path: "c" if c_tree and rel_path.rpartition("/")[0] not in cpp_folders else "cpp"
        for rel_path in headers
    }


def language_of_header(rel_path: str, language: str, source: bytes) -> str:
    """A file's language once its text is known: a C candidate `.h` with C++ syntax is C++."""
    if language != "c" or _suffix(rel_path) != ".h":
        return language
    # `nullptr`, `noexcept` in code (pybind11's trampoline_self_life_support.h shows nothing
    # else), not in a directive or a comment (pythoncapi_compat.h's `# define _Py_NULL nullptr`
    # is a C header's); the plain search first is ~25x cheaper than the regex.
    has_words = b"nullptr" in source or b"noexcept" in source
    if (has_words and _CPP_WORDS.search(source)) or _cpp_syntax(source):
        return "cpp"
    return language


def _cpp_syntax(source: bytes) -> bool:
    """Whether `source` has a line only C++ writes (see _CPP_LINE), `std::`, `extern "C++"`,
    `enum class` or an operator's declaration, outside a block comment."""
    return bool(
        (b"std::" in source and _in_code(_STD, source))
        or (b'"C++"' in source and _in_code(_EXTERN_CPP, source))
        or _CPP_FIRST_LINE.match(source)
        or _in_code(_CPP_LINE_START, source)
        or (b"enum" in source and _in_code(_ENUM_CLASS, source))
        or (b"operator" in source and _in_code(_OPERATOR, source))
    )


def _in_code(pattern: re.Pattern[bytes], source: bytes) -> bool:
    """Whether `pattern` matches outside a `/* ... */` comment. A comment's lines need not
    start with `*`: expat.h's prose wraps to a line that starts "namespace. The expanded name",
    which read the header as C++ and lost its 70 API prototypes (tree-sitter-cpp parses
    `XMLPARSEAPI(enum XML_Status) XML_Parse(...);` as an error). Matches are few, so each is
    checked by the nearest comment start and end before it."""
    for match in pattern.finditer(source):
        at = match.start()
        if source.rfind(b"/*", 0, at) <= source.rfind(b"*/", 0, at):
            return True
    return False


# What may stand right above a definition and belongs to it, per language: comments and doc
# comments, decorators and attributes, a C++ template head. Not a C directive but `#pragma`.
_LEADING = {
    "python": ("#", "@"),
    "rust": ("//", "/*", "*", "#[", "#!["),
    "cpp": ("//", "/*", "*", "template", "[[", "__attribute__", "alignas", "#pragma"),
    "c": ("//", "/*", "*", "[[", "__attribute__", "_Alignas", "#pragma"),
}


# A C or C++ macro alone on the line above a function, in an attribute's place (zstd's
# `FORCE_INLINE_TEMPLATE`, `MEM_STATIC`): the comment above it is the function's.
DECLARATION_MACRO_LINE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def leading_start(lines: Sequence[str], index: int, language: str) -> int:
    """0-based first line of the comments and decorators/attributes right above lines[index]
    (a decorator or attribute over several lines whole; a blank line ends them; in C and C++ a
    macro alone on its line, as an attribute stands)."""
    prefixes = _LEADING.get(language, ())
    macros = language in ("c", "cpp")
    confirmed, depth, at = index, 0, index - 1
    while at >= 0:
        text = lines[at].strip()
        closers = text.count(")") + text.count("]") + text.count("}")
        if depth == 0 and (not text or not (closers or text.startswith(prefixes))):
            break  # a blank line, or code (most lines above a definition: the index asks each)
        depth += closers - text.count("(") - text.count("[") - text.count("{")
        if depth > 0:  # inside a decorator or attribute spread over several lines
            at -= 1
            continue
        depth = 0
        if not text.startswith(prefixes) and not (
            macros and DECLARATION_MACRO_LINE.fullmatch(text)
        ):
            break
        confirmed = at
        at -= 1
    return confirmed
