"""Files as text, one rule everywhere: decoding (BOMs, UTF-16, PEP 263 encoding lines, binary
detection), the content hash stored in `files.hash` and `doc_files.hash`, and line counts as
editors show them. Indexing, the gateway and the docs index all read files through this.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def decode(raw: bytes) -> tuple[bytes | None, str | None]:
    """UTF-8 bytes (BOMs handled, a declared Python encoding re-encoded), or None and why the
    file is not text."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16").encode("utf-8"), None
        except UnicodeDecodeError:
            return None, "binary (bad UTF-16)"
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    # Anywhere, not only in a first block: a NUL past it used to reach the extractors (ast
    # rejects it, SQLite's C strings cut at it). One memchr over at most --max-file-size bytes.
    if b"\0" in raw:
        return None, "binary (NUL bytes)"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if _has_coding_line(raw):
            return _recode(raw)
        return None, f"not UTF-8 (invalid byte at offset {error.start})"
    return raw, None


def _has_coding_line(raw: bytes) -> bool:
    return b"coding" in raw[:200]


def _recode(raw: bytes) -> tuple[bytes | None, str | None]:
    """A file that declares its encoding as Python does (PEP 263): re-encode it as UTF-8."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
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
