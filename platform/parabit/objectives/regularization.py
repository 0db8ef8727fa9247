"""L2 regularisers, kept out of the losses so the trainer decides what is penalised and how often.

Each is an ``nn.Module`` called as ``regularizer(parameter, rows=None) -> scalar``.

Why ``rows``: the word table of AVG / linear BOW can hold millions of rows and is trained with sparse
gradients (``nn.Embedding(sparse=True)`` + SparseAdam/Adagrad), so a step costs only the rows the batch
used. A dense penalty ``lambda/2 ||W||^2`` has gradient ``lambda W`` on *every* row: the table's gradient
turns dense, every step reads and writes all 2M x dim entries (SparseAdam refuses it outright), and the
point of the sparse table is gone. With ``rows`` given, only those rows are penalised, gathered through
``F.embedding(rows, W, sparse=True)`` so the penalty's gradient is itself sparse over ``rows``. The
trainer passes the rows the batch touched (:func:`parabit.encoders.touched_rows`, distinct ids, PAD
excluded), which makes the penalty "lazy": a word is pulled towards 0 (or its initial vector) in the steps
where it occurs. For dense parameters (LSTM weights, projections) leave ``rows=None``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def selected_rows(parameter: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
    """``parameter`` itself, or its ``rows`` (LongTensor[R] of distinct row ids) with a sparse gradient."""
    return parameter if rows is None else F.embedding(rows, parameter, sparse=True)


class L2Regularizer(nn.Module):
    """``weight / 2 * ||W||_F^2`` over all of ``W``, or over ``W[rows]`` only (see the module docstring)."""

    def __init__(self, weight: float):
        super().__init__()
        self.weight = float(weight)

    def forward(self, parameter: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        return 0.5 * self.weight * selected_rows(parameter, rows).pow(2).sum()

    def row_penalty(self) -> tuple[float, torch.Tensor | None]:
        """``(scale, centre)`` such that ``forward(W, rows) = scale · ‖W[rows] − centre[rows]‖²`` (centre None: 0)."""
        return 0.5 * self.weight, None


class L2ToInitRegularizer(nn.Module):
    """``weight * ||W - W_init||_F^2`` (the J_pa word-table term of Wieting et al.), optionally over ``rows``.

    ``initial``: the starting values of ``W`` (same shape), copied and detached; held as a non-persistent
    buffer so it follows ``.to(device)`` but is not written into checkpoints (it is rebuilt from the
    pretrained vectors, and would double a checkpoint's size).
    """

    def __init__(self, weight: float, initial: torch.Tensor):
        super().__init__()
        self.weight = float(weight)
        self.register_buffer("initial", initial.detach().clone(), persistent=False)

    def forward(self, parameter: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        if parameter.shape != self.initial.shape:
            raise ValueError(f"parameter has shape {tuple(parameter.shape)}, initial {tuple(self.initial.shape)}")
        initial = self.initial if rows is None else self.initial[rows]
        return self.weight * (selected_rows(parameter, rows) - initial).pow(2).sum()

    def row_penalty(self) -> tuple[float, torch.Tensor | None]:
        """``(scale, centre)`` such that ``forward(W, rows) = scale · ‖W[rows] − centre[rows]‖²``."""
        return self.weight, self.initial
