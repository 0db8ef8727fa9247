"""The learning-rate schedule (``optim.warmup_steps``, ``optim.schedule``): linear warm-up from 0, then constant or a
linear decay to 0 at the run's end, as Hugging Face's ``get_linear_schedule_with_warmup`` (what sentence-transformers
fine-tunes with) and ``get_constant_schedule_with_warmup`` do.

The rate is a pure function of the global optimiser step (epoch × steps per epoch + step in the epoch), written into
every optimiser's param groups before each step: no scheduler state, so a run resumed from a checkpoint steps at
exactly the rates an uninterrupted one does (the rate a checkpointed optimiser carries is overwritten before it is
used). Without a schedule (``constant``, no warm-up) nothing touches the rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from parabit.training.config import OptimConfig


@dataclass(frozen=True)
class LrSchedule:
    """``lr`` at its peak, ``warmup_steps``, ``decay`` (linear to 0 at ``total_steps``, else constant)."""

    lr: float
    warmup_steps: int
    decay: bool
    total_steps: int

    @classmethod
    def of(cls, optim: OptimConfig, steps_per_epoch: int) -> LrSchedule | None:
        """The schedule of a run of ``optim.epochs`` epochs of ``steps_per_epoch`` optimiser steps; None when it has
        none (the optimisers keep ``optim.lr`` untouched)."""
        if optim.schedule == "constant" and not optim.warmup_steps:
            return None
        return cls(optim.lr, optim.warmup_steps, optim.schedule == "linear", optim.epochs * steps_per_epoch)

    def factor(self, step: int) -> float:
        """The share of ``lr`` at (0-based, global) optimiser step ``step``: ``step / warmup_steps`` during the
        warm-up (0 at the first step), then 1, or with ``decay`` ``(total_steps − step) / (total_steps −
        warmup_steps)``, which reaches 0 at ``total_steps`` (the step after the run's last)."""
        if step < self.warmup_steps:
            return step / self.warmup_steps
        if not self.decay:
            return 1.0
        return max(0.0, (self.total_steps - step) / max(1, self.total_steps - self.warmup_steps))

    def rate(self, step: int) -> float:
        """The learning rate of (0-based, global) optimiser step ``step``."""
        return self.lr * self.factor(step)

    def apply(self, optimizers: Sequence[torch.optim.Optimizer], step: int) -> None:
        """Set every param group of ``optimizers`` to the rate of step ``step``, before that step (the fused row
        step reads it from the group as ``optimizer.step()`` does)."""
        rate = self.rate(step)
        for optimizer in optimizers:
            for group in optimizer.param_groups:
                group["lr"] = rate
