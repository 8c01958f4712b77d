"""Per-language extractors: source bytes in, symbols, references and text elements out.

Installed as `repomap.extractors`; nothing here imports `repomap`, does I/O or touches a database.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from types import ModuleType

from .cpp_namespaces import EMPTY, Table
from .grammar import c_view, is_grammar
from .model import Extraction


@cache
def _extractor(language: str) -> ModuleType:
    # Imported on first use, so a Python-only run never loads the tree-sitter grammars; cached,
    # because import_module's lookup cost 0.2 ms per file.
    return import_module(f".{language}", __package__)


def extract(
    language: str, source: bytes, rel_path: str, cpp_namespaces: Table = EMPTY
) -> Extraction:
    """Symbols, references and text elements of one file; never raises on bad source.
    `cpp_namespaces`: the project's namespace macros (cpp_namespaces.py), for C++ files."""
    if is_grammar(rel_path):  # a yacc or lex grammar: its C parts alone
        source = c_view(source)
    if language == "cpp" and cpp_namespaces.macros:
        return _extractor(language).extract(source, rel_path, cpp_namespaces)
    return _extractor(language).extract(source, rel_path)
