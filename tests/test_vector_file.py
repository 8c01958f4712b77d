"""The vector file beside the index (store/vector_file.py): a derived copy of a scope's vectors a
search reads in one go. It must never change an answer: used only when it was written from the
very vectors the reader's snapshot holds, ignored (and written again) when stale or damaged.

Real SQLite indexes in tmp dirs; the end-to-end tests run the real CLI with the real model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import vector_rows

from repomap import store
from repomap.store import vector_file
from repomap.store.vectors import LocalVectorStore, VectorFilter, VectorRecord

MODEL = "all-MiniLM-L6-v2-onnx-int8-w128"


def clustered(count: int, seed: int = 0) -> np.ndarray:
    return vector_rows.clustered(count, seed, clusters=12)


def records(vectors: np.ndarray, first_id: int = 1, text: int = 0) -> list[VectorRecord]:
    return vector_rows.records(vectors, first_id, text, modules=13, kind_cycle=5)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[store.Store]:
    with store.writing(tmp_path / "index.db") as opened:
        yield opened


def answers(db_path: Path, queries: np.ndarray) -> list[list[tuple[int, float]]]:
    """Each query's top 25, unfiltered and filtered, through a fresh reader (no kept matrix)."""
    LocalVectorStore.forget_matrices()
    found = []
    with store.reading(db_path) as reader:
        vectors = LocalVectorStore(reader, MODEL)
        for query in queries:
            found.append(vectors.query("main", query, 25))
            found.append(vectors.query("main", query, 25, VectorFilter(languages={"rust"})))
            where = VectorFilter(paths={"pkg/module_3.py", "pkg/module_7.py"}, kinds={"class"})
            found.append(vectors.query("main", query, 25, where))
    LocalVectorStore.forget_matrices()
    return found


def file_of(db: store.Store) -> Path:
    return vector_file.path_for(db.path, "main")


def test_answers_from_the_file_are_those_from_the_database_to_the_bit(db: store.Store) -> None:
    data = clustered(400)
    writer = LocalVectorStore(db, MODEL)
    writer.upsert("main", records(data[:300]))
    writer.upsert("main", records(data[:20], first_id=1000))  # equal texts share an entry
    assert not file_of(db).exists()
    from_database = answers(db.path, data[300:])  # decoded from SQLite; the reader writes it
    assert file_of(db).exists() and writer.file_state("main") == "current"
    assert answers(db.path, data[300:]) == from_database  # ids, order and float scores equal
    file_of(db).unlink()
    assert writer.refresh_file("main") == "written"  # as the embedding stage does
    assert writer.refresh_file("main") == "kept"
    assert answers(db.path, data[300:]) == from_database


def damage(path: Path, how: str) -> None:
    raw = bytearray(path.read_bytes())
    if how == "flipped vector":
        raw[-100] ^= 0x40
    elif how == "truncated":
        raw = raw[: len(raw) - 768]
    elif how == "garbage":
        raw = bytearray(b"\x00not a header\n" + bytes(raw[14:]))
    elif how == "empty":
        raw = bytearray()
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("how", ["flipped vector", "truncated", "garbage", "empty"])
def test_a_damaged_file_is_ignored_and_written_again(db: store.Store, how: str) -> None:
    data = clustered(200, seed=1)
    writer = LocalVectorStore(db, MODEL)
    writer.upsert("main", records(data[:150]))
    assert writer.refresh_file("main") == "written"
    good = answers(db.path, data[150:])
    damage(file_of(db), how)
    assert writer.file_state("main") == "stale"
    assert answers(db.path, data[150:]) == good
    assert writer.file_state("main") == "current"  # the reader that decoded wrote it again


def test_a_file_of_older_vectors_is_never_used(db: store.Store, tmp_path: Path) -> None:
    data = clustered(220, seed=2)
    writer = LocalVectorStore(db, MODEL)
    writer.upsert("main", records(data[:100]))
    writer.refresh_file("main")
    old = tmp_path / "old-file"
    shutil.copyfile(file_of(db), old)
    # The same number of rows, other vectors: a file checked by count alone would pass.
    writer.upsert("main", records(data[100:200], first_id=1, text=1))
    expected = answers(db.path, data[200:])
    shutil.copyfile(old, file_of(db))
    assert writer.file_state("main") == "stale"
    assert answers(db.path, data[200:]) == expected
    writer.delete("main", [5, 6])  # fewer rows, and a new version
    assert writer.file_state("main") == "stale"
    best = answers(db.path, data[:1])[0]
    assert best[0][0] not in (5, 6) and len(best) == 25


def test_a_reader_writes_the_file_of_its_own_snapshot_while_a_writer_commits(
    db: store.Store,
) -> None:
    data = clustered(160, seed=3)
    writer = LocalVectorStore(db, MODEL)
    writer.upsert("main", records(data[:100]))
    LocalVectorStore.forget_matrices()
    with store.reading(db.path) as reader:
        assert reader.scalar("SELECT count(*) FROM vectors") == 100  # its snapshot begins
        # A writer commits a new vector identical to the query before the reader decodes.
        writer.upsert("main", records(data[150:151], first_id=500, text=9))
        before = LocalVectorStore(reader, MODEL).query("main", data[150], 3)
    assert 500 not in [chunk for chunk, _ in before]
    assert writer.file_state("main") == "stale"  # written for the reader's version, not this one
    after = answers(db.path, data[150:151])[0]
    # int8 rows: the query's own vector scores within quantization of 1
    assert after[0][0] == 500 and after[0][1] == pytest.approx(1.0, abs=1e-4)
    assert writer.file_state("main") == "current"


def test_a_file_that_cannot_be_written_leaves_the_search_as_it_was(db: store.Store) -> None:
    data = clustered(130, seed=5)
    writer = LocalVectorStore(db, MODEL)
    writer.upsert("main", records(data[:120]))
    expected = answers(db.path, data[120:])
    file_of(db).unlink()
    file_of(db).mkdir()  # neither readable as a file nor replaceable by one
    assert answers(db.path, data[120:]) == expected
    assert writer.file_state("main") == "stale"
    with pytest.raises(OSError):
        writer.refresh_file("main")  # the embedding stage says "not written: ..."
    assert [p.name for p in db.path.parent.iterdir() if ".tmp-" in p.name] == []


def test_no_file_is_kept_of_a_scope_whose_vectors_lost_their_cache_entry(
    db: store.Store,
) -> None:
    data = clustered(60, seed=6)
    writer = LocalVectorStore(db, MODEL)
    writer.upsert("main", records(data[:50]))
    db.conn.execute(
        "DELETE FROM embedding_cache WHERE id = (SELECT entry FROM vectors WHERE chunk_id = 7)"
    )  # a damaged index (`health` reports it): the chunk is left out, as before
    found = answers(db.path, data[6:7])[0]
    assert 7 not in [chunk for chunk, _ in found] and len(found) == 25
    assert not file_of(db).exists()
    assert writer.refresh_file("main") == "none" and not file_of(db).exists()


def test_no_file_for_a_scope_searched_through_its_hnsw_sidecar(db: store.Store) -> None:
    data = clustered(120, seed=4)
    near = LocalVectorStore(db, MODEL, ann_threshold=100)
    near.upsert("main", records(data[:110]))
    assert near.refresh_ann("main") == "built"
    assert near.refresh_file("main") == "none" and not file_of(db).exists()
    exact = LocalVectorStore(db, MODEL, ann_threshold=10**9)
    exact.refresh_file("main")
    assert file_of(db).exists()
    assert near.file_state("main") == "unused"
    assert near.query("main", data[115], 5)[0][0] == exact.query("main", data[115], 5)[0][0]
    near.delete_scope("main")
    assert not file_of(db).exists()


# --- end to end: the real CLI and the real model -----------------------------------------------

FILES = {
    "net/retry.py": '''
class RetryPolicy:
    """How often to try again."""

    def backoff_delay(self, attempt):
        return min(self.cap, self.base * 2 ** attempt)
''',
    "net/cache.py": """
def evict_least_recently_used(store, capacity):
    while len(store) > capacity:
        oldest = min(store, key=lambda k: store[k].last_access)
        del store[oldest]
""",
    "net/headers.py": """
def parse_header_lines(raw):
    fields = {}
    for line in raw.splitlines():
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return fields
""",
    "src/lib.rs": """
/// Computes the checksum of a buffer with the Adler-32 algorithm.
pub fn adler32(buf: &[u8]) -> u32 {
    let mut a: u32 = 1;
    let mut b: u32 = 0;
    for byte in buf { a = (a + *byte as u32) % 65521; b = (b + a) % 65521; }
    (b << 16) | a
}
""",
}
QUESTIONS = [
    ("wait longer between attempts each time", ()),
    ("drop the entries nobody used for a while", ()),
    ("checksum of some bytes", ("--lang", "rust")),
    ("split a header block into names and values", ("--mode", "semantic")),
    ("how long to wait before trying again", ("--path", "net/", "--kind", "method")),
]


def repomap(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "repomap.cli", *map(str, args)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "REPOMAP_NO_SERVER": "1"},
    )  # fmt: skip


def searched(root: Path) -> list[dict]:
    """Every question's results (timings left out), through the CLI."""
    out = []
    for question, args in QUESTIONS:
        done = repomap("search", question, *args, "--json", "--root", root, "--no-refresh")
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        out.append({key: data[key] for key in ("mode", "results", "count", "truncated")})
    return out


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vectors") / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"))
    done = repomap("index", root, "--embed", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["embeddings"]["vector_file"] == "written"
    return root


def test_the_cli_answers_the_same_with_and_without_the_file(embedded: Path) -> None:
    path = embedded / ".repomap" / "index.db.vectors-main"
    assert path.exists()
    with_file = searched(embedded)
    # the method, or the class that holds it (a method of two lines counts less in hybrid)
    first_two = [hit["name"] for hit in with_file[0]["results"][:2]]  # the class is its one
    assert {"RetryPolicy.backoff_delay", "RetryPolicy"} & set(first_two)  # method's twin too
    path.unlink()
    assert searched(embedded) == with_file  # decoded from the database, the file written again
    assert path.exists()
    damage(path, "flipped vector")
    assert searched(embedded) == with_file
    done = repomap("index", embedded, "--json")  # nothing changed: the file is kept
    assert json.loads(done.stdout)["results"][0]["embeddings"]["vector_file"] == "kept"


def test_a_changed_tree_is_never_answered_from_the_old_file(embedded: Path, tmp_path: Path) -> None:
    path = embedded / ".repomap" / "index.db.vectors-main"
    searched(embedded)
    old = tmp_path / "old"
    shutil.copyfile(path, old)
    (embedded / "net" / "limits.py").write_text(
        "def throttle_requests_per_minute(client):\n    return client.window / 60\n"
    )
    done = repomap("index", embedded, "--json")
    assert json.loads(done.stdout)["results"][0]["embeddings"]["vector_file"] == "written"
    shutil.copyfile(old, path)  # the file from before the change, put back
    doctor = repomap("doctor", "--root", embedded, "--json")
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["results"]}
    assert checks["vector file"]["outcome"] == "WARN" and "stale" in checks["vector file"]["detail"]
    question = "limit how many calls a client makes each minute"
    done = repomap("search", question, "--mode", "semantic", "--json", "--root", embedded)
    assert json.loads(done.stdout)["results"][0]["name"] == "throttle_requests_per_minute"
    doctor = repomap("doctor", "--root", embedded, "--json")
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["results"]}
    assert checks["vector file"]["outcome"] == "PASS"


def test_clean_removes_the_vector_file(embedded: Path) -> None:
    searched(embedded)
    assert (embedded / ".repomap" / "index.db.vectors-main").exists()
    done = repomap("clean", "--root", embedded)
    assert done.returncode == 0, done.stderr
    assert not list((embedded / ".repomap").glob("index.db*"))
