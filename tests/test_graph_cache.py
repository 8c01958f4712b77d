"""The model's folded graph in the user's cache (embed/graph_cache.py), with the real model: the
same vectors bit for bit as the pinned file, made once by a process that embeds many texts, used
by a question's quick load, never used when damaged, and `repomap doctor` names the damage."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from conftest import run_cli

from repomap.embed import graph_cache, model
from repomap.embed.model import MODEL_SHA256, TOKENIZER_PATH, Embedder, installed_model_path

RUNTIME = onnxruntime.__version__
# Lengths from one word to past the window, so batches pad differently.
TEXTS = [
    "retry",
    "where does the app find its config file when no variable is set",
    "def close_connection(self):\n    self.socket.close()",
    "parse the HTTP header lines into a dictionary " * 12,
    "impl<T> Drop for Vec<T> { fn drop(&mut self) { unsafe { ptr::drop_in_place(self.as_mut_slice()) } } }",
    "static int lua_gettop (lua_State *L) { return cast_int(L->top - (L->ci->func + 1)); }",
]  # fmt: skip


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REPOMAP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(model, "_LOADED", {})  # Embedder.load's per-process objects
    return tmp_path / "cache"


@pytest.fixture
def folded(cache: Path) -> Path:
    graph = graph_cache.make_graph(installed_model_path(), MODEL_SHA256)
    assert graph is not None
    return graph


def pinned_vectors(window: int = 128, optimize: bool = True) -> np.ndarray:
    return Embedder.from_files(installed_model_path(), TOKENIZER_PATH, window, optimize=optimize).embed(TEXTS)  # fmt: skip


def test_the_folded_graph_gives_the_pinned_files_vectors_bit_for_bit(folded: Path) -> None:
    assert folded.parent.parent.parent == Path(graph_cache.cache_root() or "")
    assert graph_cache.cached_graph(MODEL_SHA256, RUNTIME) == folded
    for window in (128, 256):
        from_cache = Embedder.from_files(folded, TOKENIZER_PATH, window, model_sha256=None)
        assert np.array_equal(from_cache.embed(TEXTS), pinned_vectors(window))
    manifest = graph_cache.read_manifest(folded.parent)
    assert manifest is not None and manifest.source_sha256 == MODEL_SHA256
    assert manifest.weights_size == (folded.parent / graph_cache.WEIGHTS_NAME).stat().st_size
    assert graph_cache.is_whole(folded.parent, MODEL_SHA256, RUNTIME)


def test_an_indexers_load_makes_the_cache_once_and_a_questions_load_uses_it(cache: Path) -> None:
    quick = Embedder.load(128, threads=1, quick=True)  # no cache yet: the pinned file, as shipped
    assert quick.graph == installed_model_path()
    assert not cache.exists()  # a one-question process never writes 90 MB
    np.testing.assert_allclose(quick.embed(TEXTS), pinned_vectors(), atol=1e-6)

    many = Embedder.load(128)  # the indexer's, a server's: makes the folded graph
    assert many.graph is not None and many.graph.is_relative_to(cache)
    made = many.graph.stat().st_mtime_ns
    model._LOADED.clear()
    again = Embedder.load(128, threads=1, quick=True)
    assert again.graph == many.graph
    assert many.graph.stat().st_mtime_ns == made  # used, not made again
    assert np.array_equal(again.embed(TEXTS), pinned_vectors())  # the indexer's vectors
    assert [p.name for p in (cache / "models").iterdir()] == [many.graph.parent.name]


def _flip(path: Path, offset: int) -> None:
    with open(path, "r+b") as file:
        file.seek(offset)
        byte = file.read(1)
        file.seek(offset)
        file.write(bytes([byte[0] ^ 0xFF]))


def _truncate_weights(folder: Path) -> None:
    weights = folder / graph_cache.WEIGHTS_NAME
    weights.write_bytes(weights.read_bytes()[:1_000_000])


def _zero_a_sampled_block(folder: Path) -> None:
    weights = folder / graph_cache.WEIGHTS_NAME
    size = weights.stat().st_size
    with open(weights, "r+b") as file:
        file.seek(size // 64 * 10)  # the 11th of the sampled blocks
        file.write(bytes(4096))


def _change_the_graph(folder: Path) -> None:
    _flip(folder / graph_cache.GRAPH_NAME, 2000)


def _half_write_the_manifest(folder: Path) -> None:
    manifest = folder / graph_cache.MANIFEST_NAME
    manifest.write_text(manifest.read_text()[:50])


def _another_model(folder: Path) -> None:
    manifest = folder / graph_cache.MANIFEST_NAME
    fields = json.loads(manifest.read_text())
    fields["source_sha256"] = "0" * 64
    manifest.write_text(json.dumps(fields))


@pytest.mark.parametrize(
    "damage",
    [_truncate_weights, _zero_a_sampled_block, _change_the_graph, _half_write_the_manifest,
     _another_model],
)  # fmt: skip
def test_a_damaged_cache_is_never_loaded_and_the_next_indexer_replaces_it(
    folded: Path, damage
) -> None:
    damage(folded.parent)
    assert graph_cache.cached_graph(MODEL_SHA256, RUNTIME) is None
    assert not graph_cache.is_whole(folded.parent, MODEL_SHA256, RUNTIME)
    quick = Embedder.load(128, threads=1, quick=True)
    assert quick.graph == installed_model_path()  # the package's file, checked by its sha256
    np.testing.assert_allclose(quick.embed(TEXTS), pinned_vectors(), atol=1e-6)

    assert Embedder.load(128).graph == folded  # the indexer's load makes it whole again
    assert graph_cache.is_whole(folded.parent, MODEL_SHA256, RUNTIME)


def test_a_flipped_bit_the_samples_miss_is_found_by_doctor(folded: Path, tmp_path: Path) -> None:
    weights = folded.parent / graph_cache.WEIGHTS_NAME
    _flip(weights, weights.stat().st_size // 64 * 3 + 40_000)  # between two sampled blocks
    assert graph_cache.cached_graph(MODEL_SHA256, RUNTIME) == folded  # the cheap checks pass
    assert not graph_cache.is_whole(folded.parent, MODEL_SHA256, RUNTIME)
    root = tmp_path / "repo"
    root.mkdir()
    done = run_cli("doctor", "--root", root)
    assert "WARN  model cache" in done.stdout, done.stdout
    assert f"rm -r {folded.parent}" in done.stdout
    assert "Traceback" not in done.stderr


def test_doctor_passes_a_whole_cache_and_an_unmade_one(folded: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    done = run_cli("doctor", "--root", root, "--json")
    checks = {check["name"]: check for check in json.loads(done.stdout)["results"]}
    assert checks["model cache"]["outcome"] == "PASS"
    assert "whole" in checks["model cache"]["detail"]
    done = run_cli("doctor", "--root", root, "--json", env={"REPOMAP_CACHE_DIR": str(tmp_path / "none")})  # fmt: skip
    checks = {check["name"]: check for check in json.loads(done.stdout)["results"]}
    assert checks["model cache"]["outcome"] == "PASS"
    assert "not made yet" in checks["model cache"]["detail"]


def test_an_empty_cache_variable_turns_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPOMAP_CACHE_DIR", "")
    monkeypatch.setattr(model, "_LOADED", {})
    assert graph_cache.cache_root() is None
    assert graph_cache.make_graph(installed_model_path(), MODEL_SHA256) is None
    loaded = Embedder.load(128)  # folds in its own session, as before the cache
    assert loaded.graph == installed_model_path()
    assert np.array_equal(loaded.embed(TEXTS), pinned_vectors())


def test_a_cache_that_cannot_be_written_leaves_the_model_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    monkeypatch.setenv("REPOMAP_CACHE_DIR", str(blocked / "cache"))
    monkeypatch.setattr(model, "_LOADED", {})
    assert graph_cache.make_graph(installed_model_path(), MODEL_SHA256) is None
    assert Embedder.load(128).graph == installed_model_path()


def test_two_makers_at_once_leave_one_whole_folder(cache: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        made = list(pool.map(lambda _: graph_cache.make_graph(installed_model_path(), MODEL_SHA256), range(2)))  # fmt: skip
    assert made[0] is not None and made[0] == made[1]
    assert [p.name for p in (cache / "models").iterdir()] == [made[0].parent.name]
    assert graph_cache.is_whole(made[0].parent, MODEL_SHA256, RUNTIME)
