"""Files as text, one rule everywhere: decoding (BOMs, UTF-16, PEP 263 encoding lines, binary
detection), the content hash stored in `files.hash` and `doc_files.hash`, and line counts as
editors show them. Indexing, the gateway and the docs index all read files through this.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
_UTF8_BOM = b"\xef\xbb\xbf"


def decode(raw: bytes, head: bytes | None = None) -> tuple[bytes | None, str | None]:
    """UTF-8 bytes (BOMs handled, a declared Python encoding re-encoded), or None and why the
    file is not text. `head`: the file's first bytes when `raw` is a later part of it (a line
    range), whose BOM or encoding line then decides."""
    start = raw if head is None else head
    if start[:2] in _UTF16_BOMS:
        codec = "utf-16" if raw[:2] in _UTF16_BOMS else _UTF16_BOMS[start[:2]]
        try:
            return raw.decode(codec).encode("utf-8"), None
        except UnicodeDecodeError:
            return None, "binary (bad UTF-16)"
    raw = raw.removeprefix(_UTF8_BOM)
    start = raw if head is None else head.removeprefix(_UTF8_BOM)
    # Anywhere, not only in a first block: a NUL past it used to reach the extractors (ast
    # rejects it, SQLite's C strings cut at it). One memchr over at most --max-file-size bytes.
    if b"\0" in raw:
        return None, "binary (NUL bytes)"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if _has_coding_line(start):
            return _recode(raw, start)
        return None, f"{NOT_UTF8} (invalid byte at offset {error.start})"
    return raw, None


NOT_UTF8 = "not UTF-8"  # how decode() names a file with an invalid byte


def replacing_invalid(raw: bytes) -> bytes:
    """UTF-8 bytes of a file decode() refused as not UTF-8, each invalid byte U+FFFD, as text()
    shows it. For C and C++: compilers take any byte in a comment or a string, and old sources
    carry Latin-1 there (an author's name); the code around it is ASCII and reads the same."""
    return raw.removeprefix(_UTF8_BOM).decode("utf-8", "replace").encode("utf-8")


def text(raw: bytes, head: bytes | None = None) -> str:
    """`raw` as text by decode()'s rule, for showing it: what no rule reads (a binary file, an
    invalid byte) becomes U+FFFD instead of an error."""
    source, _ = decode(raw, head)
    return raw.decode("utf-8", "replace") if source is None else source.decode("utf-8")


def _has_coding_line(raw: bytes) -> bool:
    return b"coding" in raw[:200]


def _recode(raw: bytes, head: bytes) -> tuple[bytes | None, str | None]:
    """A file that declares its encoding as Python does (PEP 263): re-encode it as UTF-8."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
        return raw.decode(encoding).encode("utf-8"), None
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None, "not decodable (bad encoding declaration)"


def content_hash(raw: bytes) -> str:
    """blake2b-128 of a file's bytes: what `files.hash` and `doc_files.hash` hold."""
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def file_hash(path: Path) -> str:
    """content_hash of the file at `path`, read now."""
    return content_hash(path.read_bytes())


def line_count(content: bytes) -> int:
    """Lines as editors count them: a final line without a newline still counts."""
    return content.count(b"\n") + (0 if not content or content.endswith(b"\n") else 1)


def split_lines(text: str) -> list[str]:
    """Lines split on \\n only (as editors and line numbers count them), without \\r\\n endings."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
