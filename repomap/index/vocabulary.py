"""The words the extractors' records use, for the layers above the index that validate filters
against them (`--kind`, `--type`): only repomap/index/ imports the extractors themselves."""

from repomap.extractors.model import ELEMENT_TYPES, KINDS

__all__ = ["ELEMENT_TYPES", "KINDS"]
