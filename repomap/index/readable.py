"""Whether `repomap index` reads a file's bytes, and as what: the one rule the workers apply
(index/pipeline.py read_and_extract) and the one outline and index_status tell a person by,
for a file the index lacks (gateway/files.py skipped_because)."""

from __future__ import annotations

from typing import NamedTuple

from repomap import textfile
from repomap.index import markers

# Languages whose files are indexed despite a byte that is not UTF-8 (textfile.replacing_invalid).
BYTES_IN_COMMENTS = frozenset({"c", "cpp"})


class Source(NamedTuple):
    """The UTF-8 bytes the index reads, and a note when invalid bytes were replaced; or None
    and why the file is skipped."""

    text: bytes | None
    replaced: str | None
    skipped: str | None


def indexed_source(raw: bytes, language: str | None) -> Source:
    """What the index reads of a file of `language` (None: a docs or data file): decoded
    (textfile.decode), a C or C++ file's invalid bytes replaced, unless it is not text or holds
    the noindex marker."""
    source, problem = textfile.decode(raw)
    replaced = None
    if (
        source is None
        and language in BYTES_IN_COMMENTS
        and (problem or "").startswith(textfile.NOT_UTF8)
    ):
        source, replaced = textfile.replacing_invalid(raw), f"{problem}: read with U+FFFD for it"
    if source is None:
        return Source(None, None, problem or "not text")
    if markers.noindex(source):
        return Source(None, None, markers.NOINDEX_REASON)
    return Source(source, replaced, None)
