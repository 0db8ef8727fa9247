"""Correlation and similarity helpers shared by the evaluators."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

Encode = Callable[[list[str]], np.ndarray]


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson r; 0.0 when either side is constant (numpy would return nan)."""
    # numpy, not scipy.stats: importing scipy.stats costs every training worker ~1 s for the dev score of each epoch.
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.std() == 0 or y.std() == 0:
        return 0.0
    return float(np.clip(np.corrcoef(x, y)[0, 1], -1.0, 1.0))


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rho (Pearson r of the ranks, ties given their mean rank); 0.0 when either side is constant."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.std() == 0 or y.std() == 0:
        return 0.0
    return pearson(pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy())


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of each row of ``a`` with the same row of ``b``; 0 where a row is all zeros."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def encode_pairs(encode: Encode, sentences_a: Sequence[str], sentences_b: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Encode both sides of a pair list with one call over the distinct sentences (no sentence encoded twice)."""
    distinct = list(dict.fromkeys([*sentences_a, *sentences_b]))
    embeddings = np.asarray(encode(distinct))
    if embeddings.ndim != 2 or embeddings.shape[0] != len(distinct):
        raise ValueError(
            f"encode() must return one row per sentence: got shape {embeddings.shape} for {len(distinct)} sentences"
        )
    where = {sentence: i for i, sentence in enumerate(distinct)}
    return (embeddings[[where[s] for s in sentences_a]], embeddings[[where[s] for s in sentences_b]])


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (zero rows stay zero)."""
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
