"""What search needs of Rust's module system, read by the extractors (only repomap/index/
imports them): the module path a file's items are qualified by, and a file's re-exports."""

from repomap.extractors.rust import module_path
from repomap.extractors.rust_uses import Reexport, reexports

__all__ = ["Reexport", "module_path", "reexports"]
