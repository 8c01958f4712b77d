"""A scope's vectors in one file beside the index, read in one go instead of row by row.

Decoding a scope from SQLite costs a CLI search most of its time: ~48k rows of blobs returned
one by one (~150 ms on Django, more beside the model's thread). So a scope's decoded columns are
also kept in a derived file next to the database:

    <db path>.vectors-<scope, %-quoted>

    one line of JSON (the header), padded with spaces to a multiple of 64 bytes
    META_DTYPE x count      chunk id, row in the entries, path id, language and kind codes
    padding to 64 bytes
    int8 x entries x dimensions     the distinct vectors, the database's int8 rows as stored
    padding to 64 bytes
    float32 x entries               each row's inverse length (vectors.inverse_norms)

Format 2 (int8 rows, 0.4 KB a vector) replaced format 1 (float32 unit rows, 1.5 KB): a file
of format 1 is stale and written again. A search scores the mapped int8 rows as they lie,
widened to float32 a block at a time (vectors.stored_scores), exactly as it scores the rows
decoded from the database.

The header names the scope, its version (vector_scopes.version: random, new at every write of
the scope's vectors), the model and the row count, and holds the CRC-32 of everything after it.
A reader uses the file only when all of these match the snapshot it reads in the same read
transaction: a stale file (another version), a torn or damaged one (size, CRC), one of another
model or of another database (the version is random) is ignored, the scope is decoded from
SQLite as before and the file written again. The database stays the source of truth; deleting
the file only costs the next search its speed.

Written by the embedding stage when a scope's vectors changed, and by a reader that had to
decode the scope (best effort: a read-only folder just has no file); replaced atomically, so a
reader holding the old one keeps reading it whole.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

import numpy as np

FORMAT = 2
SUFFIX = ".vectors-"
ALIGN = 64
# 20 bytes a chunk, packed (a filter reads whole columns; they are copied out at load)
META_DTYPE = np.dtype(
    [("id", "<i8"), ("row", "<i4"), ("path", "<i4"), ("language", "<u2"), ("kind", "<u2")]
)
VECTOR_DTYPE = np.dtype("i1")  # the database's bytes: 384 a vector
INVERSE_DTYPE = np.dtype("<f4")
_MAX_PATH_ID = (1 << 31) - 1
_MAX_CODE = (1 << 16) - 1
_MAX_HEADER = 1 << 24  # a header past 16 MB is not one we wrote


class Columns(NamedTuple):
    """A scope decoded: chunk ids ascending, each with its row of `entries` and codes for the
    filters (what store/vectors.py's _Matrix holds)."""

    ids: np.ndarray  # int64 (n,)
    rows: np.ndarray  # int32 (n,)
    paths: np.ndarray  # int64 (n,) vector_paths.id
    languages: np.ndarray  # int32 (n,)
    kinds: np.ndarray  # int32 (n,)
    entries: np.ndarray  # int8 (m, dimensions), as stored (read-only when mapped)
    inverse: np.ndarray  # float32 (m,): 1 / length of each row (vectors.inverse_norms)
    path_codes: dict[str, int]
    language_codes: dict[str, int]
    kind_codes: dict[str, int]


class Key(NamedTuple):
    """What a file must have been written from to be used: the snapshot's scope."""

    scope: str
    version: int
    model: str
    dimensions: int
    rows: int  # the scope's vectors in the database


def path_for(db_path: Path, scope: str) -> Path:
    return db_path.with_name(f"{db_path.name}{SUFFIX}{quote(scope, safe='')}")


def files(db_path: Path) -> list[Path]:
    """Every vector file of an index (any scope; temporary ones of an interrupted write too)."""
    if not db_path.parent.is_dir():
        return []
    return sorted(db_path.parent.glob(f"{_glob_escape(db_path.name)}{SUFFIX}*"))


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def remove(db_path: Path, scope: str) -> bool:
    """Delete a scope's file; whether there was one."""
    try:
        path_for(db_path, scope).unlink()
    except FileNotFoundError:
        return False
    return True


def _padded(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def _body(columns: Columns) -> Iterator[memoryview]:
    """The parts after the header, as buffers of the arrays (no copy of the rows as bytes).
    Raises OSError when a column does not fit the file's types (then no file: decode)."""
    if len(columns.ids) and (
        int(columns.paths.min()) < 0
        or int(columns.paths.max()) > _MAX_PATH_ID
        or max(len(columns.language_codes), len(columns.kind_codes)) > _MAX_CODE
    ):
        raise OSError("the scope's path ids or codes do not fit the vector file")
    meta = np.empty(len(columns.ids), dtype=META_DTYPE)
    meta["id"], meta["row"], meta["path"] = columns.ids, columns.rows, columns.paths
    meta["language"], meta["kind"] = columns.languages, columns.kinds
    yield meta.data.cast("B")
    yield memoryview(b"\0" * (_padded(meta.nbytes) - meta.nbytes))
    entries = np.ascontiguousarray(columns.entries, dtype=VECTOR_DTYPE)
    yield entries.data.cast("B")
    yield memoryview(b"\0" * (_padded(entries.nbytes) - entries.nbytes))
    yield np.ascontiguousarray(columns.inverse, dtype=INVERSE_DTYPE).data.cast("B")


def write(db_path: Path, key: Key, columns: Columns) -> Path:
    """Write the file of `key`'s scope from its decoded `columns` (a temporary file renamed
    over the old one). Raises OSError when it cannot be written."""
    parts = list(_body(columns))
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    head = {
        "format": FORMAT,
        "scope": key.scope,
        "version": key.version,
        "model": key.model,
        "dimensions": key.dimensions,
        "count": len(columns.ids),
        "entries": len(columns.entries),
        "body_bytes": sum(part.nbytes for part in parts),
        "crc32": crc,
        "path_codes": columns.path_codes,
        "language_codes": columns.language_codes,
        "kind_codes": columns.kind_codes,
    }
    line = json.dumps(head, sort_keys=True, separators=(",", ":")).encode()
    line += b" " * (_padded(len(line) + 1) - len(line) - 1) + b"\n"
    target = path_for(db_path, key.scope)
    # Per process and thread: two server threads that decoded the scope may write at once.
    temporary = target.with_name(f"{target.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        with temporary.open("wb") as handle:
            handle.write(line)
            for part in parts:
                handle.write(part)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target


def load(db_path: Path, key: Key) -> Columns | None:
    """The columns of `key`'s scope from its file, or None when there is none or it is not
    exactly the one `key` describes (stale, of another model, damaged): then decode from SQLite."""
    try:
        with path_for(db_path, key.scope).open("rb") as handle:
            line = handle.readline(_MAX_HEADER)
            size = os.fstat(handle.fileno()).st_size
            head = _header(line, key)
            if head is None or size != len(line) + head["body_bytes"]:
                return None
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    body = memoryview(mapped)[len(line) :]
    if zlib.crc32(body) != head["crc32"]:
        return None
    return _columns(body, head, key)


def _header(line: bytes, key: Key) -> dict[str, Any] | None:
    if not line.endswith(b"\n") or len(line) % ALIGN:
        return None
    try:
        head = json.loads(line)
    except ValueError:
        return None
    if not isinstance(head, dict):
        return None
    expected = {
        "format": FORMAT,
        "scope": key.scope,
        "version": key.version,
        "model": key.model,
        "dimensions": key.dimensions,
        "count": key.rows,
    }
    if any(head.get(name) != value for name, value in expected.items()):
        return None
    numbers = ("entries", "body_bytes", "crc32")
    codes = ("path_codes", "language_codes", "kind_codes")
    if not all(isinstance(head.get(name), int) for name in numbers) or not all(
        isinstance(head.get(name), dict) for name in codes
    ):
        return None
    return head


def _columns(body: memoryview, head: dict[str, Any], key: Key) -> Columns | None:
    count, entries = key.rows, head["entries"]
    start = _padded(count * META_DTYPE.itemsize)
    vector_bytes = entries * key.dimensions * VECTOR_DTYPE.itemsize
    inverse_at = start + _padded(vector_bytes)
    if inverse_at + entries * INVERSE_DTYPE.itemsize != len(body):
        return None
    meta = np.frombuffer(body, META_DTYPE, count)
    vectors = np.frombuffer(body, VECTOR_DTYPE, entries * key.dimensions, start)
    inverse = np.frombuffer(body, INVERSE_DTYPE, entries, inverse_at)
    ids, rows = meta["id"], meta["row"]
    languages, kinds = meta["language"], meta["kind"]
    if count and (
        np.any(ids[1:] <= ids[:-1])
        or rows.min() < 0
        or rows.max() >= entries
        or languages.max() >= len(head["language_codes"])
        or kinds.max() >= len(head["kind_codes"])
    ):
        return None
    return Columns(
        ids.copy(),
        rows.astype(np.int32),
        meta["path"].astype(np.int64),
        languages.astype(np.int32),
        kinds.astype(np.int32),
        vectors.reshape(entries, key.dimensions),
        inverse,
        head["path_codes"],
        head["language_codes"],
        head["kind_codes"],
    )
