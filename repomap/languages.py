"""Which files repomap reads, and as what: the one table of languages and doc formats.

Discovery, the watcher, the docs index and every `--lang`/`--language` filter read it here.
"""

from __future__ import annotations

# Extension -> language of the extractor that reads it; every other file is not code.
LANGUAGE_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".rs": "rust",
    **dict.fromkeys(
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h", ".ipp", ".inl"), "cpp"
    ),
}
LANGUAGES = ("python", "rust", "cpp")
LANGUAGE_NAMES = {"python": "Python", "rust": "Rust", "cpp": "C++"}  # as people write them
# What a filter accepts (lower case) -> the language it means.
LANGUAGE_ALIASES = {
    "python": "python", "py": "python",
    "rust": "rust", "rs": "rust",
    "cpp": "cpp", "c++": "cpp", "cxx": "cpp", "cc": "cpp",
}  # fmt: skip

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
    """The language a code file is read as, or None when it is not code."""
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
