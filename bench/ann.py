"""The HNSW sidecar (repomap/store/ann.py) against the exact search, on real chunk vectors.

    python bench/ann.py                      # pooled real vectors, then scaled to 1,000,000
    python bench/ann.py --scales real        # the real vectors only
    python bench/ann.py --quantizations f16,i8 --scales real,1000000

Vectors: every chunk vector of the embedded relevance corpora (~/.cache/repomap-bench-emb/
relevance/*.db, read only: Django, Rust std, LLVM headers, requests, click, regex, spdlog;
about 139k chunks), pooled into one scope of a scratch index database. The larger scale adds
perturbed copies of those real vectors (each row plus Gaussian noise, renormalized; the copies'
paths start with `copyN/`): SYNTHETIC, said so in every row it touches. Queries: the relevance
questions (bench/relevance/questions.jsonl) embedded with the real model, as `repomap search`
does.

For each scale and quantization: build seconds and peak RSS of `refresh_ann` (a subprocess),
the seconds of `refresh_ann` updating it after 50 chunks changed (what a one-file edit costs),
sidecar bytes and bytes per chunk, the database's vectors+cache bytes per chunk; per query
kind (k=10 and k=300, the pool `repomap search` asks for; no filter, a language filter, a path
filter naming one corpus' files) recall against the exact answer and latency p50/p95 of both;
the first query in a new process (what a CLI call pays: the exact search decodes the scope) and
its peak RSS (VmHWM; the memory-mapped sidecar's pages count once touched).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import common
import numpy as np

EMBEDDED = Path.home() / ".cache" / "repomap-bench-emb" / "relevance"
CORPORA = ("python", "rust", "cpp", "requests", "click", "regex", "spdlog")
QUESTIONS = common.PROJECT_ROOT / "bench" / "relevance" / "questions.jsonl"
MODEL = "all-MiniLM-L6-v2-onnx-int8-w256"
NOISE = 0.25  # the copies' Gaussian noise per dimension, relative to a unit vector's 1/sqrt(384)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="real,1000000", help="'real' and/or chunk counts")
    parser.add_argument("--quantizations", default="f16,i8")
    parser.add_argument("--big-quantizations", default="i8", help="at scales past 'real'")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch databases")
    parser.add_argument(
        "--sweep-only",
        action="store_true",
        help="only the --expansions sweep, on the sidecars a --keep run left in --workdir",
    )
    parser.add_argument(
        "--expansions",
        default="",
        help="also sweep the query-time expansion (ef), e.g. 64,128,256,512, no filter",
    )
    args = parser.parse_args(argv)
    from repomap.embed.model import Embedder

    real = load_real()
    print(f"real vectors: {len(real['vectors']):,} from {', '.join(CORPORA)}", flush=True)
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    embedder = Embedder.load()
    queries = np.stack([embedder.embed_query(q["question"]) for q in questions])
    print(f"queries: {len(queries)} questions embedded with {embedder.model_id}", flush=True)
    workdir = args.workdir or common.scratch_dir("repomap-bench-ann-")
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for scale in args.scales.split(","):
            count = len(real["vectors"]) if scale == "real" else int(scale)
            synthetic = count > len(real["vectors"])
            label = f"{count:,} " + ("(real + SYNTHETIC copies)" if synthetic else "(real)")
            db_path = workdir / f"ann-{count}.db"
            if not db_path.exists():
                clock = time.perf_counter()
                write_database(db_path, scaled(real, count))
                print(
                    f"{label}: database written in {time.perf_counter() - clock:.0f} s", flush=True
                )
            quantizations = args.quantizations if not synthetic else args.big_quantizations
            for quantization in quantizations.split(",") if not args.sweep_only else []:
                rows.extend(measure(db_path, label, quantization, questions, queries, workdir))
            if args.expansions:
                rows.extend(sweep(db_path, label, quantizations.split(",")[-1], queries,
                                  [int(e) for e in args.expansions.split(",")]))  # fmt: skip
        headers = ["chunks", "quant", "query", "k", "recall", "ANN p50", "ANN p95", "exact p50",
                   "exact p95"]  # fmt: skip
        queried = [r[1:] for r in rows if r[0] == "query"]
        print("\n" + common.markdown_table(headers, queried, "llllrrrrr"))
        headers = ["chunks", "quant", "build", "build peak RSS", "update (50 changed)", "sidecar", "sidecar/chunk",
                   "db vectors+cache/chunk", "new process: ANN first query", "RSS",
                   "exact first query", "RSS"]  # fmt: skip
        print("\n" + common.markdown_table(headers, [r[1:] for r in rows if r[0] == "build"]))
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


# --- data ----------------------------------------------------------------------------------------


def load_real() -> dict[str, list | np.ndarray]:
    """Every chunk vector of the embedded corpora (opened read only) with its path, language
    and kind; paths are prefixed with the corpus name."""
    from repomap.store import open_index
    from repomap.store.vectors import unit_rows

    vectors, paths, languages, kinds = [], [], [], []
    for corpus in CORPORA:
        db = open_index(EMBEDDED / f"{corpus}.db", readonly=True)
        try:
            rows = db.conn.execute(
                "SELECT c.vector, p.path, v.language, v.kind FROM vectors v "
                "JOIN embedding_cache c ON c.id = v.entry JOIN vector_paths p ON p.id = v.path "
                "JOIN vector_scopes s ON s.id = v.scope WHERE s.name = 'main' ORDER BY v.chunk_id"
            ).fetchall()
        finally:
            db.conn.close()
        stored = np.frombuffer(b"".join(r[0] for r in rows), "i1").reshape(len(rows), -1)
        vectors.append(unit_rows(stored))  # schema v17: int8 rows
        paths += [f"{corpus}/{r[1]}" for r in rows]
        languages += [r[2] for r in rows]
        kinds += [r[3] for r in rows]
    return {"vectors": np.concatenate(vectors), "paths": paths, "languages": languages,
            "kinds": kinds}  # fmt: skip


def scaled(real: dict, count: int):  # type: ignore[no-untyped-def]
    """Batches of (ids, vectors float32, paths, languages, kinds) for `count` chunks: the real
    ones first, then perturbed copies (SYNTHETIC) until `count`."""
    base = real["vectors"]
    n = len(base)
    rng = np.random.default_rng(17)
    sigma = NOISE / np.sqrt(base.shape[1])
    for start in range(0, count, 50_000):
        ids = np.arange(start, min(start + 50_000, count))
        source = ids % n
        rows = base[source].astype(np.float32)
        copy = ids // n
        noisy = copy > 0
        rows[noisy] += sigma * rng.standard_normal((int(noisy.sum()), base.shape[1]))
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        paths = [real["paths"][s] if c == 0 else f"copy{c}/{real['paths'][s]}"
                 for s, c in zip(source.tolist(), copy.tolist(), strict=True)]  # fmt: skip
        yield (ids + 1, rows, paths, [real["languages"][s] for s in source],
               [real["kinds"][s] for s in source])  # fmt: skip


def write_database(db_path: Path, batches) -> None:  # type: ignore[no-untyped-def]
    from repomap import store
    from repomap.store.vectors import LocalVectorStore, VectorRecord

    with store.writing(db_path) as db:
        vectors = LocalVectorStore(db, MODEL, ann_threshold=10**12)
        for ids, rows, paths, languages, kinds in batches:
            vectors.upsert("main", [
                VectorRecord(int(i), f"{int(i):064x}", p, lang, kind, row)
                for i, row, p, lang, kind in zip(ids, rows, paths, languages, kinds, strict=True)
            ])  # fmt: skip
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# --- measures ------------------------------------------------------------------------------------

CHILD = r"""
import json, sys, time
import numpy as np
from repomap import store
from repomap.store import ann
from repomap.store.vectors import LocalVectorStore
from pathlib import Path
db_path, mode, quantization, query = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
ann.QUANTIZATION = quantization
clock = time.perf_counter()
if mode == "build":
    with store.writing(db_path) as db:
        how = LocalVectorStore(db, "all-MiniLM-L6-v2-onnx-int8-w256", ann_threshold=1).refresh_ann("main")
elif mode == "update":  # 50 chunks change (new texts, new vectors), as a one-file edit does
    from repomap.store.vectors import VectorRecord
    with store.writing(db_path) as db:
        vectors = LocalVectorStore(db, "all-MiniLM-L6-v2-onnx-int8-w256", ann_threshold=1)
        rng = np.random.default_rng(int(time.time()))
        vectors.upsert("main", [
            VectorRecord(chunk_id, f"{rng.integers(1 << 62):032x}{chunk_id:032x}", path, "python",
                         "function", rng.standard_normal(384).astype(np.float32))
            for chunk_id, path in db.conn.execute(
                "SELECT v.chunk_id, p.path FROM vectors v JOIN vector_paths p ON p.id = v.path LIMIT 50")])
        clock = time.perf_counter()
        how = vectors.refresh_ann("main")
else:
    with store.reading(db_path) as db:
        threshold = 1 if mode == "ann" else 10**12
        how = LocalVectorStore(db, "all-MiniLM-L6-v2-onnx-int8-w256", ann_threshold=threshold).query(
            "main", np.load(query), 300)[0]
seconds = time.perf_counter() - clock
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec
peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
            if line.startswith("VmHWM:"))
print(json.dumps({"how": how, "seconds": seconds, "rss": peak}))
"""


def sweep(db_path, label, quantization, queries, expansions):  # type: ignore[no-untyped-def]
    """Recall and latency of the unfiltered query at each query-time expansion, on the sidecar
    `measure` left built."""
    from repomap import store
    from repomap.store import ann
    from repomap.store.vectors import LocalVectorStore

    rows = []
    default = ann.EXPANSION_SEARCH
    with store.reading(db_path) as db:
        near = LocalVectorStore(db, MODEL, ann_threshold=1)
        exact = LocalVectorStore(db, MODEL, ann_threshold=10**12)
        for k in (10, 300):
            truths = [exact.query("main", vector, k) for vector in queries]
            for expansion in expansions:
                ann.EXPANSION_SEARCH = expansion
                recalls, fast = [], []
                for vector, truth in zip(queries, truths, strict=True):
                    clock = time.perf_counter()
                    found = near.query("main", vector, k)
                    fast.append(time.perf_counter() - clock)
                    recalls.append(recall(found, truth))
                ms = lambda xs, p: f"{common.percentile(xs, p) * 1000:.1f} ms"  # noqa: E731
                rows.append(("query", label, quantization, f"no filter, ef {expansion}", k,
                             f"{np.mean(recalls):.3f}", ms(fast, 50), ms(fast, 95), "", ""))  # fmt: skip
                print(" | ".join(map(str, rows[-1][1:])), flush=True)
    ann.EXPANSION_SEARCH = default
    LocalVectorStore.forget_matrices()
    return rows


def recall(found: list[tuple[int, float]], truth: list[tuple[int, float]]) -> float:
    """The share of the exact top k that the ANN answer matches, counting a chunk whose exact
    score reaches the k-th exact score as a match (the real vectors hold many identical texts:
    which of several tied chunks fill the last places is no error). The ANN answer's scores
    are exact (re-scored from the database), so they compare directly."""
    cut = truth[-1][1]
    exact = {i for i, _ in truth}
    return sum(1 for i, score in found if i in exact or score >= cut) / len(truth)


def child(db_path: Path, mode: str, quantization: str, query: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(db_path), mode, quantization, str(query)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"{mode} child failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def measure(db_path, label, quantization, questions, queries, workdir):  # type: ignore[no-untyped-def]
    from repomap import store
    from repomap.store import ann
    from repomap.store.vectors import LocalVectorStore, VectorFilter

    ann.remove(db_path, "main")
    query_file = workdir / "query.npy"
    np.save(query_file, queries[0])
    built = child(db_path, "build", quantization, query_file)
    print(f"{label} {quantization}: {built['how']} in {built['seconds']:.1f} s", flush=True)
    updated = child(db_path, "update", quantization, query_file)
    print(f"{label} {quantization}: 50 chunks changed, {updated['how']} in "
          f"{updated['seconds']:.1f} s", flush=True)  # fmt: skip
    first_ann = child(db_path, "ann", quantization, query_file)
    first_exact = child(db_path, "exact", quantization, query_file)
    rows = []
    with store.reading(db_path) as db:
        count = int(db.scalar("SELECT count(*) FROM vectors"))
        near = LocalVectorStore(db, MODEL, ann_threshold=1)
        exact = LocalVectorStore(db, MODEL, ann_threshold=10**12)
        version = int(db.scalar("SELECT version FROM vector_scopes"))
        sidecar = sum(p.stat().st_size for p in ann.files(db_path, "main", version).values())
        tables = common.table_bytes(db_path)
        stored = sum(tables.get(t, 0) for t in ("vectors", "embedding_cache", "vector_paths"))
        exact.query("main", queries[0], 10)  # decoded once, as a server keeps it
        corpus_paths = {
            corpus: {p for (p,) in db.conn.execute(
                "SELECT path FROM vector_paths WHERE path LIKE ?", (corpus + "/%",))}
            for corpus in {q["corpus"] for q in questions}
        }  # fmt: skip
        filters = {
            "no filter": lambda q: None,
            "--lang": lambda q: VectorFilter(languages={q["language"]}),
            "--path <corpus>/": lambda q: VectorFilter(paths=corpus_paths[q["corpus"]]),
        }
        for name, where_of in filters.items():
            for k in (10, 300):
                recalls, fast, slow = [], [], []
                for question, vector in zip(questions, queries, strict=True):
                    where = where_of(question)
                    clock = time.perf_counter()
                    truth = exact.query("main", vector, k, where)
                    slow.append(time.perf_counter() - clock)
                    clock = time.perf_counter()
                    found = near.query("main", vector, k, where)
                    fast.append(time.perf_counter() - clock)
                    if truth:
                        recalls.append(recall(found, truth))
                ms = lambda xs, p: f"{common.percentile(xs, p) * 1000:.1f} ms"  # noqa: E731
                rows.append(("query", label, quantization, name, k, f"{np.mean(recalls):.3f}",
                             ms(fast, 50), ms(fast, 95), ms(slow, 50), ms(slow, 95)))  # fmt: skip
                print(" | ".join(map(str, rows[-1][1:])), flush=True)
    rows.append(("build", label, quantization, common.fmt_seconds(built["seconds"]),
                 common.fmt_bytes(built["rss"]), common.fmt_seconds(updated["seconds"]), common.fmt_bytes(sidecar),
                 f"{sidecar / count:.0f} B", f"{stored / count:.0f} B",
                 common.fmt_seconds(first_ann["seconds"]), common.fmt_bytes(first_ann["rss"]),
                 common.fmt_seconds(first_exact["seconds"]), common.fmt_bytes(first_exact["rss"])))  # fmt: skip
    print(" | ".join(map(str, rows[-1][1:])), flush=True)
    LocalVectorStore.forget_matrices()
    return rows


if __name__ == "__main__":
    sys.exit(main())
