"""The embedding model's graph with its weights dequantized once, kept in the user's cache.

The pinned model file stores its weights as int8, and its graph turns each of them back into
float32 (Cast, Mul) on every run: run as shipped, ~60 of a one-question run's ~100 ms on one
core. onnxruntime's constant folding does that once per session instead, but folding costs
~170 ms each time a session is made. So a process that embeds many texts (the indexer, a
server) saves the folded graph once, as plain ONNX (the basic level: constant folding and
redundant nodes only, nothing tied to this CPU) with its 90 MB of weights in a side file; later
sessions of any process load that in ~50 ms and run a question in ~40 ms, and give the vectors
of the pinned file bit for bit (tests/test_embed.py, bench/embed.py).

The cache lives under `$REPOMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/repomap`, else
`~/.cache/repomap`; `REPOMAP_CACHE_DIR=""` turns it off. Its folder is named after the pinned
file's sha256 and onnxruntime's version, and holds a manifest written last: the folded graph's
sha256, the weights' size, a digest of samples of them (checked at every load, ~0.1 ms) and of
all of them (checked by `repomap doctor` and when the graph is made). A folder that is
incomplete or fails a check is not used, and the pinned file is read instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

GRAPH_NAME = "model.onnx"
WEIGHTS_NAME = "weights.bin"
MANIFEST_NAME = "manifest.json"
_SAMPLES = 64  # blocks of the weights hashed at every load
_SAMPLE_BYTES = 4096


@dataclass(frozen=True)
class Manifest:
    source_sha256: str
    runtime: str
    graph_sha256: str
    weights_size: int
    weights_sample: str
    weights_sha256: str


def cache_root() -> Path | None:
    """Where repomap keeps what it derives for the user (None: nowhere)."""
    named = os.environ.get("REPOMAP_CACHE_DIR")
    if named is not None:
        return Path(named).expanduser() if named.strip() else None
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "repomap"
    home = Path(os.path.expanduser("~"))  # "~" itself when no home is known: no cache then
    return home / ".cache" / "repomap" if home.is_absolute() else None


def folder_for(source_sha256: str, runtime: str) -> Path | None:
    root = cache_root()
    return None if root is None else root / "models" / f"{source_sha256[:16]}-ort{runtime}"


def cached_graph(source_sha256: str, runtime: str) -> Path | None:
    """The folded graph made from the model whose sha256 is `source_sha256` by this runtime,
    when the cache holds a whole one whose cheap checks pass; else None."""
    folder = folder_for(source_sha256, runtime)
    if folder is None:
        return None
    manifest = read_manifest(folder)
    if manifest is None or (manifest.source_sha256, manifest.runtime) != (source_sha256, runtime):
        return None
    graph, weights = folder / GRAPH_NAME, folder / WEIGHTS_NAME
    try:
        if _sha256(graph.read_bytes()) != manifest.graph_sha256:
            return None
        if weights.stat().st_size != manifest.weights_size:
            return None
        if _sample_digest(weights, manifest.weights_size) != manifest.weights_sample:
            return None
    except OSError:
        return None
    return graph


def make_graph(source: Path, source_sha256: str) -> Path | None:
    """Fold `source` (already checked to be `source_sha256`) into the cache and return the
    graph's path; None when there is no cache or it cannot be written (no room, read-only).
    Two processes may make it at once: each writes a folder of its own and renames it into
    place; the first rename wins and the other folder is removed."""
    import onnxruntime  # type: ignore[import-untyped]

    runtime = onnxruntime.__version__
    folder = folder_for(source_sha256, runtime)
    if folder is None:
        return None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".making-", dir=folder.parent))
    except OSError:
        return None
    try:
        _fold(source, work)
        weights = work / WEIGHTS_NAME
        size = weights.stat().st_size
        manifest = Manifest(
            source_sha256=source_sha256,
            runtime=runtime,
            graph_sha256=_sha256((work / GRAPH_NAME).read_bytes()),
            weights_size=size,
            weights_sample=_sample_digest(weights, size),
            weights_sha256=file_sha256(weights),
        )
        (work / MANIFEST_NAME).write_text(json.dumps(manifest.__dict__, indent=1) + "\n")
        try:
            work.rename(folder)
        except OSError:  # a folder is in place: another process's, or a broken one
            if cached_graph(source_sha256, runtime) is None:
                shutil.rmtree(folder, ignore_errors=True)
                work.rename(folder)
        return folder / GRAPH_NAME
    except OSError:
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _fold(source: Path, work: Path) -> None:
    """Write the basic-level optimized graph of `source` into `work`: GRAPH_NAME, with every
    initializer of 1 KB and up in WEIGHTS_NAME."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(work / GRAPH_NAME)
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_file_name", WEIGHTS_NAME
    )
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
    )
    ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])


def is_whole(folder: Path, source_sha256: str, runtime: str) -> bool:
    """Every check of cached_graph, and the sha256 of all the weights (~80 ms): `repomap
    doctor`'s, for damage the samples miss."""
    manifest = read_manifest(folder)
    if manifest is None or cached_graph(source_sha256, runtime) != folder / GRAPH_NAME:
        return False
    try:
        return file_sha256(folder / WEIGHTS_NAME) == manifest.weights_sha256
    except OSError:
        return False


def read_manifest(folder: Path) -> Manifest | None:
    try:
        fields = json.loads((folder / MANIFEST_NAME).read_text())
        return Manifest(**fields)
    except (OSError, ValueError, TypeError):  # absent, half written, or another shape
        return None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sample_digest(path: Path, size: int) -> str:
    """sha256 of _SAMPLES blocks spread evenly over the file, the last one included: a
    truncated, zeroed or swapped file fails it; a single flipped bit needs the whole hash."""
    digest = hashlib.sha256(str(size).encode())
    step = max(size // _SAMPLES, 1)
    with open(path, "rb") as file:
        for offset in [*range(0, size, step)][:_SAMPLES] + [max(size - _SAMPLE_BYTES, 0)]:
            file.seek(offset)
            digest.update(file.read(_SAMPLE_BYTES))
    return digest.hexdigest()
