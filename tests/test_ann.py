"""The local store's HNSW sidecar (store/ann.py) with a real usearch index: the same answers
as the exact search, kept in step with the scope's version, and never a wrong answer or a
traceback when the sidecar is stale, missing or corrupt. The threshold is set low so the
sidecar is built for a few thousand chunks (by default it starts at a million)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from vector_rows import clustered, records

from repomap import config, store
from repomap.errors import BadArgument
from repomap.store import ann
from repomap.store.vectors import LocalVectorStore, VectorFilter

MODEL = "test-model-w256"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[store.Store]:
    with store.writing(tmp_path / "index.db") as opened:
        yield opened


def stores(db: store.Store, threshold: int = 100) -> tuple[LocalVectorStore, LocalVectorStore]:
    """(the store past its threshold, the same data searched exactly)."""
    return LocalVectorStore(db, MODEL, ann_threshold=threshold), LocalVectorStore(
        db, MODEL, ann_threshold=10**9
    )


def sidecar_files(db: store.Store) -> list[str]:
    folder = ann.folder(db.path)
    return sorted(os.listdir(folder)) if folder.exists() else []


def recall(found: list[tuple[int, float]], exact: list[tuple[int, float]]) -> float:
    return len({i for i, _ in found} & {i for i, _ in exact}) / len(exact)


def test_the_sidecar_answers_as_the_exact_search_does(db: store.Store) -> None:
    near, exact = stores(db)
    data = clustered(3000)
    near.upsert("main", records(data))
    assert near.refresh_ann("main") == "built"
    names = sidecar_files(db)
    version = db.scalar("SELECT version FROM vector_scopes")
    assert names == [
        f"index-main-{version}{suffix}" for suffix in (".i8.npy", ".json", ".npy", ".usearch")
    ]
    queries = clustered(40, seed=1)
    recalls = []
    for query in queries:
        found, truth = near.query("main", query, 10), exact.query("main", query, 10)
        recalls.append(recall(found, truth))
        scores = dict(truth)
        # A chunk both return has the very same score: the sidecar only proposes candidates.
        assert all(scores[i] == s for i, s in found if i in scores)
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    assert np.mean(recalls) >= 0.95
    # More results than the first round of candidates, and the whole scope.
    assert recall(near.query("main", queries[0], 300), exact.query("main", queries[0], 300)) > 0.9
    assert len(near.query("main", queries[0], 5000)) == 3000


@pytest.mark.parametrize("exact_few", [0, 10_000])
def test_filters_apply_before_ranking_through_the_sidecar(db: store.Store, exact_few: int) -> None:
    near, exact = stores(db)
    near.exact_few = exact_few  # 0: every filter goes through the sidecar, widening
    near.upsert("main", records(clustered(3000)))
    near.refresh_ann("main")
    query = clustered(1, seed=2)[0]
    for where in (
        VectorFilter(languages={"rust"}),
        VectorFilter(kinds={"class"}, languages={"python", "cpp"}),
        VectorFilter(paths={"pkg/module_3.py"}),  # 31 chunks of 3000: a hundredth
        VectorFilter(paths={"pkg/module_3.py"}, languages={"rust"}),
    ):
        found, truth = near.query("main", query, 10, where), exact.query("main", query, 10, where)
        assert len(found) == len(truth) > 0
        assert recall(found, truth) >= 0.9
        allowed = set(exact.query("main", query, 3000, where))
        assert {i for i, _ in found} <= {i for i, _ in allowed}
    assert near.query("main", query, 10, VectorFilter(paths={"pkg/none.py"})) == []
    assert near.query("main", query, 10, VectorFilter(languages=set())) == []


def test_a_write_makes_the_sidecar_stale_until_the_next_refresh_updates_it(
    db: store.Store,
) -> None:
    near, exact = stores(db)
    data = clustered(3000)
    near.upsert("main", records(data))
    near.refresh_ann("main")
    old = sidecar_files(db)
    # A changed chunk (a new text, so a new entry) and a new one: the old sidecar is stale.
    moved = clustered(2, seed=9)
    near.upsert("main", records(moved[:1], 5, text=1) + records(moved[1:], 9000, text=1))
    near.delete("main", [7])
    for query in (moved[0], moved[1]):
        # No sidecar of this version: answered exactly, so the new chunks are found.
        assert near.query("main", query, 10) == exact.query("main", query, 10)
    assert near.refresh_ann("main") == "updated"  # 3 of 3000 changed: the old one is updated
    new = sidecar_files(db)
    assert len(new) == 4 and not set(new) & set(old)  # the stale version's files deleted
    assert near.query("main", moved[0], 1)[0][0] == 5
    assert near.query("main", moved[1], 1)[0][0] == 9000
    assert 7 not in {i for i, _ in near.query("main", data[6], 50)}
    assert near.refresh_ann("main") == "kept"
    # Most of the scope rewritten: built again rather than updated.
    near.upsert("main", records(clustered(3000, seed=5), first_id=1, text=2))
    assert near.refresh_ann("main") == "built"


def test_below_the_threshold_and_deleted_scopes_leave_no_sidecar(db: store.Store) -> None:
    near, _ = stores(db, threshold=2000)
    near.upsert("main", records(clustered(1500)))
    assert near.refresh_ann("main") == "exact" and sidecar_files(db) == []
    near.upsert("main", records(clustered(600, seed=3), first_id=5000))
    assert near.refresh_ann("main") == "built" and len(sidecar_files(db)) == 4
    near.delete("main", range(5000, 5600))
    assert near.refresh_ann("main") == "exact" and sidecar_files(db) == []
    near.upsert("main", records(clustered(600, seed=3), first_id=5000))
    near.refresh_ann("main")
    near.delete_scope("main")
    assert sidecar_files(db) == [] and near.query("main", clustered(1)[0], 5) == []


@pytest.mark.parametrize(
    "damage",
    ["truncated graph", "garbage graph", "no graph", "garbage header", "no header",
     "garbage meta", "short meta", "short vectors"],
)  # fmt: skip
def test_a_corrupt_sidecar_is_answered_exactly_then_rebuilt(db: store.Store, damage: str) -> None:
    near, exact = stores(db)
    near.upsert("main", records(clustered(2000)))
    near.refresh_ann("main")
    version = int(db.scalar("SELECT version FROM vector_scopes"))
    paths = ann.files(db.path, "main", version)
    graph, meta, header = paths[".usearch"], paths[".npy"], paths[".json"]
    if damage == "truncated graph":
        graph.write_bytes(graph.read_bytes()[: graph.stat().st_size // 2])
    elif damage == "garbage graph":
        graph.write_bytes(os.urandom(graph.stat().st_size))
    elif damage == "no graph":
        graph.unlink()
    elif damage == "garbage header":
        header.write_text("{not json")
    elif damage == "no header":
        header.unlink()
    elif damage == "garbage meta":
        meta.write_bytes(os.urandom(meta.stat().st_size))
    elif damage == "short meta":
        np.save(meta, np.load(meta)[:10])
    else:
        np.save(paths[".i8.npy"], np.load(paths[".i8.npy"])[:10])
    LocalVectorStore.forget_matrices()  # a new process: nothing loaded yet
    query = clustered(1, seed=4)[0]
    assert near.query("main", query, 10) == exact.query("main", query, 10)
    assert near.query("main", query, 10, VectorFilter(kinds={"class"})) == exact.query(
        "main", query, 10, VectorFilter(kinds={"class"})
    )
    assert near.refresh_ann("main") == "built"
    LocalVectorStore.forget_matrices()
    assert near._sidecar("main", version) is not None
    assert recall(near.query("main", query, 10), exact.query("main", query, 10)) >= 0.9


def test_scope_names_are_file_names_and_do_not_collide(db: store.Store) -> None:
    near, exact = stores(db, threshold=30)
    data = clustered(200)
    for number, scope in enumerate(["feat/x", "feat", "feat-x", "../up", "Ünï code"]):
        near.upsert(scope, records(data[number * 40 : (number + 1) * 40 + 20], first_id=1))
        assert near.refresh_ann(scope) == "built"
    assert len(sidecar_files(db)) == 20
    # "../up" and "feat/x" are %-quoted into names in the folder, not paths out of it
    assert {n for n in os.listdir(db.path.parent) if not n.startswith("index.db")} == {"ann"}
    for scope in ["feat/x", "feat", "feat-x", "../up", "Ünï code"]:
        assert near.query(scope, data[45], 5) == exact.query(scope, data[45], 5)
    near.delete_scope("feat")
    assert len(sidecar_files(db)) == 16


def test_the_threshold_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPOMAP_ANN_THRESHOLD", raising=False)
    assert config.ann_threshold() == 1_000_000
    monkeypatch.setenv("REPOMAP_ANN_THRESHOLD", "2_000")
    assert config.ann_threshold() == 2000
    for bad in ("0", "-5", "many"):
        monkeypatch.setenv("REPOMAP_ANN_THRESHOLD", bad)
        with pytest.raises(BadArgument, match="REPOMAP_ANN_THRESHOLD"):
            config.ann_threshold()


# --- end to end: `repomap index --embed` builds it, `repomap search` uses it ----------------------

FILES = {
    "net/retry.py": """
class RetryPolicy:
    def backoff_delay(self, attempt):
        return min(self.cap, self.base * 2 ** attempt)

def open_connection(host, port):
    return socket.create_connection((host, port))
""",
    "net/cache.py": """
def evict_least_recently_used(store, capacity):
    while len(store) > capacity:
        store.popitem(last=False)

def read_config_file(path):
    with open(path) as handle:
        return handle.read()
""",
    "src/lib.rs": """
/// Adler-32 checksum of a byte slice.
pub fn checksum(data: &[u8]) -> u32 { data.iter().fold(1, |a, b| a + *b as u32) }

pub struct Parser { depth: usize }
""",
}


def repomap(root: Path, threshold: int, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REPOMAP_ANN_THRESHOLD": str(threshold)}
    return subprocess.run(
        [sys.executable, "-m", "repomap.cli", *args, "--root", str(root)],
        capture_output=True, text=True, env=env, timeout=180,
    )  # fmt: skip


def test_index_builds_the_sidecar_and_search_uses_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"))
    done = repomap(root, 3, "index", "--embed", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["results"][0]["embeddings"]
    assert summary["ann"] == "built" and "ann" in summary["seconds"]
    folder = root / ".repomap" / "ann"
    first = sorted(os.listdir(folder))
    assert [name.split(".", 1)[1] for name in first] == ["i8.npy", "json", "npy", "usearch"]

    def semantic(threshold: int, *args: str) -> list[tuple[str, str, float]]:
        found = repomap(root, threshold, "search", "wait longer between attempts", "--mode",
                        "semantic", "--json", "--no-refresh", *args)  # fmt: skip
        assert found.returncode == 0, found.stderr
        return [(h["path"], h["name"], h["score"]) for h in json.loads(found.stdout)["results"]]

    through_sidecar = semantic(3)
    assert through_sidecar[0][1] == "RetryPolicy.backoff_delay"
    assert through_sidecar == semantic(10**9)  # the exact search: the same list
    # A filter too (Python's: the one Rust chunk is too far from the question to be answered
    # by meaning alone, search/code.py MIN_COSINE).
    assert semantic(3, "--lang", "python") == semantic(10**9, "--lang", "python")
    (root / "net/cache.py").write_text(
        FILES["net/cache.py"] + "\ndef flush_all(store):\n    store.clear()\n"
    )
    again = repomap(root, 3, "index", "--embed", "--json")
    assert json.loads(again.stdout)["results"][0]["embeddings"]["ann"] in {"updated", "built"}
    assert not set(os.listdir(folder)) & set(first)  # the stale sidecar deleted
    above = repomap(root, 10**9, "index", "--embed", "--json")
    assert json.loads(above.stdout)["results"][0]["embeddings"]["ann"] == "exact"
    assert os.listdir(folder) == []
    bad = repomap(root, 0, "search", "retry", "--mode", "semantic")
    assert bad.returncode == 2 and "REPOMAP_ANN_THRESHOLD" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_a_store_below_the_threshold_never_uses_a_sidecar_another_store_loaded(
    db: store.Store,
) -> None:
    near, exact = stores(db)
    near.upsert("main", records(clustered(2000)))
    near.refresh_ann("main")
    query = clustered(1, seed=6)[0]
    near.query("main", query, 10)  # the sidecar is now kept in this process
    version = int(db.scalar("SELECT version FROM vector_scopes"))
    assert exact._sidecar("main", version) is None
    assert near._sidecar("main", version) is not None


def test_a_process_that_made_a_sidecar_can_load_the_embedding_model_after() -> None:
    """usearch loaded before onnxruntime killed the process (a segmentation fault as onnxruntime
    loads); store/ann.py loads onnxruntime first. In a fresh process, where nothing else (pandas,
    pyarrow) was loaded before them, as a server with a large index meets it."""
    code = (
        "import sys\n"
        "from repomap.store import ann\n"
        "assert 'pyarrow' not in sys.modules and 'onnxruntime' not in sys.modules\n"
        "ann.new_index(8)\n"
        "import onnxruntime\n"
        "print('loaded')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert (result.returncode, result.stdout.strip()) == (0, "loaded"), result.stderr[-500:]
