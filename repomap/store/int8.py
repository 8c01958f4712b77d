"""How a vector is stored since schema v17: int8, scaled per vector (numpy only, so the
migration that converts float16 rows, store/migrate.py, can use it without the store)."""

from __future__ import annotations

import numpy as np

VECTOR_DTYPE = np.dtype("i1")
_PEAK = 127


def int8_rows(vectors: np.ndarray, dimensions: int) -> np.ndarray:
    """`vectors` (n, dimensions) as stored: int8, each row scaled on its own so that its largest
    component is +-127, then rounded (symmetric quantization; 384 bytes a vector, float16 took
    768). The scale is not kept: every vector is used as a direction (a cosine), and
    `inverse_norms` gives each row its length back exactly from the integers themselves."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != dimensions:
        raise ValueError(f"expected vectors of {dimensions} dimensions, got shape {matrix.shape}")
    peaks = np.max(np.abs(matrix), axis=1, keepdims=True)
    if not np.all(np.isfinite(peaks)) or np.any(peaks == 0):
        raise ValueError("a vector is zero or not finite")
    scaled = np.rint(matrix * (np.float32(_PEAK) / peaks))
    rows: np.ndarray = np.clip(scaled, -_PEAK, _PEAK).astype(VECTOR_DTYPE)
    return rows
