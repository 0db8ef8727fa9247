"""Cross-lingual reverse-dictionary retrieval: rank the target-language vocabulary by distance to an encoded
definition; P@k is the share of definitions whose word is among the k nearest, MRR the mean of 1 / rank."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def gold_ranks(queries: np.ndarray, candidates: np.ndarray, gold: np.ndarray, batch: int = 256) -> np.ndarray:
    """1-based rank of ``candidates[gold[i]]`` among all candidates by squared Euclidean distance to ``queries[i]``
    (the L2 loss's geometry). Ties count against the gold word: rank = 1 + #candidates at most as far, other than
    itself."""
    q = torch.from_numpy(np.ascontiguousarray(queries, dtype=np.float32))
    c = torch.from_numpy(np.ascontiguousarray(candidates, dtype=np.float32))
    g = torch.from_numpy(np.asarray(gold, dtype=np.int64))
    ranks = []
    for start in range(0, len(q), batch):
        distances = torch.cdist(q[start:start + batch], c).pow(2)
        own = distances.gather(1, g[start:start + batch, None])
        ranks.append((distances <= own).sum(1))
    return torch.cat(ranks).numpy() if ranks else np.zeros(0, dtype=np.int64)


def retrieval_scores(ranks: np.ndarray, ks: Sequence[int] = (1, 10)) -> dict[str, float]:
    """``{"p_at_1": ..., "p_at_10": ..., "mrr": ...}`` from 1-based ranks (P@k as fractions, not percentages;
    MLflow metric names allow no "@")."""
    ranks = np.asarray(ranks)
    if ranks.size == 0:
        raise ValueError("no ranks to score: the test set is empty")
    if ranks.min() < 1:
        raise ValueError(f"ranks are 1-based; got {int(ranks.min())}")
    scores = {f"p_at_{k}": float(np.mean(ranks <= k)) for k in ks}
    scores["mrr"] = float(np.mean(1.0 / ranks))
    return scores
