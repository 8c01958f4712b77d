"""Chunk vectors: the `VectorStore` interface, the local store in the index database, and the
embedding cache.

A store holds, per scope (`main` for the working tree; a branch), one vector per chunk with the
chunk's content hash, path, language and kind. `query` restricts the candidates by the filter
first and then ranks them by cosine similarity, exactly; equal scores are ordered by chunk id,
so the same store and query give the same list. Two implementations keep this contract
(tests/test_vector_store.py runs one suite on both): `LocalVectorStore` here, and
`MilvusVectorStore` (store/milvus.py) for an organisation that outgrows one machine.

The local store keeps each vector once per (model, text) in `embedding_cache` (int8, scaled per
vector: `int8_rows`, schema v17) and a scope maps its chunk ids to cache entries
(migrations/0014_vectors.sql), so the indexer never embeds an unchanged text again: it asks `EmbeddingCache.cached` first. A reader
keeps a scope's decoded matrix in process, keyed by the scope's version (a random number each
write sets), so an MCP server's repeated queries do not decode every blob again.

Past `config.ann_threshold()` chunks (a million by default) a scope also gets an HNSW sidecar
(store/ann.py), built by `refresh_ann` at the end of the embedding stage: a query then takes its
candidates from the sidecar and scores them again exactly from the database, and a filter still
applies first in effect (a filter that lets few chunks through is answered exactly over those;
otherwise the sidecar is asked for more and more candidates until enough pass the filter). A
missing or stale sidecar leaves the exact search, never a wrong answer.
"""

from __future__ import annotations

import logging
import math
import random
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import NamedTuple, Protocol

import numpy as np

from repomap import config
from repomap.errors import CorruptIndex, ExitCode, RepomapError
from repomap.store import ann, chunk_texts, vector_file
from repomap.store.connection import Store, chunks
from repomap.store.int8 import VECTOR_DTYPE
from repomap.store.int8 import int8_rows as int8_rows  # re-exported: the one quantization

logger = logging.getLogger(__name__)

DIMENSIONS = 384
MISMATCH_CODE = "EMBEDDING_MODEL_MISMATCH"
MISMATCH_FIX = "repomap index --force"
KEPT_MATRICES = 4  # decoded scopes kept per process (48k chunks: 19 MB mapped, 74 MB widened)
_VECTOR_DTYPE = VECTOR_DTYPE  # stored vectors: int8 rows (store/int8.py int8_rows)
SCORE_BLOCK = 2048  # int8 rows widened to float32 at a time (3 MB: within the caches)
# The sidecar's search (bench/ann.py measured these on the real vectors):
OVERSAMPLE = 2  # candidates re-scored exactly per result asked for
EXACT_FEW = 20_000  # a filter letting at most this many chunks through is answered exactly:
# scoring 48k float16 rows took ~100 ms (converted and normalized per query), where asking the
# graph for more candidates took 2-20 ms (bench/ann.py)


class EmbeddingModelMismatch(RepomapError):
    """Vectors made by one model asked about with another: their scores would mean nothing."""

    code = MISMATCH_CODE
    fix = MISMATCH_FIX
    # The code the CLI gives a semantic search the index cannot answer (no vectors yet, too).
    exit_code = ExitCode.USAGE

    def __init__(self, scope: str, stored: str, asked: str) -> None:
        super().__init__(
            f"{MISMATCH_CODE}: the vectors of scope {scope!r} were made by {stored}, not "
            f"{asked}; run `{MISMATCH_FIX}` to embed them again"
        )
        self.scope = scope
        self.stored = stored
        self.asked = asked


class VectorRecord(NamedTuple):
    """One chunk's vector and what a query filters on."""

    chunk_id: int  # chunks.id
    hash: str  # chunks.hash: sha256 hex of the embedded text
    path: str
    language: str
    kind: str
    vector: np.ndarray  # float32 (dimensions,); stored L2-normalized


class VectorFilter(NamedTuple):
    """What a query may return, applied before ranking; None is no restriction on that field,
    an empty set matches nothing."""

    paths: Collection[str] | None = None  # exact file paths
    languages: Collection[str] | None = None
    kinds: Collection[str] | None = None


class StoreHealth(NamedTuple):
    backend: str  # "sqlite" or "milvus"
    ok: bool
    message: str  # what is wrong, or where the vectors are
    counts: dict[str, int]  # vectors per scope


class VectorStore(Protocol):
    """Where chunk vectors live; every method takes the scope it works on."""

    model_id: str
    dimensions: int

    def upsert(self, scope: str, records: Sequence[VectorRecord]) -> None:
        """Add or replace these chunks' vectors (the scope is made on first use)."""

    def query(
        self, scope: str, vector: np.ndarray, k: int, where: VectorFilter | None = None
    ) -> list[tuple[int, float]]:
        """The `k` chunks most similar to `vector` among those `where` allows:
        (chunk_id, cosine), best first, equal scores by chunk id; [] for an unknown scope."""
        ...

    def prepare(self, scope: str) -> None:
        """Make the scope ready to be queried (read into memory, loaded by the engine), so a
        caller can do it while the question is being embedded; a query does it anyway."""

    def delete(self, scope: str, chunk_ids: Iterable[int]) -> None:
        """Remove these chunks' vectors; unknown ids are ignored."""

    def delete_scope(self, scope: str) -> None:
        """Remove a scope and all its vectors, whatever model made them."""

    def scopes(self) -> list[str]:
        """Names of the scopes, sorted."""
        ...

    def hashes(self, scope: str) -> dict[int, str]:
        """{chunk_id: content hash} of a scope, for the indexer's diff; {} for an unknown scope."""
        ...

    def count(self, scope: str) -> int:
        """How many vectors a scope holds (len(hashes(scope)) without reading them); 0 for an
        unknown scope."""
        ...

    def health(self) -> StoreHealth: ...


# --- vectors as bytes ----------------------------------------------------------------------------


def inverse_norms(rows: np.ndarray) -> np.ndarray:
    """1 / length of each stored int8 row, as float32: the sum of squares is an exact integer
    (at most 384 x 127^2), so every process, block size and order of summing gives the very
    same number (the vector file keeps it, the database's rows give it back)."""
    squares = np.einsum("ij,ij->i", rows, rows, dtype=np.int32)  # < 2**31: exact
    result: np.ndarray = (1.0 / np.sqrt(squares.astype(np.float64))).astype(np.float32)
    return result


def unit_rows(rows: np.ndarray, inverse: np.ndarray | None = None) -> np.ndarray:
    """Stored int8 rows as float32 unit vectors (what the cache hands the indexer and Milvus)."""
    if inverse is None:
        inverse = inverse_norms(rows)
    units: np.ndarray = np.asarray(rows, dtype=np.float32) * inverse[:, None]
    return units


def stored_scores(rows: np.ndarray, inverse: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Cosines of stored rows (int8, or float32 holding the same integers) with a unit float32
    `target`: each row's dot product with the target in float32, then times its inverse norm.
    int8 rows are widened a block at a time (no 74 MB array made for one question); every row's
    sum is computed the same way whatever block or array it sits in, so the vector file, the
    database, the sidecar and a server's widened copy give the same scores to the bit."""
    scores = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), SCORE_BLOCK):
        block = np.asarray(rows[start : start + SCORE_BLOCK], dtype=np.float32)
        scores[start : start + SCORE_BLOCK] = dot_rows(block, target)
    scores *= inverse
    return scores


def unit_vector(vector: np.ndarray, dimensions: int) -> np.ndarray:
    """A query vector as float32 of length 1 (scores are then cosines)."""
    row = np.asarray(vector, dtype=np.float32)
    if row.shape != (dimensions,):
        raise ValueError(f"expected a vector of {dimensions} dimensions, got shape {row.shape}")
    norm = float(np.linalg.norm(row))
    if not np.isfinite(norm) or norm == 0:
        raise ValueError("the query vector is zero or not finite")
    result: np.ndarray = row / norm
    return result


def dot_rows(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """matrix @ vector with numpy's own loop, not BLAS: one thread at memory speed (40k x 384:
    ~4 ms), where multithreaded OpenBLAS took ~15 ms on two busy cores, and each row's sum is
    computed the same way wherever the row sits."""
    result: np.ndarray = np.einsum("ij,j->i", matrix, vector)
    return result


def top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The `k` best (id, score): score descending, then id ascending, ties at the cut included
    in that order (so which of several equal scores make the cut is decided by id too)."""
    if len(scores) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth)
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")


# --- the embedding cache -------------------------------------------------------------------------


class EmbeddingCache:
    """Vectors by (model, content hash), in the index database, whatever store serves queries:
    the indexer asks it before embedding and fills it after."""

    def __init__(self, db: Store, dimensions: int = DIMENSIONS) -> None:
        self.db = db
        self.dimensions = dimensions

    def cached(self, model_id: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """{hash: float32 unit vector} of the hashes the cache holds for this model."""
        model = self.model_row(model_id)
        if model is None:
            return {}
        found: dict[str, np.ndarray] = {}
        for part in chunks(sorted({bytes.fromhex(h) for h in hashes})):
            sql = f"SELECT hash, vector FROM embedding_cache WHERE model = ? AND hash IN ({','.join('?' * len(part))})"
            for digest, blob in self.db.conn.execute(sql, [model, *part]):
                found[digest.hex()] = unit_rows(self.rows_of([blob]))[0]
        return found

    def rows_of(self, blobs: Sequence[bytes]) -> np.ndarray:
        """Stored vectors (int8 blobs) as an (n, dimensions) int8 matrix."""
        joined = b"".join(blobs)
        if len(joined) != len(blobs) * self.dimensions * _VECTOR_DTYPE.itemsize:
            raise CorruptIndex(
                f"the vectors in {self.db.path} are not {self.dimensions} int8 values each; "
                f"run `{MISMATCH_FIX}` to embed them again"
            )
        return np.frombuffer(joined, _VECTOR_DTYPE).reshape(len(blobs), self.dimensions)

    def put_cache(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Keep these vectors (as int8 rows); a hash already kept keeps its vector."""
        if not vectors:
            return
        with self.db.atomic():
            self.entries(self.ensure_model(model_id), vectors)

    def unused(self, keep: Iterable[str] = ()) -> list[int]:
        """Cache entries no scope's vectors use and no chunk's text (nor `keep`: hashes a remote
        store still serves) names: what `prune_cache` drops."""
        wanted = {bytes.fromhex(h) for h in keep}
        wanted.update(bytes.fromhex(h) for h in chunk_texts.hashes(self.db).values())
        used = {entry for (entry,) in self.db.conn.execute("SELECT DISTINCT entry FROM vectors")}
        return [
            entry
            for entry, digest in self.db.conn.execute("SELECT id, hash FROM embedding_cache")
            if entry not in used and bytes(digest) not in wanted
        ]

    def prune_cache(self, keep: Iterable[str] = ()) -> int:
        """Drop the `unused` cache entries and the paths no scope uses; how many entries."""
        with self.db.atomic():
            drop = self.unused(keep)
            self.db.conn.executemany(
                "DELETE FROM embedding_cache WHERE id = ?", [(entry,) for entry in drop]
            )
            self.db.conn.execute(
                "DELETE FROM vector_paths WHERE id NOT IN (SELECT DISTINCT path FROM vectors)"
            )
        return len(drop)

    def entries(self, model: int, vectors: Mapping[str, np.ndarray]) -> dict[str, int]:
        """{hash: embedding_cache.id}, inserting the missing ones (inside the caller's
        transaction)."""
        digests = {bytes.fromhex(h): h for h in vectors}
        found = self._ids(model, list(digests))
        missing = [digest for digest in digests if digest not in found]
        if missing:
            rows = int8_rows(np.stack([vectors[digests[d]] for d in missing]), self.dimensions)
            self.db.conn.executemany(
                "INSERT INTO embedding_cache (model, hash, vector) VALUES (?, ?, ?)",
                [(model, d, row.tobytes()) for d, row in zip(missing, rows, strict=True)],
            )
            found.update(self._ids(model, missing))
        return {digests[d]: entry for d, entry in found.items()}

    def _ids(self, model: int, digests: list[bytes]) -> dict[bytes, int]:
        found: dict[bytes, int] = {}
        for part in chunks(digests):
            sql = f"SELECT hash, id FROM embedding_cache WHERE model = ? AND hash IN ({','.join('?' * len(part))})"
            found.update(self.db.conn.execute(sql, [model, *part]).fetchall())
        return found

    def model_row(self, model_id: str) -> int | None:
        """embedding_models.id of a model, None if it has no vectors here."""
        found = self.db.scalar("SELECT id FROM embedding_models WHERE name = ?", (model_id,))
        return None if found is None else int(found)

    def ensure_model(self, model_id: str) -> int:
        """embedding_models.id of a model, added when missing."""
        found = self.model_row(model_id)
        if found is not None:
            return found
        self.db.conn.execute("INSERT INTO embedding_models (name) VALUES (?)", (model_id,))
        return int(self.db.scalar("SELECT id FROM embedding_models WHERE name = ?", (model_id,)))


# --- the local store -----------------------------------------------------------------------------


class _Matrix:
    """One scope decoded (vector_file.Columns: chunk ids ascending, each with its row of
    `entries`, one int8 row per distinct vector, and codes for the filters).

    The first question is scored from the int8 rows as they lie (mapped from the vector file),
    widened a block at a time: a one-shot CLI search converts nothing else. A matrix asked again
    (a server, a benchmark) keeps a float32 copy of the rows, widened once, so later questions
    skip the conversion (~75 MB for Django's 47k vectors); the scores are the same to the bit."""

    def __init__(self, columns: vector_file.Columns) -> None:
        self.columns = columns
        self.ids = columns.ids
        self.queried = False
        self.widened: np.ndarray | None = None

    def allowed(self, where: VectorFilter | None) -> np.ndarray | None:
        """Indexes of the chunks the filter lets through (None: all of them)."""
        if where is None or (
            where.paths is None and where.languages is None and where.kinds is None
        ):
            return None
        columns = self.columns
        mask = np.ones(len(self.ids), dtype=bool)
        for wanted, column, codes in (
            (where.paths, columns.paths, columns.path_codes),
            (where.languages, columns.languages, columns.language_codes),
            (where.kinds, columns.kinds, columns.kind_codes),
        ):
            if wanted is not None:
                mask &= np.isin(column, [codes[value] for value in wanted if value in codes])
        return np.flatnonzero(mask)

    def scores(self, vector: np.ndarray, selected: np.ndarray | None) -> np.ndarray:
        columns = self.columns
        entries = self._entries()
        if selected is None:
            return stored_scores(entries, columns.inverse, vector)[columns.rows]
        distinct, inverse = np.unique(columns.rows[selected], return_inverse=True)
        found = stored_scores(entries[distinct], columns.inverse[distinct], vector)
        return found[inverse.ravel()]

    def _entries(self) -> np.ndarray:
        if self.widened is not None:
            return self.widened
        if self.queried:  # asked again: a long-running reader; widen once
            self.widened = np.asarray(self.columns.entries, dtype=np.float32)
            return self.widened
        self.queried = True
        return self.columns.entries


_MATRICES: OrderedDict[tuple[str, str, int], _Matrix] = OrderedDict()
_MATRICES_LOCK = threading.Lock()
_SIDECARS: OrderedDict[tuple[str, str, int], ann.Sidecar] = OrderedDict()

SCOPE_SQL = """SELECT s.id, m.name, s.version FROM vector_scopes s
JOIN embedding_models m ON m.id = s.model WHERE s.name = ?"""
MATRIX_SQL = """SELECT v.chunk_id, c.vector, v.path, v.language, v.kind
FROM vectors v JOIN embedding_cache c ON c.id = v.entry
WHERE v.scope = ? ORDER BY v.chunk_id"""
COUNT_SQL = "SELECT count(*) FROM vectors WHERE scope = ?"
COLUMNS_SQL = """SELECT chunk_id, entry, path, language, kind FROM vectors
WHERE scope = ? ORDER BY chunk_id"""
BATCH_SQL = """SELECT v.chunk_id, c.vector FROM vectors v JOIN embedding_cache c ON c.id = v.entry
WHERE v.scope = ? ORDER BY v.chunk_id"""
HASHES_SQL = """SELECT v.chunk_id, c.hash FROM vectors v JOIN embedding_cache c ON c.id = v.entry
WHERE v.scope = ?"""


class LocalVectorStore:
    """The default store: the index database's `vectors` and `embedding_cache` tables, searched
    exactly with numpy. Use it from the thread that opened `db`."""

    backend = "sqlite"

    def __init__(
        self,
        db: Store,
        model_id: str,
        dimensions: int = DIMENSIONS,
        ann_threshold: int | None = None,
    ) -> None:
        self.db = db
        self.model_id = model_id
        self.dimensions = dimensions
        self.cache = EmbeddingCache(db, dimensions)
        # chunks in a scope from which its sidecar HNSW index is built and used
        self.ann_threshold = config.ann_threshold() if ann_threshold is None else ann_threshold
        self.exact_few = EXACT_FEW

    def upsert(self, scope: str, records: Sequence[VectorRecord]) -> None:
        if not records:
            return
        with self.db.atomic():
            scope_id = self._scope_for_write(scope)
            model = self.cache.ensure_model(self.model_id)
            entries = self.cache.entries(model, {r.hash: r.vector for r in records})
            paths = self._path_ids({r.path for r in records})
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO vectors (scope, chunk_id, entry, path, language, kind) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (scope_id, r.chunk_id, entries[r.hash], paths[r.path], r.language, r.kind)
                    for r in records
                ],
            )
            self._touch(scope_id)

    def query(
        self, scope: str, vector: np.ndarray, k: int, where: VectorFilter | None = None
    ) -> list[tuple[int, float]]:
        _check_k(k)
        target = unit_vector(vector, self.dimensions)
        found = self._checked_scope(scope)
        if found is None:
            return []
        sidecar = self._sidecar(scope, found[2])
        if sidecar is not None:
            return self._approximate(sidecar, target, k, where)
        matrix = self._matrix(scope, found)
        if not len(matrix.ids):
            return []
        selected = matrix.allowed(where)
        ids = matrix.ids if selected is None else matrix.ids[selected]
        return top_k(ids, matrix.scores(target, selected), k)

    def prepare(self, scope: str) -> None:
        found = self._checked_scope(scope)
        if found is not None and self._sidecar(scope, found[2]) is None:
            self._matrix(scope, found)

    def delete(self, scope: str, chunk_ids: Iterable[int]) -> None:
        found = self._scope(scope)
        if found is None:
            return
        scope_id = found[0]
        with self.db.atomic():
            self.db.conn.executemany(
                "DELETE FROM vectors WHERE scope = ? AND chunk_id = ?",
                [(scope_id, int(chunk_id)) for chunk_id in chunk_ids],
            )
            self._touch(scope_id)

    def delete_scope(self, scope: str) -> None:
        found = self._scope(scope)
        if found is None:
            return
        with self.db.atomic():
            self.db.conn.execute("DELETE FROM vectors WHERE scope = ?", (found[0],))
            self.db.conn.execute("DELETE FROM vector_scopes WHERE id = ?", (found[0],))
        ann.remove(self.db.path, scope)
        vector_file.remove(self.db.path, scope)

    def scopes(self) -> list[str]:
        return [
            name for (name,) in self.db.conn.execute("SELECT name FROM vector_scopes ORDER BY name")
        ]

    def hashes(self, scope: str) -> dict[int, str]:
        found = self._checked_scope(scope)
        if found is None:
            return {}
        return {
            chunk_id: digest.hex()
            for chunk_id, digest in self.db.conn.execute(HASHES_SQL, (found[0],))
        }

    def count(self, scope: str) -> int:
        found = self._checked_scope(scope)
        if found is None:
            return 0
        return int(self.db.scalar("SELECT count(*) FROM vectors WHERE scope = ?", (found[0],)))

    def hashes_between(self, scope: str, ranges: Sequence[tuple[int, int]]) -> dict[int, str]:
        """hashes() of the chunk ids in `ranges` ([start, end)), each range one index seek."""
        found = self._checked_scope(scope)
        if found is None:
            return {}
        return {
            chunk_id: digest.hex()
            for start, end in ranges
            for chunk_id, digest in self.db.conn.execute(
                HASHES_SQL + " AND v.chunk_id >= ? AND v.chunk_id < ?", (found[0], start, end)
            )
        }

    def health(self) -> StoreHealth:
        counts = dict(
            self.db.conn.execute(
                "SELECT s.name, count(v.chunk_id) FROM vector_scopes s LEFT JOIN vectors v ON v.scope = s.id GROUP BY s.id ORDER BY s.name"
            ).fetchall()
        )
        orphans = self.db.scalar(
            "SELECT count(*) FROM vectors WHERE entry NOT IN (SELECT id FROM embedding_cache)"
        )
        if orphans:
            return StoreHealth(
                self.backend,
                False,
                f"{orphans} vectors lost their cache entry; run `{MISMATCH_FIX}`",
                counts,
            )
        return StoreHealth(self.backend, True, f"vectors in {self.db.path}", counts)

    def refresh_ann(self, scope: str) -> str:
        """Bring the scope's sidecar HNSW index in line with its vectors (the embedding stage
        calls this last): built when the scope has reached `ann_threshold` chunks and has no
        sidecar of its current version, updated in place from an older one when little changed,
        deleted below the threshold; older versions' files are deleted. Returns what was done:
        "built", "updated", "kept" or "exact" (no sidecar: the scope is searched exactly)."""
        found = self._scope(scope)
        if found is None:
            ann.remove(self.db.path, scope)
            return "exact"
        scope_id, _, version = found
        count = int(self.db.scalar(COUNT_SQL, (scope_id,)) or 0)
        if count < self.ann_threshold or count == 0:
            ann.remove(self.db.path, scope)
            return "exact"
        if ann.load(self.db.path, scope, version, self.dimensions) is not None:
            ann.remove(self.db.path, scope, keep=version)
            return "kept"
        with self.db.atomic():  # one snapshot: the rows, their vectors and the version agree
            found = self._scope(scope)
            if found is None:
                return "exact"
            scope_id, _, version = found
            columns = self._columns(scope_id)
            previous, gone, added = self._previous(scope, columns)
            how = ann.build(
                self.db.path,
                scope,
                version,
                self.dimensions,
                columns,
                self._vector_batches(scope_id),
                previous,
                gone,
                added,
            )
        ann.remove(self.db.path, scope, keep=version)
        return how

    def _columns(self, scope_id: int) -> ann.Columns:
        rows = self.db.conn.execute(COLUMNS_SQL, (scope_id,)).fetchall()
        return ann.Columns(
            np.array([row[0] for row in rows], dtype=np.int64),
            np.array([row[1] for row in rows], dtype=np.int64),
            np.array([row[2] for row in rows], dtype=np.int64),
            [row[3] for row in rows],
            [row[4] for row in rows],
        )

    def _previous(
        self, scope: str, columns: ann.Columns
    ) -> tuple[int | None, np.ndarray | None, np.ndarray | None]:
        """(an older sidecar's version, its chunk ids to remove, chunk ids to add) when one
        on disk passes its checks and at most ann.UPDATE_AT_MOST of the rows changed since;
        (None, None, None) when the sidecar must be built whole."""
        for version in sorted(ann.versions(self.db.path, scope), reverse=True):
            old = ann.load(self.db.path, scope, version, self.dimensions)
            if old is None:
                continue
            gone, added = ann.changes(old.meta, columns)
            if len(gone) + len(added) <= ann.UPDATE_AT_MOST * max(len(columns.ids), 1):
                return version, gone, added
        return None, None, None

    def _vector_batches(
        self, scope_id: int, size: int = 65_536
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(chunk ids, int8 rows as stored) of the scope in chunk id order, in batches."""
        cursor = self.db.conn.execute(BATCH_SQL, (scope_id,))
        while rows := cursor.fetchmany(size):
            yield self._halves(rows)

    def _halves(self, rows: list[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        return ids, self.cache.rows_of([row[1] for row in rows])

    def _sidecar(self, scope: str, version: int) -> ann.Sidecar | None:
        """The scope version's sidecar when the scope is past the threshold and one passes its
        checks (kept in process like the matrices), else None: search exactly."""
        key = (str(self.db.path), scope, version)
        with _MATRICES_LOCK:
            if key in _SIDECARS:
                _SIDECARS.move_to_end(key)
                kept = _SIDECARS[key]
                return kept if kept.size >= self.ann_threshold else None
        head = ann.header(self.db.path, scope, version)
        if head is None or int(head.get("count", 0)) < self.ann_threshold:
            return None
        sidecar = ann.load(self.db.path, scope, version, self.dimensions)
        if sidecar is None:
            return None
        with _MATRICES_LOCK:
            _SIDECARS[key] = sidecar
            while len(_SIDECARS) > KEPT_MATRICES:
                _SIDECARS.popitem(last=False)
        return sidecar

    def _approximate(
        self,
        sidecar: ann.Sidecar,
        target: np.ndarray,
        k: int,
        where: VectorFilter | None,
    ) -> list[tuple[int, float]]:
        """The sidecar's candidates, filtered and scored again exactly from its int8 rows
        (the database's bytes at this version: no SQL, no decode of the scope). A filter that lets at
        most `exact_few` chunks through is answered exactly over those; otherwise the sidecar is
        asked for more candidates, four times as many each round, until k * OVERSAMPLE of
        them pass the filter or it has nothing more (then the allowed chunks exactly)."""
        mask = None
        if where is not None:
            path_ids = None if where.paths is None else self._known_path_ids(where.paths)
            mask = sidecar.allowed(path_ids, where.languages, where.kinds)
        allowed = sidecar.size if mask is None else int(np.count_nonzero(mask))
        if not allowed:
            return []
        if mask is not None and allowed <= self.exact_few:
            return _scored(sidecar, np.flatnonzero(mask), target, k)
        want = min(k * OVERSAMPLE, allowed)
        count = min(math.ceil(want * sidecar.size / allowed), sidecar.size)
        while True:
            positions = sidecar.positions(sidecar.search(target, count))
            positions = positions[positions >= 0]
            if mask is not None:
                positions = positions[mask[positions]]
            if len(positions) >= want:
                return _scored(sidecar, positions, target, k)
            if count >= sidecar.size:  # the graph gave all it reaches: what it missed, exactly
                every = np.arange(sidecar.size) if mask is None else np.flatnonzero(mask)
                return _scored(sidecar, every, target, k)
            count = min(count * 4, sidecar.size)

    def _known_path_ids(self, paths: Collection[str]) -> list[int]:
        found: list[int] = []
        for part in chunks(sorted(paths)):
            sql = f"SELECT id FROM vector_paths WHERE path IN ({','.join('?' * len(part))})"
            found.extend(row[0] for row in self.db.conn.execute(sql, part))
        return found

    @staticmethod
    def forget_matrices() -> None:
        """Drop the decoded matrices this process keeps (benchmarks time the first query)."""
        with _MATRICES_LOCK:
            _MATRICES.clear()
            _SIDECARS.clear()

    # --- helpers ---

    def _scope(self, scope: str) -> tuple[int, str, int] | None:
        """(id, model name, version) of a scope, or None."""
        row = self.db.conn.execute(SCOPE_SQL, (scope,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), int(row[2]))

    def _checked_scope(self, scope: str) -> tuple[int, str, int] | None:
        found = self._scope(scope)
        if found is not None and found[1] != self.model_id:
            raise EmbeddingModelMismatch(scope, found[1], self.model_id)
        return found

    def _scope_for_write(self, scope: str) -> int:
        found = self._checked_scope(scope)
        if found is not None:
            return found[0]
        model = self.cache.ensure_model(self.model_id)
        cursor = self.db.conn.execute(
            "INSERT INTO vector_scopes (name, model, version) VALUES (?, ?, ?)",
            (scope, model, _new_version()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _touch(self, scope_id: int) -> None:
        self.db.conn.execute(
            "UPDATE vector_scopes SET version = ? WHERE id = ?", (_new_version(), scope_id)
        )

    def _path_ids(self, paths: set[str]) -> dict[str, int]:
        self.db.conn.executemany(
            "INSERT OR IGNORE INTO vector_paths (path) VALUES (?)", [(p,) for p in sorted(paths)]
        )
        found: dict[str, int] = {}
        for part in chunks(sorted(paths)):
            sql = f"SELECT path, id FROM vector_paths WHERE path IN ({','.join('?' * len(part))})"
            found.update(self.db.conn.execute(sql, part).fetchall())
        return found

    def _matrix(self, scope: str, found: tuple[int, str, int]) -> _Matrix:
        """The scope decoded, from this process's kept matrices when its version is unchanged."""
        key = (str(self.db.path), scope, found[2])
        with _MATRICES_LOCK:
            if key in _MATRICES:
                _MATRICES.move_to_end(key)
                return _MATRICES[key]
        matrix = _Matrix(self._columns_of(scope, found))
        with _MATRICES_LOCK:
            _MATRICES[key] = matrix
            while len(_MATRICES) > KEPT_MATRICES:
                _MATRICES.popitem(last=False)
        return matrix

    def _columns_of(self, scope: str, found: tuple[int, str, int]) -> vector_file.Columns:
        """The scope's columns from its vector file when that file was written from this very
        version, else decoded from SQLite and the file written again (best effort)."""
        scope_id, model, version = found
        count = int(self.db.scalar(COUNT_SQL, (scope_id,)) or 0)
        key = vector_file.Key(scope, version, model, self.dimensions, count)
        columns = vector_file.load(self.db.path, key) if count else None
        if columns is not None:
            return columns
        # One snapshot (a reader's connection is in one already): the version, the count and
        # the rows agree, so the file written from them is the one for that version.
        with nullcontext() if self.db.conn.in_transaction else self.db.atomic():
            same = self._scope(scope) == found and self.db.scalar(COUNT_SQL, (scope_id,)) == count
            columns = self._decode(scope_id)
        # Not when rows were left out (vectors whose cache entry is gone: `health` says so):
        # a file must hold the scope's rows, every one.
        if same and 0 < count < self.ann_threshold and len(columns.ids) == count:
            self._write_file(key, columns)
        return columns

    def _write_file(self, key: vector_file.Key, columns: vector_file.Columns) -> None:
        try:
            vector_file.write(self.db.path, key, columns)
        except OSError as failure:  # a read-only folder, a full disk: the next search decodes
            logger.debug("vector file of %s not written: %s", self.db.path, failure)

    def refresh_file(self, scope: str) -> str:
        """Bring the scope's vector file (store/vector_file.py) in line with its vectors (the
        embedding stage calls this last): "kept" when it is current, "written", or "none" when
        the scope has no vectors or is searched through its HNSW sidecar (then no file)."""
        with self.db.atomic():  # one snapshot: the version, the count and the rows agree
            found = self._scope(scope)
            count = 0 if found is None else int(self.db.scalar(COUNT_SQL, (found[0],)) or 0)
            if found is None or not 0 < count < self.ann_threshold:
                vector_file.remove(self.db.path, scope)
                return "none"
            key = vector_file.Key(scope, found[2], found[1], self.dimensions, count)
            if vector_file.load(self.db.path, key) is not None:
                return "kept"
            columns = self._decode(found[0])
        if len(columns.ids) != count:  # vectors whose cache entry is gone (`health` says so)
            vector_file.remove(self.db.path, scope)
            return "none"
        vector_file.write(self.db.path, key, columns)
        return "written"

    def file_state(self, scope: str) -> str:
        """What `repomap doctor` reports of the scope's vector file: "current", "missing",
        "stale" (of another version, or damaged: ignored), "unused" (a file the scope needs
        no more: no vectors, or an HNSW sidecar) or "none" (neither needed nor there)."""
        with self.db.atomic():
            found = self._scope(scope)
            count = 0 if found is None else int(self.db.scalar(COUNT_SQL, (found[0],)) or 0)
            there = vector_file.path_for(self.db.path, scope).exists()
            if found is None or not 0 < count < self.ann_threshold:
                return "unused" if there else "none"
            key = vector_file.Key(scope, found[2], found[1], self.dimensions, count)
            if vector_file.load(self.db.path, key) is not None:
                return "current"
        return "stale" if there else "missing"

    def _decode(self, scope_id: int) -> vector_file.Columns:
        """The scope's columns from SQLite, its vectors int8 as stored."""
        rows = self.db.conn.execute(MATRIX_SQL, (scope_id,)).fetchall()
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        # One row of `entries` per distinct vector (equal texts share a cache entry; equal
        # vectors of different texts are folded too), so equal vectors score bit-equal.
        distinct: dict[bytes, int] = {}
        positions = np.array(
            [distinct.setdefault(row[1], len(distinct)) for row in rows], dtype=np.int32
        )
        entries = self.cache.rows_of(list(distinct))
        paths = np.array([row[2] for row in rows], dtype=np.int64)
        path_codes = dict(
            self.db.conn.execute(
                "SELECT path, id FROM vector_paths WHERE id IN (SELECT DISTINCT path FROM vectors WHERE scope = ?)",
                (scope_id,),
            ).fetchall()
        )
        languages, language_codes = _codes([row[3] for row in rows])
        kinds, kind_codes = _codes([row[4] for row in rows])
        return vector_file.Columns(
            ids,
            positions,
            paths,
            languages,
            kinds,
            entries,
            inverse_norms(entries),
            path_codes,
            language_codes,
            kind_codes,
        )


def _scored(
    sidecar: ann.Sidecar, positions: np.ndarray, target: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """The `k` best chunks at these positions of the sidecar, scored from its int8 rows (the
    database's bytes) exactly as the exact search scores them."""
    if not len(positions):
        return []
    ids, rows = sidecar.rows(positions)
    return top_k(ids, stored_scores(rows, inverse_norms(rows), target), k)


def _codes(values: list[str]) -> tuple[np.ndarray, dict[str, int]]:
    """Small integer codes for a column of a few distinct strings."""
    codes: dict[str, int] = {}
    column = np.array([codes.setdefault(value, len(codes)) for value in values], dtype=np.int32)
    return column, codes


def _new_version() -> int:
    """A scope's data version: random, so a database rebuilt in a new file never repeats the
    key of a matrix some process still keeps (a counter would restart at 1)."""
    return random.getrandbits(62)
