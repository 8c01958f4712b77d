"""The embedding stage: bring a vector store up to date with the index's chunks.

Runs after the lexical index is written (text, symbol and chunk search never wait for it). The
store's {chunk id: hash} is compared with the chunks table: chunks gone or changed since are
deleted from the store, chunks new or changed are looked up in the embedding cache by their
text's hash, and only the texts the cache does not hold are run through the model. Work is
written in batches, each in its own transaction, so an interrupted run keeps what it embedded
and the next one goes on from there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from repomap import store
from repomap.embed.model import Embedder
from repomap.errors import RepomapError
from repomap.store import Store, chunk_texts
from repomap.store.chunk_texts import embedding_text
from repomap.store.vectors import (
    EmbeddingCache,
    EmbeddingModelMismatch,
    LocalVectorStore,
    VectorRecord,
    VectorStore,
)

SCOPE = "main"  # the working tree; branch scopes are named after their branch
BATCH = 256  # chunks embedded and written per transaction: little lost to an interruption


class ChunkRef(NamedTuple):
    chunk_id: int
    hash: str
    path: str
    language: str
    kind: str


_CHUNKS_SQL = """
SELECT c.id, coalesce(f.path, d.path, r.path, 'commit:' || m.hash),
       coalesce(f.language, d.format, r.format, 'git'), c.kind
FROM chunks c LEFT JOIN files f ON f.id = c.file_id LEFT JOIN doc_files d ON d.id = c.doc_id
     LEFT JOIN data_files r ON r.id = c.data_id LEFT JOIN commits m ON m.id = c.commit_id
ORDER BY c.id"""


@dataclass
class EmbedSummary:
    model_id: str
    total: int = 0  # chunks in the index
    changed: int = 0  # new or changed since the store was last brought up to date
    embedded: int = 0  # texts run through the model
    shared: int = 0  # more chunks of a text embedded in this run (one vector for them all)
    reused: int = 0  # taken from the embedding cache
    deleted: int = 0  # removed from the store: their chunk is gone or changed
    pending: int = 0  # still without a vector (a dry run, or an interrupted one)
    seconds: dict[str, float] = field(default_factory=dict)  # plan, embed, write, ann
    # the local store's HNSW sidecar (store/ann.py): "exact" (none: below the threshold),
    # "built", "updated", "kept", "not written: <why>"; "" for another store or a dry run
    ann: str = ""
    # the local store's vector file (store/vector_file.py), what a CLI search reads instead of
    # decoding the scope: "written", "kept", "none", "not written: <why>"; "" as for `ann`
    vector_file: str = ""

    @property
    def coverage(self) -> float:
        return 1.0 if not self.total else (self.total - self.pending) / self.total

    def as_dict(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id, "chunks": self.total, "changed": self.changed,
            "embedded": self.embedded, "shared": self.shared, "reused": self.reused,
            "deleted": self.deleted, "pending": self.pending,
            "coverage": round(self.coverage, 4), "ann": self.ann, "vector_file": self.vector_file,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }  # fmt: skip


def vector_store(db: Store, model_id: str, uri: str | None = None) -> VectorStore:
    """The store at `uri` ('milvus:PATH_OR_URI'), else the one the index names, else the index
    database itself."""
    uri = uri or store.get_meta(db, store.VECTOR_STORE_META)
    if not uri or uri == "sqlite":
        return LocalVectorStore(db, model_id)
    from repomap.errors import BadArgument

    if not uri.startswith("milvus:"):
        raise BadArgument(f"unknown vector store {uri!r}; use sqlite or milvus:PATH_OR_URI")
    from repomap.store.milvus import MilvusVectorStore

    return MilvusVectorStore.open(uri.removeprefix("milvus:"), model_id)


def current_chunks(db: Store) -> list[ChunkRef]:
    """Every chunk with its content hash (computed from its kept words, schema v16)."""
    hashes = chunk_texts.hashes(db)
    return [
        ChunkRef(chunk_id, hashes[chunk_id], path, language, kind)
        for chunk_id, path, language, kind in db.conn.execute(_CHUNKS_SQL)
        if chunk_id in hashes
    ]


def _followed(
    progress: Callable[[int, int], None], before: int, per_text: float, total: int
) -> Callable[[int], None]:
    """The model's progress within one batch (texts embedded) as the run's (chunks done)."""
    return lambda texts: progress(before + int(texts * per_text), total)


def embed_chunks(
    db: Store,
    vectors: VectorStore,
    embedder: Embedder | Callable[[], Embedder],
    *,
    dry_run: bool = False,
    at_most: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    batch: int = BATCH,
    scope: str = SCOPE,
    writing: Callable[[], AbstractContextManager[Any]] = nullcontext,
    stop: threading.Event | None = None,
    elsewhere: Callable[[str, set[str]], dict[str, np.ndarray]] | None = None,
) -> EmbedSummary:
    """Make `vectors` hold a vector for every chunk of `db`, embedding only what the cache
    lacks. `embedder` may be a function that loads the model: it is called only when a text
    must be embedded. `elsewhere(model_id, hashes)` finds vectors this cache lacks in other
    caches (the other branch scopes' indexes); they are copied here, not embedded again.
    `progress(done, total)` follows the texts to embed. Each write happens
    inside `writing()` (the index's lock: held per batch, never while the model runs, so a
    refresh of the index waits for one batch at most); `stop` set ends the run after a batch.
    `at_most`: more texts than this to embed make the run a dry run (a search's refresh embeds
    a few, and leaves a whole tree's to `repomap index`)."""
    started = time.perf_counter()
    model_id = vectors.model_id
    summary = EmbedSummary(model_id)
    chunks = current_chunks(db)
    summary.total = len(chunks)
    try:
        stored = vectors.hashes(scope)
    except EmbeddingModelMismatch:  # made by another model: worthless to this one, made again
        if not dry_run:
            vectors.delete_scope(scope)
        stored = {}
    wanted = {chunk.chunk_id: chunk.hash for chunk in chunks}
    stale = [chunk_id for chunk_id, digest in stored.items() if wanted.get(chunk_id) != digest]
    todo = [chunk for chunk in chunks if stored.get(chunk.chunk_id) != chunk.hash]
    summary.changed = len(todo)
    cache = EmbeddingCache(db)
    cached = cache.cached(model_id, {chunk.hash for chunk in todo})
    missing = [chunk for chunk in todo if chunk.hash not in cached]
    if missing and elsewhere is not None:
        borrowed = elsewhere(model_id, {chunk.hash for chunk in missing})
        if borrowed and not dry_run:
            with writing():
                cache.put_cache(model_id, borrowed)
        cached.update(borrowed)
        missing = [chunk for chunk in missing if chunk.hash not in cached]
    summary.seconds["plan"] = time.perf_counter() - started
    if dry_run or (at_most is not None and len({chunk.hash for chunk in missing}) > at_most):
        summary.deleted = len(stale)
        summary.reused = len(todo) - len(missing)
        summary.embedded = len({chunk.hash for chunk in missing})
        summary.shared = len(missing) - summary.embedded
        summary.pending = len(todo)
        return summary

    clock = time.perf_counter()
    if stale:
        with writing():
            vectors.delete(scope, stale)
        summary.deleted = len(stale)
    if scope == SCOPE:  # every vector compared with its chunk's text: a killed run's are too
        with writing():
            store.clear_vector_checks(db)
    reuse = [chunk for chunk in todo if chunk.hash in cached]
    for start in range(0, len(reuse), batch * 8):
        part = reuse[start : start + batch * 8]
        with writing():
            vectors.upsert(scope, [_record(chunk, cached[chunk.hash]) for chunk in part])
    summary.reused = len(reuse)
    summary.seconds["write"] = time.perf_counter() - clock

    summary.pending = len(missing)
    if missing:
        model = embedder if isinstance(embedder, Embedder) else embedder()
        if model.model_id != model_id:
            raise ValueError(f"the store wants {model_id}, the model is {model.model_id}")
        embed_seconds = 0.0
        done = 0
        # Chunks of one text are embedded once, whichever batches they would fall in: cut by
        # chunks, a text repeated across two batches was embedded twice (and the run's count
        # exceeded its dry run's).
        sharing: dict[str, list[ChunkRef]] = {}
        for chunk in missing:
            sharing.setdefault(chunk.hash, []).append(chunk)
        digests = list(sharing)
        if progress is not None:
            progress(0, len(missing))  # the total known before the first batch ends
        for start in range(0, len(digests), batch):
            if stop is not None and stop.is_set():
                break
            unique = digests[start : start + batch]
            part = [chunk for digest in unique for chunk in sharing[digest]]
            texts = _texts(db, [sharing[digest][0].chunk_id for digest in unique])
            clock = time.perf_counter()
            # followed within the batch too (the model's own small batches): a bar that moved
            # once per 256 chunks showed no ETA on a small tree, and none for minutes on a big one
            within = None
            if progress is not None:
                within = _followed(progress, done, len(part) / len(unique), len(missing))
            made = model.embed(
                [texts[sharing[digest][0].chunk_id] for digest in unique], progress=within
            )
            embed_seconds += time.perf_counter() - clock
            clock = time.perf_counter()
            fresh = dict(zip(unique, made, strict=True))
            with writing(), db.atomic():
                cache.put_cache(model_id, fresh)
                vectors.upsert(scope, [_record(chunk, fresh[chunk.hash]) for chunk in part])
            summary.seconds["write"] += time.perf_counter() - clock
            summary.embedded += len(unique)
            summary.shared += len(part) - len(unique)
            summary.pending -= len(part)
            done += len(part)
            if progress is not None:
                progress(done, len(missing))
        summary.seconds["embed"] = embed_seconds
    if isinstance(vectors, LocalVectorStore) and not (stop is not None and stop.is_set()):
        clock = time.perf_counter()
        summary.ann = refresh_ann(vectors, scope)
        summary.seconds["ann"] = time.perf_counter() - clock
        clock = time.perf_counter()
        summary.vector_file = refresh_vector_file(vectors, scope)
        summary.seconds["vector_file"] = time.perf_counter() - clock
    summary.seconds["total"] = time.perf_counter() - started
    return summary


def refresh_ann(vectors: LocalVectorStore, scope: str = SCOPE) -> str:
    """The scope's HNSW sidecar brought up to date (past the threshold); a sidecar that cannot
    be written leaves the exact search, said in the summary rather than failing the run."""
    try:
        return vectors.refresh_ann(scope)
    except (OSError, RuntimeError, MemoryError) as failure:
        return f"not written: {failure}"


def refresh_vector_file(vectors: LocalVectorStore, scope: str = SCOPE) -> str:
    """The scope's vector file brought up to date; one that cannot be written only makes the
    next search decode the scope, so it is said in the summary rather than failing the run."""
    try:
        return vectors.refresh_file(scope)
    except OSError as failure:
        return f"not written: {failure}"


def coverage_count(db: Store, vectors: VectorStore, scope: str = SCOPE) -> int:
    """How many of the index's chunks have a vector in the store (the store's count, where a
    changed chunk's old vector still counts until the embedding stage runs)."""
    if isinstance(vectors, LocalVectorStore):  # in the database: a server counts once per
        # index content (~2 ms a question on Django's 48k vectors)
        return db.per_content(f"vectors in {scope}", lambda: vectors.count(scope))
    return vectors.count(scope)  # another store changes without the database's knowing


def drop_stale(db: Store, ranges: Sequence[tuple[int, int]]) -> int:
    """Delete the local store's vectors of chunks in `ranges` ([start, end) of chunk ids:
    files, docs and data files a run rewrote or removed) whose chunk is gone or holds another
    text now; how many. A run that does not embed (a query's refresh, `index --no-embed`) left
    them, and the chunk was found by its old meaning while the coverage counted it; now the
    coverage says it lacks a vector until the next embedding run, which takes it from the cache
    if the text was seen. The vector file and the HNSW sidecar follow, so searches keep their
    fast path. Another store (Milvus) is left to the embedding stage: reading its hashes on
    every refresh cost half a second, and failed while another process held it."""
    model_id = store.embedding_model(db)
    if not ranges or model_id is None:
        return 0
    vectors = vector_store(db, model_id)
    if not isinstance(vectors, LocalVectorStore):
        return 0
    try:
        stored = vectors.hashes_between(SCOPE, ranges)
    except EmbeddingModelMismatch:
        return 0  # the embedding run replaces them all
    if not stored:
        return 0
    current = {
        chunk_id: chunk_texts.content_hash(title, head, body)
        for chunk_id, (title, _place, head, body, _name) in chunk_texts.texts(db, stored).items()
    }
    stale = [chunk_id for chunk_id, digest in stored.items() if current.get(chunk_id) != digest]
    if stale:
        vectors.delete(SCOPE, stale)
        refresh_ann(vectors)
        refresh_vector_file(vectors)
    return len(stale)


def _texts(db: Store, chunk_ids: Sequence[int]) -> dict[int, str]:
    words = store.chunk_words(db, chunk_ids)
    return {
        chunk_id: embedding_text(title, head, body)
        for chunk_id, (title, _place, head, body, _name) in words.items()
    }


def _record(chunk: ChunkRef, vector: np.ndarray) -> VectorRecord:
    return VectorRecord(chunk.chunk_id, chunk.hash, chunk.path, chunk.language, chunk.kind, vector)


class BackgroundEmbedder:
    """Keeps an index's vectors up to date in a thread, for a long-running server: `kick()`
    after the index changed starts a run unless one is going (then it runs once more after);
    `state()` says how far it is. Searches meanwhile answer with the coverage they have."""

    def __init__(self, run: Callable[[threading.Event, Callable[[int, int], None]], Any]) -> None:
        self._run = run
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._again = False
        self._stop = threading.Event()
        self.done = 0
        self.total = 0
        self.error: str | None = None

    def kick(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                self._again = True
                return
            self._thread = threading.Thread(target=self._loop, name="repomap-embed", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.done = self.total = 0
            try:
                self._run(self._stop, self._progress)
                self.error = None
            except RepomapError as failure:  # told in state(); the next kick tries again
                self.error = str(failure)
            with self._lock:
                if not self._again:
                    self._thread = None
                    return
                self._again = False

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def state(self) -> dict[str, Any]:
        """running, this run's embedded / to_embed, the last run's error, and the phase in words:
        `starting` (the model loading, the chunks to embed being listed: 0 of 0 is not a count),
        `embedding`, `idle` or `failed`."""
        running = self._thread is not None and self._thread.is_alive()
        if running:
            phase = "embedding" if self.total else "starting"
        else:
            phase = "failed" if self.error else "idle"
        return {"running": running, "phase": phase, "embedded": self.done, "to_embed": self.total,
                "error": self.error}  # fmt: skip

    def close(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join()
