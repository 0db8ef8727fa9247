"""A batch of sentences as bags of word-table rows: what a training step needs to encode them with an averaging
encoder and to send the sentences' gradient back to the distinct rows they read, without autograd (the kernel's fused
static step, :class:`parabit.training.step.RowStep`).

Built by one compiled pass (numba) over the batch's padded ids on the CPU: each real token's row, its sentence and
factor, the sentence sums, and the same tokens grouped by row (a stable sort). As torch ops this took ~15 small kernels
(masks, ``nonzero``, ``unique``, ``embedding_bag``), each with its own temporary: most of a step's time at batch 25.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from parabit.compiled import kernel, prefetch_row
from parabit.encoders.base import PAD_ID


@dataclass
class RowBags:
    """``tokens [T]``: the row of each real token (PAD left out), sentence after sentence; ``offsets [S]``: where each
    sentence starts; ``scale [T]``: each token's factor in its sentence's vector (its word weight, divided by the
    sentence's length for the mean; None when every token counts once, the unweighted sum); ``sums [S, D]``: the
    sentences' scaled sums of their rows. The same tokens grouped by row: ``rows [U]`` the distinct rows (sorted),
    ``row_offsets [U]`` where each row's tokens start, ``row_sentences [T]`` and ``row_scale [T]`` each token's
    sentence and factor in that order."""

    tokens: torch.Tensor
    offsets: torch.Tensor
    scale: torch.Tensor | None
    sums: torch.Tensor
    rows: torch.Tensor
    row_offsets: torch.Tensor
    row_sentences: torch.Tensor
    row_scale: torch.Tensor | None


NO_WEIGHTS = np.zeros(0, dtype=np.float32)
AHEAD = 8  # tokens whose rows are prefetched ahead of the one being summed


def row_bags(first: tuple[torch.Tensor, torch.Tensor], second: tuple[torch.Tensor, torch.Tensor], table: torch.Tensor,
             *, mean: bool, weights: torch.Tensor | None = None) -> RowBags:
    """The sentences of ``first`` and then of ``second`` (each ``(ids [B, T], lengths [B])``, on the CPU) as
    :class:`RowBags` over ``table [V, D]`` (float32, on the CPU). ``mean``: divide by the sentence's length (with
    ``weights``) or its number of real tokens (without), as :class:`~parabit.encoders.avg.AvgEncoder` does;
    ``weights [V]``: fixed per-word factors. A length outside ``[1, T]`` raises ValueError."""
    scaled = weights is not None or mean
    # Contiguous copies (a batch's ids are usually a trimmed view): one compiled signature for every batch, not one
    # per layout, each loaded from the cache the first time a run meets it.
    arrays = tuple(np.ascontiguousarray(tensor.numpy()) for tensor in (*first, *second))
    try:
        parts = _bags(*arrays, table.detach().numpy(),
                      NO_WEIGHTS if weights is None else weights.detach().to(torch.float32).numpy(), mean, scaled)
    except ValueError:
        lengths = [first[1], second[1]]
        raise ValueError(f"every length must be in [1, T] (the padded width); got min "
                         f"{min(int(side.min()) for side in lengths)}, max {max(int(side.max()) for side in lengths)} "
                         f"for widths {first[0].shape[1]} and {second[0].shape[1]}") from None
    tokens, offsets, scale, sums, rows, row_offsets, row_sentences, row_scale = map(torch.from_numpy, parts)
    return RowBags(tokens, offsets, scale if scaled else None, sums, rows, row_offsets, row_sentences,
                   row_scale if scaled else None)


@kernel
def _bags(ids_a, lengths_a, ids_b, lengths_b, table, weights, mean, scaled):  # pragma: no cover - compiled
    first = lengths_a.shape[0]
    sentences = first + lengths_b.shape[0]
    dim = table.shape[1]
    counts = np.zeros(sentences, np.int64)
    lengths = np.empty(sentences, np.int64)
    for s in range(sentences):
        ids = ids_a if s < first else ids_b
        lengths[s] = lengths_a[s] if s < first else lengths_b[s - first]
        if lengths[s] < 1 or lengths[s] > ids.shape[1]:
            raise ValueError("a length outside [1, T]")
        for p in range(lengths[s]):
            if ids[s if s < first else s - first, p] != PAD_ID:
                counts[s] += 1
    total = counts.sum()
    tokens = np.empty(total, np.int64)
    sentence_of = np.empty(total, np.int64)
    scale = np.ones(total, np.float32)
    offsets = np.empty(sentences, np.int64)
    sums = np.zeros((sentences, dim), np.float32)
    t = 0
    for s in range(sentences):
        offsets[s] = t
        ids, row = (ids_a, s) if s < first else (ids_b, s - first)
        for p in range(lengths[s]):
            word = ids[row, p]
            if word == PAD_ID:
                continue
            tokens[t] = word
            sentence_of[t] = s
            if scaled:
                factor = weights[word] if weights.shape[0] > 0 else np.float32(1.0)
                if mean:  # weighted sums by the length, as pool() divides them; plain means by the tokens summed
                    factor = factor / np.float32(lengths[s] if weights.shape[0] > 0 else max(counts[s], 1))
                scale[t] = factor
            t += 1
    for t in range(total):
        if t + AHEAD < total:
            prefetch_row(table, tokens[t + AHEAD])
        row, into, factor = table[tokens[t]], sums[sentence_of[t]], scale[t]
        for d in range(dim):
            into[d] += factor * row[d]
    order = np.argsort(tokens, kind="mergesort")
    distinct = 0
    for i in range(total):
        if i == 0 or tokens[order[i]] != tokens[order[i - 1]]:
            distinct += 1
    rows = np.empty(distinct, np.int64)
    row_offsets = np.empty(distinct, np.int64)
    u = -1
    for i in range(total):
        if i == 0 or tokens[order[i]] != tokens[order[i - 1]]:
            u += 1
            rows[u] = tokens[order[i]]
            row_offsets[u] = i
    return tokens, offsets, scale, sums, rows, row_offsets, sentence_of[order], scale[order]
