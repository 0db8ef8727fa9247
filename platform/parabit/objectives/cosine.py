"""Cosine similarities of every vector of one set with every vector of another, in float32 whatever autocast is on.

Selection and softmax need the precision: under bfloat16 autocast (8 bits of mantissa, steps of 2^-8 near 1) the
cosines of near neighbours tie, so an ``argmax`` picks the lowest index among them, and logits divided by a small
temperature (0.05) are off by up to ~0.08 each. Both are cheap in float32: one [N, D] x [D, M] product.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def cosine_matrix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """FloatTensor[N, M]: ``cos(a[i], b[j])`` for ``a [N, D]``, ``b [M, D]``, computed in float32 with autocast off
    (differentiable: gradients reach ``a`` and ``b`` in their own dtype)."""
    with torch.autocast(a.device.type, enabled=False):
        return F.normalize(a.float(), dim=-1) @ F.normalize(b.float(), dim=-1).T
