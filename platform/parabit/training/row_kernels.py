"""The fused static step's work on the rows of a word table: the rows' gradient from the sentences' (plus a row
penalty) and the optimiser's update of those rows, as compiled loops (numba) on the CPU and as torch ops elsewhere.

Why compiled: a step at batch 50 touches ~480 distinct rows of 300 floats. As torch ops, each of the ~15 passes over
those rows (gather the rows, gather the optimiser state, square, add, write back, square root, divide, scatter the
change, the penalty's passes) is a kernel launch with its own temporary, and on 2 cores each cost 40–200 µs: the
step is dispatch and memory traffic, not arithmetic. Here each row is read once, its gradient summed in a small
buffer, its state and value updated and written back while they are in cache: the same arithmetic in float32, in
the same order per element as torch's sparse optimisers (results agree to float rounding; how they are compiled:
:mod:`parabit.compiled`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numba
import numpy as np
import torch

from parabit.compiled import OPTIONS, kernel, prefetch_row
from parabit.encoders.row_bags import RowBags

_NO_ROWS = np.zeros((0, 0), dtype=np.float32)
_NO_SCALE = np.zeros(0, dtype=np.float32)
AHEAD = 4  # rows prefetched ahead of the one being updated


@kernel
def _row_gradient(row_offsets, row_sentences, row_scale, sentence_gradient, out):  # pragma: no cover - compiled
    count, dim = out.shape
    tokens = row_sentences.shape[0]
    scaled = row_scale.shape[0] > 0
    for u in range(count):
        end = row_offsets[u + 1] if u + 1 < count else tokens
        row = out[u]
        row[:] = 0.0
        for t in range(row_offsets[u], end):
            sentence = sentence_gradient[row_sentences[t]]
            factor = row_scale[t] if scaled else np.float32(1.0)
            for d in range(dim):
                row[d] += factor * sentence[d]


@numba.njit(**OPTIONS, inline="always")
def _penalised(table, centre, row, gradient, scale, out):  # pragma: no cover - compiled
    """``out = gradient + 2·scale·(table[row] − centre[row])`` (centre empty: 0); returns the row's penalty."""
    weights = table[row]
    if scale == 0.0:
        out[:] = gradient
        return 0.0
    penalty = np.float32(0.0)
    twice = np.float32(2.0 * scale)
    if centre.shape[0] > 0:
        origin = centre[row]
        for d in range(weights.shape[0]):
            difference = weights[d] - origin[d]
            penalty += difference * difference
            out[d] = gradient[d] + twice * difference
    else:
        for d in range(weights.shape[0]):
            penalty += weights[d] * weights[d]
            out[d] = gradient[d] + twice * weights[d]
    return scale * penalty


@kernel
def _add_penalty(table, centre, rows, gradient, scale):  # pragma: no cover - compiled
    penalty = 0.0
    buffer = np.empty(gradient.shape[1], np.float32)
    for u in range(rows.shape[0]):
        penalty += _penalised(table, centre, rows[u], gradient[u], scale, buffer)
        gradient[u] = buffer
    return penalty


@kernel
def _adagrad(table, sums, rows, gradient, rate, eps, scale, centre):  # pragma: no cover - compiled
    count, dim = gradient.shape
    g = np.empty(dim, np.float32)
    penalty, probe = 0.0, np.float32(0.0)  # probe: 0 unless a written value is NaN or inf (then x * 0 is NaN)
    step, epsilon = np.float32(-rate), np.float32(eps)
    for u in range(count):
        if u + AHEAD < count:
            prefetch_row(table, rows[u + AHEAD])
            prefetch_row(sums, rows[u + AHEAD])
        row = rows[u]
        penalty += _penalised(table, centre, row, gradient[u], scale, g)
        total, weights = sums[row], table[row]
        for d in range(dim):
            total[d] += g[d] * g[d]
        for d in range(dim):
            weights[d] += step * (g[d] / (np.sqrt(total[d]) + epsilon))
            probe += weights[d] * np.float32(0.0)
    return penalty, probe == 0.0


@kernel
def _sgd(table, rows, gradient, rate, scale, centre):  # pragma: no cover - compiled
    count, dim = gradient.shape
    g = np.empty(dim, np.float32)
    penalty, probe = 0.0, np.float32(0.0)
    step = np.float32(-rate)
    for u in range(count):
        if u + AHEAD < count:
            prefetch_row(table, rows[u + AHEAD])
        row = rows[u]
        penalty += _penalised(table, centre, row, gradient[u], scale, g)
        weights = table[row]
        for d in range(dim):
            weights[d] += step * g[d]
            probe += weights[d] * np.float32(0.0)
    return penalty, probe == 0.0


@kernel
def _adam(table, moments, rows, gradient, step_size, beta1, beta2, eps, scale, centre):  # pragma: no cover
    count, dim = gradient.shape
    g = np.empty(dim, np.float32)
    penalty, probe = 0.0, np.float32(0.0)
    keep1, keep2, decay2 = np.float32(1.0 - beta1), np.float32(1.0 - beta2), np.float32(beta2)
    step, epsilon = np.float32(-step_size), np.float32(eps)
    for u in range(count):
        if u + AHEAD < count:
            prefetch_row(table, rows[u + AHEAD])
            prefetch_row(moments[rows[u + AHEAD]], 0)
            prefetch_row(moments[rows[u + AHEAD]], 1)
        row = rows[u]
        penalty += _penalised(table, centre, row, gradient[u], scale, g)
        first, second, weights = moments[row, 0], moments[row, 1], table[row]
        for d in range(dim):
            first[d] += keep1 * (g[d] - first[d])
        for d in range(dim):
            second[d] = second[d] * decay2 + keep2 * (g[d] * g[d])
        for d in range(dim):
            weights[d] += (first[d] / (np.sqrt(second[d]) + epsilon)) * step
            probe += weights[d] * np.float32(0.0)
    return penalty, probe == 0.0


def _compiled(*tensors: torch.Tensor) -> bool:
    """Whether the compiled loops can run on these tensors: float32 on the CPU, rows contiguous."""
    return all(t.device.type == "cpu" and t.dtype == torch.float32 and t.is_contiguous() for t in tensors)


def _array(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().numpy()


def row_gradient(bags: RowBags, sentence_gradient: torch.Tensor) -> torch.Tensor:
    """``[U, D]``, the gradient at ``bags.rows`` (CPU, float32): row ``u`` sums ``row_scale[t] ·
    sentence_gradient[row_sentences[t]]`` over its tokens ``t`` (:class:`~parabit.encoders.row_bags.RowBags`)."""
    gradient = sentence_gradient.new_empty((len(bags.rows), sentence_gradient.shape[1]))
    _row_gradient(_array(bags.row_offsets), _array(bags.row_sentences),
                  _NO_SCALE if bags.row_scale is None else _array(bags.row_scale),
                  _array(sentence_gradient.contiguous()), _array(gradient))
    return gradient


def add_penalty(table: torch.Tensor, rows: torch.Tensor, gradient: torch.Tensor, scale: float,
                centre: torch.Tensor | None = None) -> float:
    """Add to ``gradient [U, D]`` (at ``rows``, in place) the gradient of the row penalty ``scale · ‖table[rows] −
    centre[rows]‖²`` (``centre`` None: zero); returns the penalty."""
    return _add_penalty(_array(table), _NO_ROWS if centre is None else _array(centre), _array(rows),
                        _array(gradient), float(scale))


def adagrad_rows(table: torch.Tensor, sums: torch.Tensor, rows: torch.Tensor, gradient: torch.Tensor, rate: float,
                 eps: float, penalty_scale: float = 0.0, centre: torch.Tensor | None = None) -> tuple[float, bool]:
    """AdaGrad at ``rows`` in place (``torch.optim.Adagrad``'s sparse update: ``sums += g²``, ``table −= rate · g /
    (√sums + eps)``), ``g`` being ``gradient`` plus the row penalty's (as :func:`add_penalty`). Returns the penalty
    and whether every updated value is finite."""
    return _adagrad(_array(table), _array(sums), _array(rows), _array(gradient), float(rate), float(eps),
                    float(penalty_scale), _NO_ROWS if centre is None else _array(centre))


def sgd_rows(table: torch.Tensor, rows: torch.Tensor, gradient: torch.Tensor, rate: float, penalty_scale: float = 0.0,
             centre: torch.Tensor | None = None) -> tuple[float, bool]:
    """Plain SGD at ``rows`` in place (``table −= rate · g``), as :func:`adagrad_rows`."""
    return _sgd(_array(table), _array(rows), _array(gradient), float(rate), float(penalty_scale),
                _NO_ROWS if centre is None else _array(centre))


def adam_rows(table: torch.Tensor, moments: torch.Tensor, rows: torch.Tensor, gradient: torch.Tensor, *,
              lr: float, betas: tuple[float, float], eps: float, step: int, penalty_scale: float = 0.0,
              centre: torch.Tensor | None = None) -> tuple[float, bool]:
    """Adam at ``rows`` in place (step ``step``, counted from 1): both moments (``moments [V, 2, D]``) and the row
    updated as :class:`~parabit.training.row_sparse_adam.RowSparseAdam` updates them, as :func:`adagrad_rows`.
    Tensors off the CPU (a GPU's) take torch ops, without a penalty, and report nothing about finiteness."""
    beta1, beta2 = betas
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    if _compiled(table, moments, gradient) and table.dim() == 2:
        return _adam(_array(table), _array(moments), _array(rows), _array(gradient), float(step_size), float(beta1),
                     float(beta2), float(eps), float(penalty_scale), _NO_ROWS if centre is None else _array(centre))
    if penalty_scale:
        raise ValueError("adam_rows: a row penalty is applied by the compiled update only (CPU, float32)")
    touched = moments.index_select(0, rows)  # [n, 2, *row_shape]; views below write into it
    exp_avg, exp_avg_sq = touched[:, 0], touched[:, 1]
    exp_avg.lerp_(gradient, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(gradient, gradient, value=1 - beta2)
    moments.index_copy_(0, rows, touched)
    change = exp_avg_sq.sqrt_().add_(eps)  # the squared moment is already stored: reuse its buffer
    torch.div(exp_avg, change, out=change).mul_(-step_size)
    table.detach().index_add_(0, rows, change)
    return 0.0, True


def warm_up(updates: Iterable[str] = ("adagrad", "sgd", "adam")) -> None:
    """Load (or compile) the row gradient, the penalty and the ``updates`` loops (``adagrad``, ``sgd``, ``adam``)
    now, on throwaway rows: the first call of each costs up to a second (several where no cache is kept, as in a
    job's freshly unpacked code), which a run pays at start-up rather than inside its first epoch's throughput."""
    table, state, moments = np.ones((2, 1), np.float32), np.ones((2, 1), np.float32), np.ones((2, 2, 1), np.float32)
    rows, gradient = np.zeros(1, np.int64), np.ones((1, 1), np.float32)
    _row_gradient(np.zeros(1, np.int64), np.zeros(1, np.int64), _NO_SCALE, gradient, np.empty_like(gradient))
    _add_penalty(table, _NO_ROWS, rows, gradient.copy(), 0.5)
    updates = set(updates)
    if "adagrad" in updates:
        _adagrad(table, state, rows, gradient, 0.1, 1e-10, 0.0, _NO_ROWS)
    if "sgd" in updates:
        _sgd(table, rows, gradient, 0.1, 0.0, _NO_ROWS)
    if "adam" in updates:
        _adam(table, moments, rows, gradient, 0.1, 0.9, 0.999, 1e-8, 0.0, _NO_ROWS)
