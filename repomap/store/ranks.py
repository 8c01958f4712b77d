"""The ranking tables: `file_ranks`, `symbol_ranks`, `rank_arrays` and `name_stats`, written in
one transaction by each ranking (index/ranking.py computes it), and the packed arrays read back.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, NamedTuple

from repomap.store.connection import Store
from repomap.store.meta import set_meta

if TYPE_CHECKING:
    import numpy as np

# Whether the reference graph may have changed since the stored ranking was made: the writer
# sets GRAPH_CHANGED (in the batch that changes it: a file added or removed, or a file's
# definitions or uses rewritten differently), a ranking's store sets GRAPH_RANKED. A run that
# only rewrote files with the same graph (a comment, a body using the same names) finds
# GRAPH_RANKED and keeps the whole ranking, without reading it.
GRAPH_META = "rank_graph"
GRAPH_CHANGED = "changed"
GRAPH_RANKED = "ranked"


class StoredArrays(NamedTuple):
    """The rank_arrays rows of a ranking, and the meta rows written with them."""

    rows: list[tuple[str, str, bytes]]  # (name, dtype, packed data): those that changed
    kept: bool  # the stored rows not in `rows` whose name is in `names` stay
    names: list[str]  # every array of the ranking
    meta: dict[str, str]


def replace(
    db: Store,
    *,
    file_ranks: Iterable[tuple[int, float]] | None,
    symbol_ranks: Iterable[tuple[int, float]] | ColumnParts,
    symbols_gone: list[int] | None,
    name_stats: Iterable[tuple[str, int, int]] | ColumnParts | None,
    arrays: Callable[[], StoredArrays],
) -> None:
    """Replace the stored ranking, in one transaction. What a run left as it was stays:
    `file_ranks` None keeps every file's rank; `symbols_gone` not None means `symbol_ranks` are
    the rows that changed and `symbols_gone` the symbols whose rows go (else they are every
    row); `name_stats` None keeps the stored counts. `arrays` is called once the other rows are
    written: the ranking's arrays may be packed on other threads meanwhile (on the Linux kernel
    ~1.2 s of packing the ranking waited for, while writing 3.9M symbol_ranks rows took 2.5 s)."""
    with db.atomic():
        if file_ranks is not None:
            db.conn.execute("DELETE FROM file_ranks")
            _insert_many(db, "INSERT INTO file_ranks (file_id, rank) VALUES ", 2, file_ranks)
        if symbols_gone is None:
            db.conn.execute("DELETE FROM symbol_ranks")
        else:
            db.conn.executemany(
                "DELETE FROM symbol_ranks WHERE symbol_id = ?", ((i,) for i in symbols_gone)
            )
        _insert_many(
            db,
            "INSERT OR REPLACE INTO symbol_ranks (symbol_id, rank) VALUES ",
            2,
            symbol_ranks,
        )
        if name_stats is not None:
            db.conn.execute("DELETE FROM name_stats")
            _insert_many(
                db, "INSERT INTO name_stats (name, ref_files, def_files) VALUES ", 3, name_stats
            )
        stored = arrays()
        if stored.kept:
            kept = ",".join("?" * len(stored.names))
            db.conn.execute(f"DELETE FROM rank_arrays WHERE name NOT IN ({kept})", stored.names)
        else:
            db.conn.execute("DELETE FROM rank_arrays")
        db.conn.executemany(
            "INSERT OR REPLACE INTO rank_arrays (name, dtype, data) VALUES (?, ?, ?)", stored.rows
        )
        set_meta(db, stored.meta)


JOINED_AT_ONCE = 1 << 16  # names joined into one string at a time by JoinedNames.of


class JoinedNames(NamedTuple):
    """A list of names as the UTF-8 lines rank_arrays stores, joined once for all who read it."""

    total: int  # how many names
    data: bytes | bytearray  # "\n".join(names).encode()

    @classmethod
    def of(cls, names: list[str]) -> JoinedNames:
        """The names' lines, encoded a slice at a time: the kernel's 2.8M names joined as one
        string and then encoded held ~60 MB more at once, at the ranking's peak of memory."""
        data = bytearray()
        for start in range(0, len(names), JOINED_AT_ONCE):
            if start:
                data += b"\n"
            data += "\n".join(names[start : start + JOINED_AT_ONCE]).encode()
        return cls(len(names), data)

    def strings(self) -> list[str]:
        """The names again, as load_arrays reads them."""
        return self.data.decode().split("\n") if self.total else []


ROWS_PER_INSERT = 300  # rows of one INSERT statement (3 columns: 900 variables, under 999)
FLAT_ROWS = 100_000  # rows given as tuples flattened at a time


class ColumnParts(NamedTuple):
    """Rows as parts of equal-length columns (lists of Python values), written without making a
    tuple of each row: on the Linux kernel's 3.9M symbol_ranks rows ~0.3 s of CPU less."""

    parts: Iterable[tuple[list, ...]]


def _flat(rows: Iterable[tuple] | ColumnParts, columns: int) -> Iterator[list]:
    """The rows' values, row after row, a list at a time."""
    if isinstance(rows, ColumnParts):
        for part in rows.parts:
            flat: list = [None] * (len(part[0]) * columns)
            for at, column in enumerate(part):
                flat[at::columns] = column
            yield flat
        return
    rows = iter(rows)
    while chunk := list(islice(rows, FLAT_ROWS)):
        yield list(chain.from_iterable(chunk))


def _insert_many(db: Store, head: str, columns: int, rows: Iterable[tuple] | ColumnParts) -> None:
    """`head` ("INSERT ... VALUES ") of every row, in order, ROWS_PER_INSERT rows to a
    statement: one statement run per row took half of the 2.8 s that the Linux kernel's 3.9M
    symbol_ranks rows cost to write. Each statement's values are a slice of one flat list."""
    one = f"({', '.join('?' * columns)})"
    width = columns * ROWS_PER_INSERT
    rest: list = []

    def statements() -> Iterator[list]:
        nonlocal rest
        for flat in _flat(rows, columns):
            if rest:
                flat[:0] = rest
            whole = len(flat) - len(flat) % width
            yield from (flat[at : at + width] for at in range(0, whole, width))
            rest = flat[whole:]

    db.conn.executemany(head + ", ".join([one] * ROWS_PER_INSERT), statements())
    db.conn.executemany(
        head + one, (rest[at : at + columns] for at in range(0, len(rest), columns))
    )


def pack(value: np.ndarray | list[str] | JoinedNames) -> tuple[str, bytes]:
    """(dtype, zlib-compressed bytes) for rank_arrays; a list of names is stored as UTF-8 lines,
    integers byte by byte (dtype `bytes <i4`).

    Ids and counts fit in 32 bits and compress well: stored raw as int64 the arrays were 5-6 MB
    on each test corpus (a tenth of the index), packed they are under 1 MB. Level 1 packs them
    in ~30 ms and a personalized map unpacks them in ~15 ms.
    """
    import numpy as np

    if isinstance(value, JoinedNames):
        return "names", zlib.compress(value.data, 1)
    if isinstance(value, list):
        return "names", zlib.compress("\n".join(value).encode(), 1)
    info = np.iinfo(np.int32)
    if value.dtype == np.int64 and (
        not len(value) or (info.min <= value.min() and value.max() <= info.max)
    ):
        if value.dtype.str == "<i8":
            # The low four bytes of each little-endian int64 are its int32: taken straight
            # into the shuffle below, without the int32 copy (on the Linux kernel a dozen
            # arrays of 12-16 MB, each a copy and its page faults).
            return SHUFFLED + "<i4", _shuffled(value, 4)
        value = value.astype("<i4")
    if value.dtype.kind in "iu" and value.dtype.itemsize > 1:
        return SHUFFLED + value.dtype.str, _shuffled(value, value.dtype.itemsize)
    # zlib reads the array's buffer: no copy of it as bytes (~10% of packing's CPU)
    return value.dtype.str, zlib.compress(np.ascontiguousarray(value).data, 1)


SHUFFLED = "bytes "  # before a dtype: the array's bytes stored byte by byte (pack)


def _shuffled(value: np.ndarray, width: int) -> bytes:
    """zlib of each byte of the integers apart (every lowest byte, then every next one...),
    the first `width` bytes of each: the high bytes of ids and counts repeat, and zlib finds
    the runs. 15-20% smaller on each test corpus's ids (LLVM's headers: 0.30 MB)."""
    import numpy as np

    planes = np.ascontiguousarray(value).view(np.uint8).reshape(-1, value.dtype.itemsize)
    return zlib.compress(np.ascontiguousarray(planes[:, :width].T).data, 1)


def load_arrays(db: Store, names: tuple[str, ...]) -> dict[str, Any]:
    """The rank_arrays rows named: numpy arrays, and lists of names (dtype "names")."""
    import numpy as np

    sql = f"SELECT name, dtype, data FROM rank_arrays WHERE name IN ({','.join('?' * len(names))})"
    arrays: dict[str, Any] = {}
    for name, dtype, packed in db.conn.execute(sql, names):
        data = zlib.decompress(packed)
        if dtype == "names":
            arrays[name] = data.decode().split("\n") if data else []
        elif dtype.startswith(SHUFFLED):
            item = np.dtype(dtype.removeprefix(SHUFFLED))
            planes = np.frombuffer(data, dtype=np.uint8).reshape(item.itemsize, -1)
            arrays[name] = np.ascontiguousarray(planes.T).view(item).reshape(-1)
        else:
            arrays[name] = np.frombuffer(data, dtype=np.dtype(dtype))
    return arrays
