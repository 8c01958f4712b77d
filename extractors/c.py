"""C extractor: tree-sitter-c and queries/c/*.scm, read by the C++ extractor's reader.

C's declarations are C++'s without classes, namespaces or templates, so cpp.py's reader takes
the captures of both; what differs is here and in queries/c/tags.scm:
- Names are not qualified: C has one scope for struct/union/enum tags and one for everything
  else, so a struct nested in another is `inner`, not `outer::inner`.
- Enum constants are symbols (`constant`) whose parent is their enum.
- Kernel-doc `/** ... */` comments document the declaration after them, as Doxygen ones do.
- Functions named in initialisers (`.open = foo_open`) are references, as calls are.
"""

from __future__ import annotations

from .cpp import extract_as
from .model import Extraction


def extract(source: bytes, rel_path: str) -> Extraction:
    """Symbols, references, comments, docs and strings of one C file; never raises."""
    return extract_as("c", source)
