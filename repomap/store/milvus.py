"""The `VectorStore` contract on Milvus, through pymilvus' `MilvusClient`.

`MilvusVectorStore.open(uri)`: a local path ending in `.db` runs milvus-lite inside this process
(pymilvus starts its gRPC server on a free loopback port; the `.db` path becomes a folder);
`http://host:19530` (or https) talks to a Milvus server or Zilliz Cloud. One collection per scope,
named from the scope (sanitized, with a digest so `feat/x` and `feat_x` stay apart), holding
chunk_id (primary key), hash, path, language, kind and the vector (FLOAT_VECTOR, inner product on
unit vectors = cosine). The scope's name and model id are collection properties.

Filters become Milvus boolean expressions, applied by Milvus before it ranks. Milvus' order of
equal scores is its own, so the candidates it returns are scored again here the way the local
store scores them (one dot product per distinct vector, its int8 rows: vectors.int8_rows) and sorted by
score, then chunk id; when the k-th and (k+1)-th scores are within rounding of each other, a
range search first fetches every chunk at that score, so which of them make the cut is decided
by chunk id too.

milvus-lite 3.2.2, what the tests run on, is a pure-Python reimplementation of Milvus (storage:
a WAL, memtables and Parquet segments; search: FAISS per segment; pyarrow, faiss-cpu and grpcio
underneath) behind a gRPC adapter that pymilvus starts in this process for a `.db` path. What
that means here: the `.db` path is a folder, locked by one process at a time (a second one gets
MilvusUnavailable, in one line); it keeps no collection description (so scope and model are
properties); a collection reopened by a new process is not loaded, and search refuses until it
is (`_load`); its query iterator warns about a missing server timestamp (filtered below).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from repomap.errors import BadArgument, RepomapError
from repomap.store.vectors import (
    DIMENSIONS,
    EmbeddingModelMismatch,
    StoreHealth,
    VectorFilter,
    VectorRecord,
    int8_rows,
    inverse_norms,
    stored_scores,
    top_k,
    unit_rows,
    unit_vector,
)

if TYPE_CHECKING:
    from pymilvus import MilvusClient  # type: ignore[import-untyped]

PREFIX = "repomap_"
SCOPE_PROPERTY = "repomap.scope"
MODEL_PROPERTY = "repomap.model_id"
MAX_LIMIT = 16_384  # Milvus' largest topk / query window
WRITE_BATCH = 1_000  # rows per upsert call (gRPC messages stay well under their 64 MB cap)
TIE_MARGIN = 1e-4  # Milvus' scores (float32, its own summation order) against ours
VARCHAR_MAX = 65_535


class MilvusUnavailable(RepomapError):
    """pymilvus is missing, or the Milvus at a URI cannot be reached."""


class _QuietIterator(logging.Filter):
    """milvus-lite answers a query iterator without the server timestamp a Milvus server sends;
    pymilvus then warns, on every `hashes()`, that it used the client's clock (harmless)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "mvccTs" not in record.getMessage()


class _QuietLock(logging.Filter):
    """milvus-lite logs a traceback when its folder is locked by another process; open() says
    that in one line instead (see _locked)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return type(error).__name__ != "DataDirLockedError"


class _QuietRpcError(logging.Filter):
    """pymilvus logs each failed call with a traceback before raising it; the store raises it
    as one line (MilvusVectorStore._errors), so the log would only repeat it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.funcName != "_log_rpc_error"


logging.getLogger("pymilvus.client.iterator.query_iterator").addFilter(_QuietIterator())
logging.getLogger("pymilvus.decorators").addFilter(_QuietRpcError())
logging.getLogger("milvus_lite.server_manager").addFilter(_QuietLock())


# milvus-lite runs one server per store folder in a process and hands it to every client of
# that path, but two threads opening the same folder at once both start one (its check comes
# before the start): the second fails on the folder's lock, held by the first. A server's
# first search while its background embedder opened the store hit that. Opens in one process
# take turns.
_OPENING = threading.Lock()
# The same race one step later: milvus-lite makes a collection's in-memory object on the first
# request that names it, and two threads' first requests at once made two; the one it kept was
# never loaded, so the next search failed ("Collection ... is in state 'released'"; 2 of 6 MCP
# server starts, whose refresh and first search open the store together). This process's
# requests that may be a collection's first (existence, description, load state, load,
# creation, drop) take turns; searches and writes come after them and run at once.
_NAMING = threading.Lock()
NOT_LOADED = 101  # Milvus' error code for a search of a collection not loaded (milvus-lite's too)
T = TypeVar("T")


def _locked(folder: Path) -> bool:
    """Whether another process holds milvus-lite's lock on `folder` (its LOCK file's flock)."""
    import fcntl

    try:
        with open(folder / "LOCK", "rb") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(lock, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def collection_name(scope: str, prefix: str = PREFIX) -> str:
    """A Milvus collection name for a scope: letters, digits and `_`, at most 255 characters,
    distinct for distinct scopes (a digest of the exact name ends it)."""
    readable = re.sub(r"[^A-Za-z0-9_]", "_", scope)[:64]
    digest = hashlib.sha256(scope.encode("utf-8")).hexdigest()[:12]
    return f"{prefix}{readable}_{digest}"


def quoted(value: str) -> str:
    """A Milvus string literal: double quotes, with `"`, `\\` and control characters escaped
    (JSON's escapes, which Milvus' expression parser reads the same way)."""
    return json.dumps(value, ensure_ascii=False)


def filter_expression(where: VectorFilter | None) -> str:
    """`where` as a Milvus boolean expression ("" for no filter)."""
    if where is None:
        return ""
    terms = []
    for field, values in (
        ("path", where.paths),
        ("language", where.languages),
        ("kind", where.kinds),
    ):
        if values is not None:
            terms.append(f"{field} in [{', '.join(quoted(v) for v in sorted(values))}]")
    return " and ".join(terms)


class MilvusVectorStore:
    """Chunk vectors in Milvus (a server, or milvus-lite in a local folder)."""

    backend = "milvus"

    def __init__(
        self,
        client: MilvusClient,
        model_id: str,
        dimensions: int = DIMENSIONS,
        *,
        prefix: str = PREFIX,
        uri: str = "",
    ) -> None:
        self.client = client
        self.model_id = model_id
        self.dimensions = dimensions
        self.prefix = prefix
        self.uri = uri
        self._loaded: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def open(
        cls,
        uri: str,
        model_id: str,
        dimensions: int = DIMENSIONS,
        *,
        token: str = "",
        prefix: str = PREFIX,
    ) -> MilvusVectorStore:
        """A store at `uri`: a path ending in `.db` (milvus-lite, in process) or http(s)://..."""
        try:
            from pymilvus import MilvusClient
            from pymilvus.exceptions import MilvusException  # type: ignore[import-untyped]
        except ImportError:
            raise MilvusUnavailable(
                "the Milvus vector store needs pymilvus; run `pip install 'repomap[milvus]'`"
            ) from None
        if re.match(r"^(https?|tcp|grpc|unix)://", uri) is None and not uri.startswith("unix:"):
            if not uri.endswith(".db"):
                raise BadArgument(
                    f"a local Milvus store is a path ending in .db (milvus-lite), not {uri!r}; "
                    "for a server pass http://HOST:19530"
                )
            local = Path(uri).expanduser().resolve()
            local.parent.mkdir(parents=True, exist_ok=True)
            uri = str(local)
        try:
            with _OPENING:
                client = MilvusClient(uri=uri, token=token)
        except MilvusException as error:
            if uri.endswith(".db") and _locked(Path(uri)):
                raise MilvusUnavailable(
                    f"the milvus-lite store {uri} is open in another process (milvus-lite allows "
                    "one process per store); stop it, or use a Milvus server (http://HOST:19530)"
                ) from None
            raise MilvusUnavailable(
                f"cannot open the Milvus store at {uri}: {error.message}"
            ) from None
        return cls(client, model_id, dimensions, prefix=prefix, uri=uri)

    def close(self) -> None:
        self.client.close()

    # --- the contract ---

    def upsert(self, scope: str, records: Sequence[VectorRecord]) -> None:
        if not records:
            return
        # the local store's int8 rows, as unit float32 vectors (inner product = cosine)
        vectors = unit_rows(int8_rows(np.stack([r.vector for r in records]), self.dimensions))
        latest = {r.chunk_id: i for i, r in enumerate(records)}  # a repeated id: the last wins
        rows = [
            {
                "chunk_id": int(r.chunk_id),
                "hash": r.hash,
                "path": r.path,
                "language": r.language,
                "kind": r.kind,
                "vector": vectors[i].tolist(),
            }
            for i, r in enumerate(records)
            if latest[r.chunk_id] == i
        ]
        with self._errors():
            name = self._collection_for_write(scope)
            for start in range(0, len(rows), WRITE_BATCH):
                self.client.upsert(name, rows[start : start + WRITE_BATCH])
            # Sealed segments are searched by FAISS; rows left in milvus-lite's memtable are
            # scanned in Python (5k rows: 0.9 s a query unflushed, 0.03 s flushed).
            self.client.flush(name)

    def query(
        self, scope: str, vector: np.ndarray, k: int, where: VectorFilter | None = None
    ) -> list[tuple[int, float]]:
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        target = unit_vector(vector, self.dimensions)
        with self._errors():
            name = self._checked(scope)
            if name is None or _matches_nothing(where):
                return []
            limit = min(k + 1, MAX_LIMIT)
            hits = self._search(name, target, limit, filter_expression(where))
            if len(hits) > k and hits[k - 1]["distance"] - hits[k]["distance"] <= TIE_MARGIN:
                radius = hits[k - 1]["distance"] - TIE_MARGIN
                params = {"radius": radius, "range_filter": 2.0}  # every score above radius
                hits = self._search(name, target, MAX_LIMIT, filter_expression(where), params)
        return _rescored(hits, target, k)

    def prepare(self, scope: str) -> None:
        with self._errors():
            self._checked(scope)  # loads the collection

    def delete(self, scope: str, chunk_ids: Iterable[int]) -> None:
        ids = [int(i) for i in chunk_ids]
        with self._errors():
            name = collection_name(scope, self.prefix)
            with _NAMING:
                if not ids or not self.client.has_collection(name):
                    return
                self._load(name)
            for start in range(0, len(ids), WRITE_BATCH):
                self.client.delete(name, ids=ids[start : start + WRITE_BATCH])
            self.client.flush(name)

    def delete_scope(self, scope: str) -> None:
        name = collection_name(scope, self.prefix)
        with self._errors(), _NAMING:
            if self.client.has_collection(name):
                self.client.drop_collection(name)
        with self._lock:
            self._loaded.discard(name)

    def scopes(self) -> list[str]:
        with self._errors(), _NAMING:
            return sorted(self._properties(name)[0] for name in self._collections())

    def hashes(self, scope: str) -> dict[int, str]:
        found: dict[int, str] = {}
        with self._errors():
            name = self._checked(scope)
            if name is None:
                return {}
            iterator = self._while_loaded(
                name,
                lambda: self.client.query_iterator(
                    name, batch_size=WRITE_BATCH, filter="", output_fields=["chunk_id", "hash"]
                ),
            )
            try:
                while batch := iterator.next():
                    found.update((int(row["chunk_id"]), str(row["hash"])) for row in batch)
            finally:
                iterator.close()
        return found

    def count(self, scope: str) -> int:
        with self._errors():
            name = self._checked(scope)
            if name is None:
                return 0
            return self._count(name)

    def health(self) -> StoreHealth:
        try:
            counts = {}
            with self._errors():
                for name in self._collections():
                    with _NAMING:
                        scope = self._properties(name)[0]
                        self._load(name)
                    counts[scope] = self._count(name)
        except MilvusUnavailable as error:
            return StoreHealth(self.backend, False, str(error), {})
        return StoreHealth(
            self.backend, True, f"Milvus at {self.uri}", dict(sorted(counts.items()))
        )

    # --- helpers ---

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Milvus' failures (a server gone, a refused request) as one line a user can act on."""
        from pymilvus.exceptions import MilvusException

        try:
            yield
        except MilvusException as error:
            message = " ".join(str(error.message).split())
            raise MilvusUnavailable(f"the Milvus store at {self.uri} failed: {message}") from None

    def _collections(self) -> list[str]:
        return [name for name in self.client.list_collections() if name.startswith(self.prefix)]

    def _properties(self, name: str) -> tuple[str, str]:
        """(scope, model id) of a collection."""
        properties = self.client.describe_collection(name).get("properties", {})
        return str(properties.get(SCOPE_PROPERTY, name)), str(properties.get(MODEL_PROPERTY, ""))

    def _checked(self, scope: str) -> str | None:
        """The scope's collection, loaded; None when there is none; another model's is refused."""
        name = collection_name(scope, self.prefix)
        with _NAMING:
            if not self.client.has_collection(name):
                return None
            stored = self._properties(name)[1]
            if stored != self.model_id:
                raise EmbeddingModelMismatch(scope, stored, self.model_id)
            self._load(name)
        return name

    def _collection_for_write(self, scope: str) -> str:
        name = self._checked(scope)
        if name is not None:
            return name
        from pymilvus import DataType, MilvusClient

        name = collection_name(scope, self.prefix)
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("chunk_id", DataType.INT64, is_primary=True)
        schema.add_field("hash", DataType.VARCHAR, max_length=64)
        schema.add_field("path", DataType.VARCHAR, max_length=VARCHAR_MAX)
        schema.add_field("language", DataType.VARCHAR, max_length=64)
        schema.add_field("kind", DataType.VARCHAR, max_length=64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dimensions)
        index = self.client.prepare_index_params()
        # FLAT: exact search, as the local store does; a large server collection can be given
        # an ANN index (HNSW) later without changing this code's queries.
        index.add_index(field_name="vector", index_type="FLAT", metric_type="IP")
        with _NAMING:
            self.client.create_collection(
                name,
                schema=schema,
                index_params=index,
                consistency_level="Strong",  # a query right after an upsert sees it
                properties={SCOPE_PROPERTY: scope, MODEL_PROPERTY: self.model_id},
            )
        with self._lock:
            self._loaded.add(name)  # create_collection with an index loads it
        return name

    def _load(self, name: str) -> None:
        """Searches need a loaded collection; one opened again in a new process is not."""
        with self._lock:
            if name in self._loaded:
                return
        state = self.client.get_load_state(name).get("state")
        if getattr(state, "name", str(state)) != "Loaded":
            self.client.load_collection(name)
        with self._lock:
            self._loaded.add(name)

    def _search(
        self,
        name: str,
        target: np.ndarray,
        limit: int,
        expression: str,
        params: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        results = self._while_loaded(
            name,
            lambda: self.client.search(
                name,
                data=[target.tolist()],
                limit=limit,
                filter=expression,
                anns_field="vector",
                output_fields=["vector"],
                search_params={"metric_type": "IP", "params": params or {}},
            ),
        )
        return [dict(hit) for hit in results[0]]

    def _count(self, name: str) -> int:
        rows = self._while_loaded(
            name, lambda: self.client.query(name, filter="", output_fields=["count(*)"])
        )
        return int(rows[0]["count(*)"])

    def _while_loaded(self, name: str, call: Callable[[], T]) -> T:
        """`call` on a collection this store loaded, loaded again and called once more if it
        was released since: by another client of the server, a restarted server, or
        milvus-lite's own race (_NAMING). A long-lived store (a server's) would otherwise fail
        every search until restarted."""
        from pymilvus.exceptions import MilvusException

        try:
            return call()
        except MilvusException as error:
            if error.code != NOT_LOADED:
                raise
        with self._lock:
            self._loaded.discard(name)
        with _NAMING:
            self._load(name)
        return call()


def _matches_nothing(where: VectorFilter | None) -> bool:
    """An empty set in the filter: no chunk can match (Milvus' `in []` is avoided)."""
    if where is None:
        return False
    values: tuple[Collection[str] | None, ...] = (where.paths, where.languages, where.kinds)
    return any(v is not None and len(v) == 0 for v in values)


def _rescored(hits: list[dict[str, Any]], target: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The hits scored as the local store scores them: one dot product per distinct vector, so
    equal vectors score bit-equal and their order is the chunk ids'."""
    if not hits:
        return []
    ids = np.array([int(hit["chunk_id"]) for hit in hits], dtype=np.int64)
    distinct: dict[bytes, int] = {}
    rows = np.array(
        [
            distinct.setdefault(
                np.asarray(hit["entity"]["vector"], np.float32).tobytes(), len(distinct)
            )
            for hit in hits
        ]
    )
    # Quantized again they are the very int8 rows they were made from (each row's largest
    # component is +-127 of its scale), scored as the local store scores its rows.
    stored = int8_rows(
        np.frombuffer(b"".join(distinct), np.float32).reshape(len(distinct), -1), len(target)
    )
    scores = stored_scores(stored, inverse_norms(stored), target)[rows]
    return top_k(ids, scores, k)
