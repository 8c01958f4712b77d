"""The sidecar HNSW index of a large scope: approximate nearest neighbours past a million chunks.

Below `config.ann_threshold()` chunks a scope is searched exactly (store/vectors.py decodes it
into a matrix). Past it, decoding a million rows costs seconds and gigabytes in every
process, so the embedding stage also writes, next to the database, a usearch HNSW index of the
scope and its filter columns:

    <db dir>/ann/<db stem>-<scope, %-quoted>-<scope version>.usearch   the graph and vectors
    <db dir>/ann/<db stem>-<scope, %-quoted>-<scope version>.npy       id, path, language, kind,
                                                                          entry per chunk, by id
    <db dir>/ann/<db stem>-<scope, %-quoted>-<scope version>.i8.npy    the chunks' int8 rows (the
                                                                          database's), same order
    <db dir>/ann/<db stem>-<scope, %-quoted>-<scope version>.json      what the two hold; written
                                                                          last, so it marks them done

A reader maps the first two into memory (usearch's view, numpy's memmap): a CLI process neither
rebuilds nor decodes anything. The name carries the scope's version (vector_scopes.version, new
at every write), so a sidecar is used only for the data it was built from: any write makes it
stale, the next embedding run updates it (or rebuilds it when much changed) and deletes the old
files. A sidecar missing, stale, or failing its checks is not used: the store answers exactly.

The sidecar is a derived file (the vectors stay in the database); `repomap index` remakes it.
Keys are chunk ids. The graph (int8) only proposes candidates: the store scores them again,
exactly, from the int8 rows of the `.i8.npy` (the database's bytes at that version), so a
score is the one the exact search gives. Those rows also answer a filter that lets few chunks
through, exactly, without decoding the scope: reading them from SQLite cost ~8 us a row.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

FORMAT = 2  # 1 kept float16 rows (`.f16.npy`), as the database did before schema v17
# bench/ann.py on the real vectors (pooled corpora, and 1M with perturbed copies): i8 holds
# recall@10 >= 0.99 after the exact re-scoring at half the bytes of f16; see bench/README.md.
QUANTIZATION = "i8"
CONNECTIVITY = 16  # HNSW's M: links per node
EXPANSION_ADD = 128  # ef at build time
# ef at query time, raised to the number of results asked for: on 1M chunks (bench/ann.py)
# recall@10 0.84 at 128, 0.90 at 256, 0.95 at 512, 0.96 at 1024 (p50 4 ms)
EXPANSION_SEARCH = 1024


# One chunk's row in the `.npy`: its filter columns and cache entry (32 bytes: a filter reads
# the whole column, so the vectors are in a file of their own).
META_DTYPE = np.dtype(
    [("id", "<i8"), ("path", "<i8"), ("language", "<i4"), ("kind", "<i4"), ("entry", "<i8")]
)
VECTOR_DTYPE = np.dtype("i1")


PARALLEL_ADD = 10_000  # vectors in a batch before the graph is built on every core
UPDATE_AT_MOST = 0.1  # a sidecar is updated in place when at most this share changed, else rebuilt
_CHECKED_BYTES = 1 << 20  # the head and tail of the graph file, hashed against the header
_SUFFIXES = (
    ".json",
    ".npy",
    ".i8.npy",
    ".usearch",
)  # the header first: without it the rest is not used
_OLD_SUFFIXES = (".f16.npy",)  # format 1's rows: found by `versions`, so `remove` deletes them


@dataclass
class Sidecar:
    """A loaded sidecar: the graph as a memory-mapped view and the filter columns by chunk id."""

    index: Any  # usearch.index.Index (a view)
    meta: np.ndarray  # META_DTYPE (n,), sorted by id; memory-mapped
    vectors: np.ndarray  # int8 (n, dimensions), the rows of `meta`; memory-mapped
    language_codes: dict[str, int]
    kind_codes: dict[str, int]
    lock: threading.Lock

    @property
    def size(self) -> int:
        return len(self.meta)

    def allowed(
        self,
        path_ids: Iterable[int] | None,
        languages: Iterable[str] | None,
        kinds: Iterable[str] | None,
    ) -> np.ndarray | None:
        """A mask over `meta` of the chunks the filter lets through (None: all of them)."""
        if path_ids is None and languages is None and kinds is None:
            return None
        mask = np.ones(self.size, dtype=bool)
        if path_ids is not None:
            mask &= np.isin(self.meta["path"], np.fromiter(path_ids, dtype=np.int64))
        for wanted, column, codes in (
            (languages, "language", self.language_codes),
            (kinds, "kind", self.kind_codes),
        ):
            if wanted is not None:
                mask &= np.isin(self.meta[column], [codes[v] for v in wanted if v in codes])
        return mask

    def search(self, vector: np.ndarray, count: int) -> np.ndarray:
        """Chunk ids of about the `count` nearest chunks, nearest first."""
        with self.lock:  # the expansion is the index's state, shared by threads
            self.index.expansion_search = max(EXPANSION_SEARCH, count)
            matches = self.index.search(vector, count, threads=1)
        keys: np.ndarray = np.asarray(matches.keys, dtype=np.int64)
        return keys

    def rows(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, int8 rows) at these positions of `meta`, in position order."""
        positions = np.unique(positions)
        return np.asarray(self.meta["id"][positions]), np.asarray(self.vectors[positions])

    def positions(self, chunk_ids: np.ndarray) -> np.ndarray:
        """Where these chunk ids sit in `meta` (-1 for an id the sidecar does not hold)."""
        ids = self.meta["id"]
        found = np.searchsorted(ids, chunk_ids)
        found[found >= len(ids)] = 0
        result: np.ndarray = np.where(ids[found] == chunk_ids, found, -1)
        return result


def folder(db_path: Path) -> Path:
    return db_path.parent / "ann"


def _prefix(db_path: Path, scope: str) -> str:
    return f"{db_path.stem}-{quote(scope, safe='')}-"


def files(db_path: Path, scope: str, version: int) -> dict[str, Path]:
    """{suffix: path} of one scope version's sidecar files."""
    stem = folder(db_path) / f"{_prefix(db_path, scope)}{version}"
    return {suffix: stem.with_name(stem.name + suffix) for suffix in _SUFFIXES}


def versions(db_path: Path, scope: str) -> dict[int, list[Path]]:
    """{version: files} of the sidecars of a scope on disk (complete or not)."""
    prefix = _prefix(db_path, scope)
    found: dict[int, list[Path]] = {}
    try:
        names = os.listdir(folder(db_path))
    except OSError:  # no folder yet
        return {}
    for name in names:
        if not name.startswith(prefix):
            continue
        version, dot, suffix = name[len(prefix) :].partition(".")
        if (
            dot
            and version.isdigit()
            and "." + suffix in (*_SUFFIXES, *_OLD_SUFFIXES, *(s + ".tmp" for s in _SUFFIXES))
        ):
            found.setdefault(int(version), []).append(folder(db_path) / name)
    return found


def remove(db_path: Path, scope: str, keep: int | None = None) -> int:
    """Delete a scope's sidecars other than version `keep`; the number of files deleted."""
    removed = 0
    for version, paths in versions(db_path, scope).items():
        if version == keep:
            continue
        for path in sorted(paths, key=lambda p: p.suffix != ".json"):  # the header first
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def header(db_path: Path, scope: str, version: int) -> dict[str, Any] | None:
    """The header of a scope version's sidecar, None when it is missing or not one we wrote."""
    try:
        found = json.loads(files(db_path, scope, version)[".json"].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("format") != FORMAT:
        return None
    return found


def _usearch_index() -> Any:
    """usearch's Index class, with onnxruntime loaded first: a process that loads usearch and
    then onnxruntime (the embedding model, for a semantic question or the server's background
    embedding) dies of a segmentation fault as onnxruntime loads (usearch 2, onnxruntime 1.2x,
    seen in a fresh `python -c "import usearch.index, onnxruntime"`); in the other order, or
    with pyarrow loaded before both, it does not. tests/test_ann.py runs the order kept here
    in a fresh process."""
    import onnxruntime  # type: ignore[import-untyped]  # noqa: F401 - loaded first, see above
    from usearch.index import Index

    return Index


def load(db_path: Path, scope: str, version: int, dimensions: int) -> Sidecar | None:
    """The sidecar of this scope version mapped into memory, or None when it is missing, stale
    or fails a check (size, head and tail hash, row count): the caller then answers exactly."""
    Index = _usearch_index()

    found = header(db_path, scope, version)
    if found is None:
        return None
    paths = files(db_path, scope, version)
    try:
        if (
            found.get("dimensions") != dimensions
            or paths[".usearch"].stat().st_size != found.get("bytes")
            or _edges_digest(paths[".usearch"]) != found.get("edges_sha256")
        ):
            return None
        meta = np.load(paths[".npy"], mmap_mode="r", allow_pickle=False)
        vectors = np.load(paths[".i8.npy"], mmap_mode="r", allow_pickle=False)
        index = Index.restore(str(paths[".usearch"]), view=True)
    except (OSError, ValueError, KeyError, RuntimeError):
        return None
    if (
        index is None
        or meta.dtype != META_DTYPE
        or meta.shape != (found.get("count"),)
        or vectors.dtype != VECTOR_DTYPE
        or vectors.shape != (len(meta), dimensions)
        or index.size != len(meta)
        or index.ndim != dimensions
    ):
        return None
    return Sidecar(
        index, meta, vectors, found["language_codes"], found["kind_codes"], threading.Lock()
    )


def _edges_digest(path: Path) -> str:
    digest = hashlib.sha256()
    size = path.stat().st_size
    with path.open("rb") as handle:
        digest.update(handle.read(_CHECKED_BYTES))
        handle.seek(max(size - _CHECKED_BYTES, 0))
        digest.update(handle.read(_CHECKED_BYTES))
    return digest.hexdigest()


@dataclass
class Columns:
    """A scope's rows in chunk id order, without their vectors."""

    ids: np.ndarray  # int64
    entries: np.ndarray  # int64 embedding_cache.id
    paths: np.ndarray  # int64 vector_paths.id
    languages: list[str]
    kinds: list[str]

    def fill(self, meta: np.ndarray) -> tuple[dict[str, int], dict[str, int]]:
        """Write the columns into `meta` (META_DTYPE); the language and kind codes."""
        meta["id"], meta["path"], meta["entry"] = self.ids, self.paths, self.entries
        language_codes: dict[str, int] = {}
        kind_codes: dict[str, int] = {}
        meta["language"] = [
            language_codes.setdefault(v, len(language_codes)) for v in self.languages
        ]
        meta["kind"] = [kind_codes.setdefault(v, len(kind_codes)) for v in self.kinds]
        return language_codes, kind_codes


def changes(old: np.ndarray, columns: Columns) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids to remove from a sidecar whose meta is `old`, chunk ids to add to it) to make
    it hold `columns`: a chunk whose entry (its text's vector) changed is in both."""
    common, old_at, new_at = np.intersect1d(
        old["id"], columns.ids, assume_unique=True, return_indices=True
    )
    same = common[old["entry"][old_at] == columns.entries[new_at]]
    gone: np.ndarray = np.setdiff1d(old["id"], same, assume_unique=True)
    added: np.ndarray = np.setdiff1d(columns.ids, same, assume_unique=True)
    return gone, added


def new_index(dimensions: int) -> Any:
    Index = _usearch_index()

    return Index(
        ndim=dimensions,
        metric="cos",
        dtype=QUANTIZATION,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def build(
    db_path: Path,
    scope: str,
    version: int,
    dimensions: int,
    columns: Columns,
    batches: Iterator[tuple[np.ndarray, np.ndarray]],
    previous: int | None = None,
    gone: np.ndarray | None = None,
    added: np.ndarray | None = None,
) -> str:
    """Write the sidecar of `scope` at `version`: `batches` yields (chunk ids, int8 rows) of
    every chunk in id order, as `columns` lists them. With `previous` (a version whose sidecar
    is on disk), that graph is loaded, the chunk ids `gone` are removed from it and only those
    in `added` are added (see `changes`); otherwise every chunk is. Returns "updated" or
    "built"."""
    Index = _usearch_index()

    started = time.perf_counter()
    index: Any
    if previous is not None:
        index = Index.restore(str(files(db_path, scope, previous)[".usearch"]), view=False)
        if index is None:  # load() checked it just before: replaced since, by another run
            raise RuntimeError(f"the sidecar of version {previous} changed while read")
        if gone is not None and len(gone):
            index.remove(gone.astype(np.uint64))
    else:
        index = new_index(dimensions)
    threads = max(1, min(2, os.cpu_count() or 1))
    paths = files(db_path, scope, version)
    folder(db_path).mkdir(parents=True, exist_ok=True)
    graph_tmp = paths[".usearch"].with_name(paths[".usearch"].name + ".tmp")
    meta_tmp = paths[".npy"].with_name(paths[".npy"].name + ".tmp")
    rows_tmp = paths[".i8.npy"].with_name(paths[".i8.npy"].name + ".tmp")
    meta = np.empty(len(columns.ids), dtype=META_DTYPE)
    language_codes, kind_codes = columns.fill(meta)
    with meta_tmp.open("wb") as handle:
        np.save(handle, meta, allow_pickle=False)
    vectors = np.lib.format.open_memmap(
        rows_tmp, mode="w+", dtype=VECTOR_DTYPE, shape=(len(columns.ids), dimensions)
    )
    at = 0
    for ids, rows in batches:
        if not np.array_equal(ids, columns.ids[at : at + len(ids)]):
            raise RuntimeError("the scope's rows changed while the sidecar was built")
        vectors[at : at + len(ids)] = rows
        at += len(ids)
        if added is not None:
            chosen = np.isin(ids, added)
            ids, rows = ids[chosen], rows[chosen]
        if len(ids):
            # Threads add in no fixed order, so the graph (and what it finds) differs from one
            # build to the next; a small batch gains nothing from them and is built the same
            # way every time (test_ann compares near and exact answers on 60 vectors).
            # Unit rows: usearch's int8 graph expects components within [-1, 1].
            units = rows.astype(np.float32)
            units /= np.sqrt(np.einsum("ij,ij->i", units, units))[:, None]
            index.add(
                ids.astype(np.uint64), units, threads=threads if len(ids) >= PARALLEL_ADD else 1
            )
    if at != len(columns.ids):
        raise RuntimeError("the scope's rows changed while the sidecar was built")
    vectors.flush()
    del vectors
    index.save(str(graph_tmp))
    os.replace(graph_tmp, paths[".usearch"])
    os.replace(meta_tmp, paths[".npy"])
    os.replace(rows_tmp, paths[".i8.npy"])
    head = {
        "format": FORMAT,
        "scope": scope,
        "version": version,
        "count": len(columns.ids),
        "dimensions": dimensions,
        "quantization": QUANTIZATION,
        "connectivity": CONNECTIVITY,
        "bytes": paths[".usearch"].stat().st_size,
        "edges_sha256": _edges_digest(paths[".usearch"]),
        "language_codes": language_codes,
        "kind_codes": kind_codes,
        "seconds": round(time.perf_counter() - started, 3),
        "how": "updated" if previous is not None else "built",
    }
    header_tmp = paths[".json"].with_name(paths[".json"].name + ".tmp")
    header_tmp.write_text(json.dumps(head, sort_keys=True), encoding="utf-8")
    os.replace(header_tmp, paths[".json"])
    return str(head["how"])
