"""Reductions over the time axis that see only real tokens.

Each takes ``values: FloatTensor[B, T, D]`` and ``mask: BoolTensor[B, T]`` (True at real tokens, at least
one per row) and returns FloatTensor[B, D]. Padding is removed with ``masked_fill`` rather than by
multiplying with the mask, so even a NaN or inf at a padding position cannot reach the result.
"""

from __future__ import annotations

import torch


def masked_sum(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sum over real positions."""
    return values.masked_fill(~mask.unsqueeze(-1), 0.0).sum(dim=1)


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over real positions."""
    counts = mask.sum(dim=1, keepdim=True).clamp(min=1).to(values.dtype)
    return masked_sum(values, mask) / counts


def masked_max(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Element-wise maximum over real positions (padding set to -inf before the max)."""
    return values.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)


POOLINGS = {"sum": masked_sum, "mean": masked_mean, "max": masked_max}


def pooling_function(name: str, allowed: tuple[str, ...]):
    """The reduction called ``name``, which must be one of ``allowed`` (the encoder's choices)."""
    if name not in allowed:
        raise ValueError(f"pooling must be one of {', '.join(allowed)}; got {name!r}")
    return POOLINGS[name]
