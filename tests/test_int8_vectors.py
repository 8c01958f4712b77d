"""Vectors stored as int8 rows (schema v17): what quantization costs, bounded on the real model's
vectors; the migration of float16 rows without the model; scores that are the same to the bit
wherever the rows lie (database, vector file, a server's widened copy, any block)."""

from __future__ import annotations

import json
import mmap
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import vector_rows

from repomap import store
from repomap.embed.model import Embedder
from repomap.store import vector_file
from repomap.store import vectors as vectors_module
from repomap.store.vectors import (
    DIMENSIONS,
    SCORE_BLOCK,
    LocalVectorStore,
    VectorFilter,
    int8_rows,
    inverse_norms,
    stored_scores,
    unit_rows,
    unit_vector,
)

# Code and the questions a person asks about it (each question's answer is the text at its index).
TEXTS = [
    "def backoff_delay(self, attempt):\n    return min(self.cap, self.base * 2 ** attempt)",
    "def evict_least_recently_used(store, capacity):\n    while len(store) > capacity:\n"
    "        oldest = min(store, key=lambda k: store[k].last_access)\n        del store[oldest]",
    "def parse_header_lines(raw):\n    fields = {}\n    for line in raw.splitlines():\n"
    "        name, _, value = line.partition(':')\n        fields[name.strip().lower()] = value",
    "pub fn adler32(buf: &[u8]) -> u32 { let mut a = 1; let mut b = 0; "
    "for byte in buf { a = (a + *byte as u32) % 65521; b = (b + a) % 65521; } (b << 16) | a }",
    "def render_template(name, context):\n    return Template(load(name)).render(context)",
    "def resolve_config_path():\n    return os.environ.get('APP_CONFIG') or default_location()",
]
QUESTIONS = [
    "wait longer between attempts each time",
    "drop the entries nobody used for a while",
    "split a header block into names and values",
    "checksum of some bytes",
    "fill a template with values",
    "where is the config file when no variable is set",
]


@pytest.fixture(scope="module")
def model() -> Embedder:
    return Embedder.load()


@pytest.fixture(scope="module")
def embedded(model: Embedder) -> tuple[np.ndarray, np.ndarray]:
    """(the texts' vectors, the questions' vectors), float32 unit rows from the real model."""
    return model.embed(TEXTS), model.embed(QUESTIONS)


def test_int8_rows_round_trip_within_their_bounds_on_the_real_model(
    embedded: tuple[np.ndarray, np.ndarray],
) -> None:
    texts, questions = embedded
    rows = int8_rows(texts, DIMENSIONS)
    assert rows.dtype == np.int8 and rows.shape == (len(TEXTS), DIMENSIONS)
    assert np.all(np.abs(rows).max(axis=1) == 127)  # each row's peak at full scale
    units = unit_rows(rows)
    # Each component within half a step of the row's scale (peak / 127) and its length 1 again.
    steps = np.abs(texts).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(units - texts) <= 0.55 * steps)
    assert np.allclose(np.linalg.norm(units, axis=1), 1, atol=1e-6)
    assert np.all(np.einsum("ij,ij->i", units, texts) > 0.9999)
    # Every question's cosine with every text moves by less than 1e-3, and each question's
    # answer stays the text it asks about.
    exact = questions @ texts.T
    stored = np.array([stored_scores(rows, inverse_norms(rows), q) for q in questions])
    assert np.max(np.abs(stored - exact)) < 1e-3
    assert list(np.argmax(stored, axis=1)) == list(range(len(QUESTIONS)))
    assert list(np.argmax(exact, axis=1)) == list(range(len(QUESTIONS)))


def test_inverse_norms_are_exact_from_the_integers() -> None:
    rows = int8_rows(vector_rows.clustered(300, seed=4), DIMENSIONS)
    expected = [np.float32(1 / np.sqrt(float(sum(int(v) ** 2 for v in row)))) for row in rows]
    assert inverse_norms(rows).tolist() == [float(v) for v in expected]


def test_zero_and_non_finite_vectors_are_refused() -> None:
    for bad in (np.zeros(DIMENSIONS), np.full(DIMENSIONS, np.nan), np.full(DIMENSIONS, np.inf)):
        with pytest.raises(ValueError):
            int8_rows(bad[None, :], DIMENSIONS)
    with pytest.raises(ValueError):
        int8_rows(np.ones((2, 10)), DIMENSIONS)


def test_scores_are_the_same_to_the_bit_in_any_block_array_or_mapping(tmp_path: Path) -> None:
    rows = int8_rows(vector_rows.clustered(3 * SCORE_BLOCK + 17, seed=5), DIMENSIONS)
    inverse = inverse_norms(rows)
    target = unit_vector(vector_rows.clustered(1, seed=6)[0], DIMENSIONS)
    whole = stored_scores(rows, inverse, target)
    widened = stored_scores(rows.astype(np.float32), inverse, target)
    assert whole.tobytes() == widened.tobytes()
    # Rows at another offset (another block boundary) and rows in a mapped file at an offset.
    shifted = stored_scores(rows[5:], inverse[5:], target)
    assert shifted.tobytes() == whole[5:].tobytes()
    path = tmp_path / "rows"
    path.write_bytes(b"\0" * 64 + rows.tobytes())
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        on_disk = np.frombuffer(mapped, np.int8, rows.size, 64).reshape(rows.shape)
        assert stored_scores(on_disk, inverse, target).tobytes() == whole.tobytes()
        del on_disk
        mapped.close()


# --- the migration of float16 rows ---------------------------------------------------------------

MODEL = "all-MiniLM-L6-v2-onnx-int8-w128"


@pytest.fixture
def v16_index(tmp_path: Path, embedded: tuple[np.ndarray, np.ndarray]) -> Iterator[Path]:
    """An index at schema v16 whose cache holds the texts' float16 rows (as v14-v16 wrote
    them; one zero row that is no vector) and a scope mapping a chunk to each."""
    path = tmp_path / "index.db"
    texts, _ = embedded
    with store.writing(path, migrate_to=16) as db:
        assert db.scalar("PRAGMA user_version") == 16
        conn = db.conn
        conn.execute("INSERT INTO embedding_models (id, name) VALUES (1, ?)", (MODEL,))
        conn.execute(
            "INSERT INTO vector_scopes (id, name, model, version) VALUES (1, 'main', 1, 7)"
        )
        conn.execute("INSERT INTO vector_paths (id, path) VALUES (1, 'pkg/a.py')")
        halves = (texts / np.linalg.norm(texts, axis=1, keepdims=True)).astype("<f2")
        blobs = [row.tobytes() for row in halves] + [np.zeros(DIMENSIONS, "<f2").tobytes()]
        conn.executemany(
            "INSERT INTO embedding_cache (id, model, hash, vector) VALUES (?, 1, ?, ?)",
            [(i + 1, bytes([i]) * 32, blob) for i, blob in enumerate(blobs)],
        )
        # Padding entries (other texts' vectors) so the table spans pages worth comparing.
        filler = vector_rows.clustered(400, seed=8).astype("<f2")
        conn.executemany(
            "INSERT INTO embedding_cache (id, model, hash, vector) VALUES (?, 1, ?, ?)",
            [
                (100 + i, (1000 + i).to_bytes(32, "big"), row.tobytes())
                for i, row in enumerate(filler)
            ],
        )
        conn.executemany(
            "INSERT INTO vectors (scope, chunk_id, entry, path, language, kind) "
            "VALUES (1, ?, ?, 1, 'python', 'function')",
            [(10 * (i + 1), i + 1) for i in range(len(blobs))],
        )
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    yield path


def cache_pages(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(
            conn.execute("SELECT count(*) FROM dbstat WHERE name = 'embedding_cache'").fetchone()[0]
        )
    except sqlite3.OperationalError:  # an SQLite without dbstat
        pytest.skip("this SQLite has no dbstat")
    finally:
        conn.close()


def test_the_migration_turns_float16_rows_into_int8_ones_without_the_model(
    v16_index: Path, embedded: tuple[np.ndarray, np.ndarray]
) -> None:
    texts, questions = embedded
    before = cache_pages(v16_index)
    halves = {
        entry: np.frombuffer(blob, "<f2").astype(np.float32)
        for entry, blob in sqlite3.connect(v16_index).execute(
            "SELECT id, vector FROM embedding_cache"
        )
    }
    with store.writing(v16_index) as db:  # opening a v16 index for writing migrates it
        assert db.scalar("PRAGMA user_version") == store.SCHEMA_VERSION
        stored = dict(db.conn.execute("SELECT id, vector FROM embedding_cache").fetchall())
        # Every vector converted from its float16 values, as the indexer now stores them; the
        # zero row (no vector) dropped, and the store's health says its chunk lost its entry.
        zero = len(TEXTS) + 1
        assert zero not in stored and len(stored) == len(halves) - 1
        for entry, blob in stored.items():
            assert blob == int8_rows(halves[entry][None, :], DIMENSIONS).tobytes()
        assert db.scalar("SELECT version FROM vector_scopes") != 7  # a new data version
        assert db.scalar("PRAGMA freelist_count") == 0  # the freed pages went back
        vectors = LocalVectorStore(db, MODEL)
        health = vectors.health()
        assert not health.ok and "1 vectors lost their cache entry" in health.message
        db.conn.execute("DELETE FROM vectors WHERE entry = ?", (zero,))
        # Each question still finds the text it asks about, at the cosine the model gives.
        for number, question in enumerate(questions):
            best = vectors.query("main", question, 1)[0]
            assert best[0] == 10 * (number + 1)
            assert best[1] == pytest.approx(float(question @ texts[number]), abs=2e-3)
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert cache_pages(v16_index) < 0.6 * before  # 384 bytes a vector instead of 768


def test_a_current_index_is_not_migrated_again(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    with store.writing(path) as db:
        LocalVectorStore(db, MODEL).upsert("main", vector_rows.records(vector_rows.clustered(5)))
        blobs = db.conn.execute("SELECT vector FROM embedding_cache ORDER BY id").fetchall()
    with store.writing(path) as db:
        assert db.conn.execute("SELECT vector FROM embedding_cache ORDER BY id").fetchall() == blobs
        assert {len(blob) for (blob,) in blobs} == {DIMENSIONS}


# --- the file, the database and a server's copy: one answer ---------------------------------------


def fill(path: Path, count: int = 700) -> np.ndarray:
    data = vector_rows.clustered(count, seed=9)
    with store.writing(path) as db:
        LocalVectorStore(db, MODEL).upsert("main", vector_rows.records(data[:600]))
    return data[600:]


def answers_of(path: Path, queries: np.ndarray, repeat: int = 1) -> list[list[tuple[int, float]]]:
    LocalVectorStore.forget_matrices()
    found = []
    with store.reading(path) as reader:
        vectors = LocalVectorStore(reader, MODEL)
        for _ in range(repeat):
            for query in queries:
                found.append(vectors.query("main", query, 20))
                found.append(vectors.query("main", query, 20, VectorFilter(kinds={"class"})))
    LocalVectorStore.forget_matrices()
    return found


def test_the_database_the_file_and_a_widened_copy_give_one_answer(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    queries = fill(path)
    file = vector_file.path_for(path, "main")
    assert not file.exists()
    from_database = answers_of(path, queries)  # decoded from SQLite (and the file written)
    assert file.exists()
    head = json.loads(file.read_bytes().split(b"\n", 1)[0])
    assert head["format"] == 2 and head["entries"] == 600
    # 20 bytes a chunk, 384 + 4 a vector (+ the header and 64-byte padding)
    assert file.stat().st_size - len(json.dumps(head)) < 600 * (20 + 384 + 4) + 4 * 64 + 64
    # From the file: the first question blockwise from the mapped int8 rows, the next ones from
    # the float32 copy a reader asked twice keeps; every answer equal to the bit.
    assert answers_of(path, queries, repeat=3) == from_database * 3
    with store.reading(path) as reader:
        vectors = LocalVectorStore(reader, MODEL)
        vectors.query("main", queries[0], 5)
        (matrix,) = vectors_module._MATRICES.values()
        assert matrix.widened is None and matrix.columns.entries.dtype == np.int8
        vectors.query("main", queries[0], 5)
        assert matrix.widened is not None and matrix.widened.dtype == np.float32
    LocalVectorStore.forget_matrices()


def test_a_file_of_the_float32_format_is_stale_and_written_again(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    queries = fill(path)
    expected = answers_of(path, queries)
    file = vector_file.path_for(path, "main")
    line, body = file.read_bytes().split(b"\n", 1)
    head = json.loads(line)
    head["format"] = 1  # the layout before v17: float32 unit rows
    old = json.dumps(head).encode()
    file.write_bytes(old + b" " * (len(line) - len(old)) + b"\n" + body)
    with store.reading(path) as reader:
        assert LocalVectorStore(reader, MODEL).file_state("main") == "stale"
    assert answers_of(path, queries) == expected
    assert json.loads(file.read_bytes().split(b"\n", 1)[0])["format"] == 2
