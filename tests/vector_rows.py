"""Vectors shaped like embeddings of code, as store rows, for the vector store's tests."""

from __future__ import annotations

import numpy as np

from repomap.store.vectors import DIMENSIONS, VectorRecord

LANGUAGES = ("python", "rust", "cpp")
KINDS = ("function", "class", "method")


def clustered(count: int, seed: int = 0, clusters: int = 40) -> np.ndarray:
    """Unit vectors in loose clusters, as embeddings of code are (random ones are not)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIMENSIONS)).astype(np.float32)
    rows = centres[rng.integers(0, clusters, count)]
    rows = (rows + 0.6 * rng.standard_normal((count, DIMENSIONS))).astype(np.float32)
    result: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return result


def records(
    vectors: np.ndarray, first_id: int = 1, text: int = 0, modules: int = 97, kind_cycle: int = 7
) -> list[VectorRecord]:
    """Chunks first_id, first_id + 1, ...; `text` tells their texts (content hashes) apart;
    spread over `modules` files, the three languages and the three kinds."""
    return [
        VectorRecord(
            first_id + i,
            f"{text:032x}{first_id + i:032x}",
            f"pkg/module_{i % modules}.py",
            LANGUAGES[i % 3],
            KINDS[i % kind_cycle % 3],
            row,
        )
        for i, row in enumerate(vectors)
    ]
