"""J_bi and J_pa in closed form, on the CPU: a batch's loss and its gradient with respect to the batch's sentence
vectors without an autograd graph (what the kernel's fused static step, :class:`parabit.training.step.RowStep`, trains
with; everywhere else the objectives' ``forward`` runs through autograd).

Both objectives are sums of triplet hinges over the batch's ``2B`` vectors ``pool = [g1; g2]``::

    loss = 1/B · Σ_t [margin + d(pool[a_t], pool[p_t]) − d(pool[a_t], pool[n_t])]_+

J_bi (:class:`~parabit.objectives.bilingual_hinge.BilingualHingeLoss`) has ``2·B·k`` of them (each sentence against
the other side of k random pairs, its partner the positive), J_pa
(:class:`~parabit.objectives.paraphrase_margin.ParaphraseMarginLoss`) ``2·B`` (one chosen negative per sentence) with
the cosine distance ``1 − cos``, which is J_pa's similarity margin. An active hinge adds, with ``d`` the squared
Euclidean distance, ``2(n − p)``, ``2(p − a)``, ``2(a − n)`` (over B) to the gradients of its anchor, positive and
negative; with the cosine distance ``∂d(a, x)/∂a = −(x̂ − cos(a, x)·â) / ‖a‖`` (norms clamped at 1e-8, as
``F.cosine_similarity`` clamps them). One compiled pass (numba) over the triplets: as torch ops the same took ~40
small kernels per step. The two paths agree to float tolerance (``tests/objectives/test_triplet_hinge.py``).
"""

from __future__ import annotations

import numpy as np
import torch

from parabit.compiled import kernel

NORM_EPSILON = 1e-8  # F.cosine_similarity's clamp of each norm
DISTANCES = ("euclidean", "cosine")


def triplet_hinge(pool: torch.Tensor, negatives: np.ndarray, *, margin: float, distance: str,
                  batch_size: int) -> tuple[float, torch.Tensor]:
    """``(loss, gradient [2B, D])`` of the hinges of ``pool = [g1; g2]`` (float32, on the CPU): each sentence
    ``pool[i]`` is the anchor of ``k`` hinges, its partner ``pool[(i + B) % 2B]`` the positive and ``pool[j]`` for
    each ``j`` of ``negatives[i]`` (``[2B, k]``, int64) a negative; the loss is divided by ``batch_size`` (B).
    ``distance``: ``"euclidean"`` (squared) or ``"cosine"``."""
    if distance not in DISTANCES:
        raise ValueError(f"distance must be one of {', '.join(DISTANCES)}; got {distance!r}")
    points = pool.detach().contiguous().numpy()
    gradient = np.zeros_like(points)
    loss = _triplet_hinge(points, np.ascontiguousarray(negatives), float(margin), distance == "cosine", batch_size,
                          gradient)
    return loss, torch.from_numpy(gradient)


@kernel
def _triplet_hinge(pool, negatives, margin, cosine, batch_size, gradient):  # pragma: no cover - compiled
    if cosine:
        return _cosine_hinge(pool, negatives, margin, batch_size, gradient)
    return _euclidean_hinge(pool, negatives, margin, batch_size, gradient)


@kernel
def _euclidean_hinge(pool, negatives, margin, batch_size, gradient):  # pragma: no cover - compiled
    # Per anchor a with positive p: each active hinge with negative n adds 2(n - p) to a's gradient, 2(p - a) to
    # p's and 2(a - n) to n's (over B); the first two are summed over the anchor's active hinges before they are added.
    size, dim = pool.shape
    step = np.float32(2.0 / batch_size)
    active_sum = np.empty(dim, np.float32)
    loss = 0.0
    for i in range(size):
        a, p = pool[i], pool[(i + batch_size) % size]
        to_positive = np.float32(0.0)
        for d in range(dim):
            to_positive += (a[d] - p[d]) * (a[d] - p[d])
        active_sum[:] = 0.0
        active = 0
        for j in negatives[i]:
            n = pool[j]
            to_negative = np.float32(0.0)
            for d in range(dim):
                to_negative += (a[d] - n[d]) * (a[d] - n[d])
            hinge = margin + to_positive - to_negative
            if not hinge <= 0:  # a NaN hinge (inf - inf) makes the loss NaN, as relu(NaN) does: the guard sees it
                loss += hinge
            if hinge > 0:
                active += 1
                grad_n = gradient[j]
                for d in range(dim):  # one array written per loop: the loops vectorise without alias checks
                    active_sum[d] += n[d]
                for d in range(dim):
                    grad_n[d] += step * (a[d] - n[d])
        if active:
            grad_a, grad_p = gradient[i], gradient[(i + batch_size) % size]
            for d in range(dim):
                grad_a[d] += step * (active_sum[d] - active * p[d])
            for d in range(dim):
                grad_p[d] += step * active * (p[d] - a[d])
    return loss / batch_size


@kernel
def _cosine_hinge(pool, negatives, margin, batch_size, gradient):  # pragma: no cover - compiled
    # d = 1 - cos: a hinge is margin - cos(a, p) + cos(a, n); with unit vectors â and 1/norm factors below.
    size, dim = pool.shape
    points = np.empty_like(pool)
    scales = np.empty(size, np.float32)  # 1 / (B · norm)
    for i in range(size):
        norm = np.float32(0.0)
        for d in range(dim):
            norm += pool[i, d] * pool[i, d]
        norm = max(np.sqrt(norm), np.float32(NORM_EPSILON))
        for d in range(dim):
            points[i, d] = pool[i, d] / norm
        scales[i] = np.float32(1.0) / (norm * np.float32(batch_size))
    loss = 0.0
    for i in range(size):
        partner = (i + batch_size) % size
        a, p = points[i], points[partner]
        to_positive = np.float32(0.0)  # cos(a, p)
        for d in range(dim):
            to_positive += a[d] * p[d]
        for j in negatives[i]:
            n = points[j]
            to_negative = np.float32(0.0)  # cos(a, n)
            for d in range(dim):
                to_negative += a[d] * n[d]
            hinge = margin - to_positive + to_negative
            if not hinge <= 0:  # NaN too, as relu(NaN)
                loss += hinge
            if hinge > 0:
                grad_a, grad_p, grad_n = gradient[i], gradient[partner], gradient[j]
                scale_a, scale_p, scale_n = scales[i], scales[partner], scales[j]
                for d in range(dim):  # one array written per loop: the loops vectorise without alias checks
                    grad_a[d] += scale_a * (n[d] - to_negative * a[d] - p[d] + to_positive * a[d])
                for d in range(dim):
                    grad_p[d] -= scale_p * (a[d] - to_positive * p[d])
                for d in range(dim):
                    grad_n[d] += scale_n * (a[d] - to_negative * n[d])
    return loss / batch_size
