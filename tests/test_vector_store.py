"""The VectorStore contract, one suite run on both stores: the local SQLite store in a real
migrated index and Milvus through pymilvus on milvus-lite (a local .db folder). Then what only
the local store has: the embedding cache, the kept matrix, sizes on disk."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from repomap import store
from repomap.store.vectors import (
    MISMATCH_CODE,
    EmbeddingCache,
    EmbeddingModelMismatch,
    LocalVectorStore,
    VectorFilter,
    VectorRecord,
    VectorStore,
)

MODEL = "test-model-w256"
DIMENSIONS = 384
MakeStore = Callable[..., VectorStore]


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(DIMENSIONS).astype(np.float32)
    return vector / np.linalg.norm(vector)


def toward(base: np.ndarray, seed: int, weight: float) -> np.ndarray:
    """A vector at a chosen closeness to `base` (weight 0: base itself)."""
    mixed = (1 - weight) * base + weight * unit(seed)
    return mixed / np.linalg.norm(mixed)


def record(
    chunk_id: int,
    vector: np.ndarray,
    path: str = "src/a.py",
    language: str = "python",
    kind: str = "function",
    text: str | None = None,
) -> VectorRecord:
    digest = f"{abs(hash(text or chunk_id)) % (1 << 60):064x}" if text else f"{chunk_id:064x}"
    return VectorRecord(chunk_id, digest, path, language, kind, vector)


_PREFIXES = itertools.count()


@pytest.fixture(scope="module")
def milvus_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One milvus-lite database for the module (pymilvus starts one in-process server per
    path); each test gets its own collection prefix in it."""
    pytest.importorskip("pymilvus")
    return tmp_path_factory.mktemp("milvus") / "vectors.db"


class SidecarStore(LocalVectorStore):
    """The local store past its ANN threshold (1 chunk): each write is followed by what the
    embedding stage does last (`refresh_ann`), so every query goes through a real usearch
    sidecar. `exact_few` 0 sends filtered queries through the sidecar too (asked for more
    candidates until enough pass the filter)."""

    def __init__(self, db: store.Store, model_id: str, exact_few: int) -> None:
        super().__init__(db, model_id, ann_threshold=1)
        self.exact_few = exact_few

    def upsert(self, scope: str, records: Sequence[VectorRecord]) -> None:
        super().upsert(scope, records)
        assert self.refresh_ann(scope) in {"built", "updated"}

    def delete(self, scope: str, chunk_ids: Iterable[int]) -> None:
        super().delete(scope, chunk_ids)
        self.refresh_ann(scope)

    def query(
        self, scope: str, vector: np.ndarray, k: int, where: VectorFilter | None = None
    ) -> list[tuple[int, float]]:
        found = self._scope(scope)
        if (
            found is not None
            and found[1] == self.model_id
            and self.db.scalar("SELECT count(*) FROM vectors WHERE scope = ?", (found[0],))
        ):
            assert self._sidecar(scope, found[2]) is not None  # the query takes the ANN path
        return super().query(scope, vector, k, where)


@pytest.fixture(params=["local", "hnsw", "hnsw-few", "milvus"])
def make_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[..., VectorStore]]:
    """make_store(model_id=MODEL) -> a store; every store of one test shares the same data.
    "hnsw" and "hnsw-few" are the local store searched through its sidecar HNSW index."""
    if request.param in {"local", "hnsw", "hnsw-few"}:
        db = store.open_index(tmp_path / "index.db")
        if request.param == "local":
            yield lambda model_id=MODEL: LocalVectorStore(db, model_id)
        else:
            few = 0 if request.param == "hnsw" else 10_000
            yield lambda model_id=MODEL: SidecarStore(db, model_id, few)
        db.close()
        return
    from repomap.store.milvus import MilvusVectorStore

    folder = request.getfixturevalue("milvus_folder")
    prefix = f"t{next(_PREFIXES)}_"
    opened: list[MilvusVectorStore] = []

    def make(model_id: str = MODEL) -> VectorStore:
        opened.append(MilvusVectorStore.open(str(folder), model_id, prefix=prefix))
        return opened[-1]

    yield make
    for vector_store in opened:
        for scope in vector_store.scopes():
            vector_store.delete_scope(scope)
        vector_store.close()


def ids(results: list[tuple[int, float]]) -> list[int]:
    return [chunk_id for chunk_id, _score in results]


# --- the contract ---------------------------------------------------------------------------------


def test_an_empty_store_has_no_scopes_and_answers_nothing(make_store: MakeStore) -> None:
    vectors = make_store()
    assert vectors.scopes() == []
    assert vectors.query("main", unit(1), 5) == []
    assert vectors.hashes("main") == {}
    vectors.delete("main", [1, 2])  # nothing to delete is not an error
    vectors.delete_scope("main")
    health = vectors.health()
    assert health.ok and health.counts == {}


def test_the_nearest_chunks_come_first_with_cosine_scores(make_store: MakeStore) -> None:
    vectors = make_store()
    base = unit(1)
    vectors.upsert(
        "main", [record(1, toward(base, 2, 0.9)), record(2, base), record(3, toward(base, 3, 0.4))]
    )
    results = vectors.query("main", base, 3)
    assert ids(results) == [2, 3, 1]
    assert results[0][1] == pytest.approx(1.0, abs=1e-3)
    assert all(-1.0 <= score <= 1.0 + 1e-6 for _, score in results)
    assert ids(vectors.query("main", base, 1)) == [2]


def test_upsert_replaces_a_chunk_and_the_next_query_sees_it(make_store: MakeStore) -> None:
    vectors = make_store()
    base = unit(1)
    vectors.upsert("main", [record(1, base), record(2, unit(5))])
    assert ids(vectors.query("main", base, 1)) == [1]
    vectors.upsert("main", [record(1, unit(6), text="changed"), record(2, base, text="moved")])
    assert ids(vectors.query("main", base, 1)) == [2]
    assert vectors.hashes("main")[2] == record(2, base, text="moved").hash


def test_filters_apply_before_ranking(make_store: MakeStore) -> None:
    vectors = make_store()
    base = unit(1)
    # The ten best chunks are all in src/a.py; a filter applied after a top-10 would find nothing.
    near = [record(i, toward(base, 100 + i, 0.1), "src/a.py") for i in range(1, 11)]
    far = [
        record(20, toward(base, 20, 0.8), "src/b.py", kind="class"),
        record(21, toward(base, 21, 0.6), "src/b.py"),
        record(22, toward(base, 22, 0.7), "lib/c.rs", language="rust"),
    ]
    vectors.upsert("main", near + far)
    assert ids(vectors.query("main", base, 2, VectorFilter(paths={"src/b.py"}))) == [21, 20]
    assert ids(vectors.query("main", base, 5, VectorFilter(languages={"rust"}))) == [22]
    assert ids(vectors.query("main", base, 5, VectorFilter(kinds={"class"}))) == [20]
    both = VectorFilter(paths={"src/b.py", "lib/c.rs"}, kinds={"function"})
    assert ids(vectors.query("main", base, 5, both)) == [21, 22]
    assert vectors.query("main", base, 5, VectorFilter(paths=set())) == []
    assert vectors.query("main", base, 5, VectorFilter(paths={"src/none.py"})) == []


@pytest.mark.parametrize(
    "path",
    ['src/quo"te.py', "src/apo'strophe.py", "src\\back\\slash.py", "src/ünïcode.py",
     "src/new\nline.py", "src/100%_like.py", "src/x.py\" or path != \"y"],
)  # fmt: skip
def test_a_path_filter_matches_that_exact_path_whatever_it_holds(
    make_store: MakeStore, path: str
) -> None:
    vectors = make_store()
    base = unit(1)
    vectors.upsert("main", [record(1, base, "src/plain.py"), record(2, unit(2), path)])
    assert ids(vectors.query("main", base, 5, VectorFilter(paths={path}))) == [2]


def test_deleted_chunks_are_gone_and_unknown_ids_are_ignored(make_store: MakeStore) -> None:
    vectors = make_store()
    base = unit(1)
    vectors.upsert("main", [record(i, toward(base, i, 0.1 * i)) for i in range(1, 5)])
    vectors.delete("main", [1, 3, 999])
    assert ids(vectors.query("main", base, 10)) == [2, 4]
    assert sorted(vectors.hashes("main")) == [2, 4]


def test_scopes_are_separate_and_deleting_one_keeps_the_others(make_store: MakeStore) -> None:
    vectors = make_store()
    base = unit(1)
    names = ["main", "feat/x", "feat_x", "Ünï code"]
    for number, scope in enumerate(names):
        vectors.upsert(scope, [record(number + 1, base)])
    assert vectors.scopes() == sorted(names)
    assert ids(vectors.query("feat/x", base, 5)) == [2]
    assert ids(vectors.query("feat_x", base, 5)) == [3]
    vectors.delete_scope("feat/x")
    assert vectors.scopes() == sorted(set(names) - {"feat/x"})
    assert vectors.query("feat/x", base, 5) == []
    assert ids(vectors.query("feat_x", base, 5)) == [3]


def test_hashes_map_each_chunk_to_its_content_hash(make_store: MakeStore) -> None:
    vectors = make_store()
    records = [record(i, unit(i), text=f"text {i % 3}") for i in range(1, 8)]
    vectors.upsert("main", records)
    assert vectors.hashes("main") == {r.chunk_id: r.hash for r in records}
    # counted without reading them (a search's coverage): the same number, 0 for no scope
    assert vectors.count("main") == 7 and vectors.count("other") == 0
    vectors.delete("main", [1, 2])
    assert vectors.count("main") == len(vectors.hashes("main")) == 5


def test_equal_scores_are_ordered_by_chunk_id_and_the_cut_keeps_the_lowest(
    make_store: MakeStore,
) -> None:
    vectors = make_store()
    base = unit(1)
    tied = toward(base, 7, 0.3)
    # Five chunks of one text and two other texts with the very same vector, written out of
    # order; one better chunk and one worse.
    records = [record(i, tied, text="same") for i in (50, 12, 31, 7, 44)]
    records += [record(3, tied, text="other"), record(60, tied, text="third")]
    records += [record(90, base), record(1, toward(base, 9, 0.9))]
    vectors.upsert("main", records)
    assert ids(vectors.query("main", base, 4)) == [90, 3, 7, 12]
    assert ids(vectors.query("main", base, 8)) == [90, 3, 7, 12, 31, 44, 50, 60]
    results = vectors.query("main", base, 8)
    assert len({score for _, score in results[1:]}) == 1  # bit-equal, not merely close


def test_the_same_query_gives_the_same_list(make_store: MakeStore) -> None:
    vectors = make_store()
    vectors.upsert("main", [record(i, unit(i)) for i in range(1, 60)])
    first = vectors.query("main", unit(1000), 10)
    assert [vectors.query("main", unit(1000), 10) for _ in range(3)] == [first] * 3
    assert first == make_store().query("main", unit(1000), 10)  # a new handle on the same data


def test_a_prepared_scope_answers_as_an_unprepared_one(make_store: MakeStore) -> None:
    """`prepare` (done while a question is embedded) changes nothing but when the work is done;
    an unknown scope is prepared without error, and another model's is refused as a query is."""
    vectors = make_store()
    vectors.prepare("main")
    vectors.upsert("main", [record(i, unit(i)) for i in range(1, 40)])
    expected = make_store().query("main", unit(500), 10)
    fresh = make_store()
    fresh.prepare("main")
    assert fresh.query("main", unit(500), 10) == expected
    with pytest.raises(EmbeddingModelMismatch):
        make_store("another-model").prepare("main")


def test_another_model_is_refused_with_the_code_and_the_fix(make_store: MakeStore) -> None:
    make_store("model-a").upsert("main", [record(1, unit(1))])
    other = make_store("model-b")
    for attempt in (
        lambda: other.query("main", unit(1), 3),
        lambda: other.hashes("main"),
        lambda: other.upsert("main", [record(2, unit(2))]),
    ):
        with pytest.raises(EmbeddingModelMismatch) as refused:
            attempt()
        assert refused.value.code == MISMATCH_CODE == "EMBEDDING_MODEL_MISMATCH"
        assert "repomap index --force" in str(refused.value)
        assert "\n" not in str(refused.value)
        assert refused.value.exit_code == 2
    assert other.query("elsewhere", unit(1), 3) == []  # a scope it never wrote is just empty
    other.delete_scope("main")  # what --force does first
    other.upsert("main", [record(2, unit(2))])
    assert ids(other.query("main", unit(2), 3)) == [2]


def test_health_counts_the_vectors_of_each_scope(make_store: MakeStore) -> None:
    vectors = make_store()
    vectors.upsert("main", [record(i, unit(i)) for i in range(1, 4)])
    vectors.upsert("branch", [record(9, unit(9))])
    vectors.delete("main", [1])
    health = vectors.health()
    assert health.ok
    assert health.backend in {"sqlite", "milvus"}
    assert health.counts == {"branch": 1, "main": 2}


def test_bad_arguments_are_errors(make_store: MakeStore) -> None:
    vectors = make_store()
    vectors.upsert("main", [record(1, unit(1))])
    with pytest.raises(ValueError):
        vectors.query("main", unit(1), 0)
    with pytest.raises(ValueError):
        vectors.query("main", np.ones(10, dtype=np.float32), 3)
    with pytest.raises(ValueError):
        vectors.upsert("main", [record(2, np.zeros(DIMENSIONS, dtype=np.float32))])


# --- the local store only -------------------------------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Iterator[store.Store]:
    with store.writing(tmp_path / "index.db") as opened:
        yield opened


def cache_rows(db: store.Store) -> int:
    return int(db.scalar("SELECT count(*) FROM embedding_cache"))


def test_a_text_is_cached_once_across_scopes_renames_and_chunk_ids(db: store.Store) -> None:
    vectors = LocalVectorStore(db, MODEL)
    vectors.upsert("main", [record(1, unit(1), "a.py", text="def f(): pass")])
    vectors.upsert("main", [record(2, unit(1), "renamed.py", text="def f(): pass")])
    vectors.upsert("branch", [record(7, unit(1), "a.py", text="def f(): pass")])
    assert cache_rows(db) == 1
    digest = record(1, unit(1), text="def f(): pass").hash
    found = EmbeddingCache(db).cached(MODEL, [digest, "ab" * 32])
    assert list(found) == [digest]
    assert float(found[digest] @ unit(1)) == pytest.approx(1.0, abs=1e-3)
    assert EmbeddingCache(db).cached("another-model", [digest]) == {}


def test_put_cache_keeps_vectors_and_prune_drops_only_the_unreferenced(db: store.Store) -> None:
    cache = EmbeddingCache(db)
    hashes = [f"{i:064x}" for i in range(1, 5)]
    cache.put_cache(MODEL, {h: unit(i) for i, h in enumerate(hashes)})
    cache.put_cache(MODEL, {hashes[0]: unit(99)})  # a kept hash keeps its vector
    assert float(cache.cached(MODEL, hashes[:1])[hashes[0]] @ unit(0)) == pytest.approx(1, abs=1e-3)
    LocalVectorStore(db, MODEL).upsert("main", [record(1, unit(1))])  # refers to hashes[0]
    assert cache.prune_cache(keep=[hashes[3]]) == 2
    assert sorted(cache.cached(MODEL, hashes)) == [hashes[0], hashes[3]]
    LocalVectorStore(db, MODEL).delete_scope("main")
    assert cache.prune_cache() == 2
    assert cache_rows(db) == 0


def test_prune_keeps_the_vectors_of_texts_the_chunks_table_holds(db: store.Store) -> None:
    """A chunk's hash is computed from its kept words (schema v16): its vector stays."""
    from repomap.store import chunk_texts

    words = ("Pool.drain pool drain", "pkg pool", "def drain(self)", "idle close", "Pool.drain")
    digest = chunk_texts.content_hash(words[0], words[2], words[3])
    cache = EmbeddingCache(db)
    cache.put_cache(MODEL, {digest: unit(1), "cd" * 32: unit(2)})
    with db.atomic():
        chunk_texts.write(db, [store.ROWS_PER_FILE], [words])
        chunk_texts.index_pending(db)
    assert cache.prune_cache() == 1
    assert cache.cached(MODEL, [digest, "cd" * 32]).keys() == {digest}


def test_a_reader_sees_each_write_and_keeps_its_matrix_between_writes(
    db: store.Store, tmp_path: Path
) -> None:
    writer = LocalVectorStore(db, MODEL)
    writer.upsert("main", [record(1, unit(1))])
    with store.reading(tmp_path / "index.db") as snapshot:
        reader = LocalVectorStore(snapshot, MODEL)
        assert ids(reader.query("main", unit(2), 5)) == [1]
        version = snapshot.scalar("SELECT version FROM vector_scopes")
    writer.upsert("main", [record(2, unit(2))])
    with store.reading(tmp_path / "index.db") as snapshot:
        assert snapshot.scalar("SELECT version FROM vector_scopes") != version
        assert ids(LocalVectorStore(snapshot, MODEL).query("main", unit(2), 1)) == [2]


def test_a_vector_takes_under_a_kilobyte_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    with store.writing(path) as opened:
        opened.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        empty = path.stat().st_size
        vectors = LocalVectorStore(opened, MODEL)
        count = 2000
        vectors.upsert(
            "main",
            [record(i, unit(i), f"pkg/module_{i // 10}.py") for i in range(1, count + 1)],
        )
        opened.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # int8 rows (schema v17): ~540 bytes a vector with its hash, keys and row (float16: ~900)
    assert (path.stat().st_size - empty) / count < 600


# --- Milvus only ------------------------------------------------------------------------------------


def test_a_milvus_lite_store_open_in_another_process_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("pymilvus")
    import subprocess
    import sys

    from repomap.errors import RepomapError
    from repomap.store.milvus import MilvusVectorStore

    folder = tmp_path / "busy.db"
    folder.mkdir()
    # Another process holds milvus-lite's lock on the folder, as a running `repomap mcp` would.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
         str(folder / "LOCK")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(RepomapError) as refused:
            MilvusVectorStore.open(str(folder), MODEL)
        assert "open in another process" in str(refused.value)
        assert "\n" not in str(refused.value)
    finally:
        holder.communicate("")


def test_threads_of_one_process_opening_one_milvus_lite_store_at_once_all_get_it(
    tmp_path: Path,
) -> None:
    # A server's first search and its background embedder open the store together: each
    # started a milvus-lite server for the folder, and the second failed on the first's lock
    # with "open in another process" (milvus-lite checks for a running one before starting).
    pytest.importorskip("pymilvus")
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from repomap.store.milvus import MilvusVectorStore

    uri = str(tmp_path / "shared.db")
    together = Barrier(4)

    def open_and_count(_: int) -> dict[str, int]:
        together.wait()
        opened = MilvusVectorStore.open(uri, MODEL)
        try:
            return opened.health().counts
        finally:
            opened.close()

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(open_and_count, range(4))) == [{}] * 4


def test_a_local_milvus_path_must_end_in_db(tmp_path: Path) -> None:
    pytest.importorskip("pymilvus")
    from repomap.errors import BadArgument
    from repomap.store.milvus import MilvusVectorStore

    with pytest.raises(BadArgument, match=r"\.db"):
        MilvusVectorStore.open(str(tmp_path / "vectors"), MODEL)


def test_a_milvus_collection_not_loaded_serves_every_call(tmp_path: Path) -> None:
    """A collection a new process finds is not loaded (milvus-lite, and a restarted server):
    each call loads it first instead of failing."""
    pytest.importorskip("pymilvus")
    from repomap.store.milvus import MilvusVectorStore, collection_name

    path = str(tmp_path / "vectors.db")
    writer = MilvusVectorStore.open(path, MODEL)
    writer.upsert("main", [record(1, unit(1)), record(2, unit(2))])
    calls = [
        lambda s: s.hashes("main"),
        lambda s: s.query("main", unit(1), 1),
        lambda s: s.health(),
        lambda s: s.delete("main", [2]),
        lambda s: s.upsert("main", [record(3, unit(3))]),
    ]
    for call in calls:
        writer.client.release_collection(collection_name("main"))
        call(MilvusVectorStore.open(path, MODEL))  # a new handle: nothing loaded by it yet
    reader = MilvusVectorStore.open(path, MODEL)
    assert reader.hashes("main") == {1: record(1, unit(1)).hash, 3: record(3, unit(3)).hash}
    assert ids(reader.query("main", unit(1), 1)) == [1]


def test_a_milvus_store_whose_collection_was_released_since_it_loaded_it_still_answers(
    tmp_path: Path,
) -> None:
    # An MCP server's store loads the collection once and keeps searching it. When it was
    # released since (another client of the server, a restarted server, or milvus-lite's race
    # between a refresh and the first search: 2 of 6 server starts), every search failed with
    # "Collection ... is in state 'released'" until the server was restarted.
    pytest.importorskip("pymilvus")
    from repomap.store.milvus import MilvusVectorStore, collection_name

    path = str(tmp_path / "vectors.db")
    served = MilvusVectorStore.open(path, MODEL)
    served.upsert("main", [record(1, unit(1)), record(2, unit(2))])
    assert ids(served.query("main", unit(1), 1)) == [1]
    other = MilvusVectorStore.open(path, MODEL)
    for call in (
        lambda: ids(served.query("main", unit(2), 1)) == [2],
        lambda: served.hashes("main") == {1: record(1, unit(1)).hash, 2: record(2, unit(2)).hash},
        lambda: served.health().counts == {"main": 2},
    ):
        other.client.release_collection(collection_name("main"))
        assert call()
