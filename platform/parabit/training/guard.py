"""The divergence guard: a loss, gradient or weight that becomes NaN or infinite stops training at that step.

Checked every step, cheaply: the loss (already read for the epoch's mean), each gradient (for a row-sparse word table
only the rows the step touched), and after the optimiser step each dense weight and the touched rows of each sparse
table. With several workers the verdict is agreed over the process group, so every worker stops at the same step.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

DIVERGENCE_FILE = "divergence.json"


class RunStopped(RuntimeError):
    """A run (or a sweep) that stopped for a reason its message states, with what to do next: the command-line
    reports it as one line and exit code 1, not as a traceback."""


class TrainingDiverged(RunStopped):
    """Training produced a non-finite value; the message names the epoch, step and tensor, and what to change."""


@dataclass(frozen=True)
class Divergence:
    """Where training went non-finite: epoch and step (1-based) and which tensor."""

    epoch: int
    step: int
    tensor: str

    def message(self, run: str) -> str:
        return (f"training run {run} diverged at epoch {self.epoch}, step {self.step}: {self.tensor} is not finite; "
                "the last good checkpoint is kept and no model is registered (lower optim.lr, set optim.clip_norm, "
                "or check the data)")

    def save(self, run_directory: Path) -> None:
        run_directory.mkdir(parents=True, exist_ok=True)
        (run_directory / DIVERGENCE_FILE).write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, run_directory: Path) -> "Divergence | None":
        path = run_directory / DIVERGENCE_FILE
        return cls(**json.loads(path.read_text())) if path.is_file() else None


class DivergenceGuard:
    """``before_update(loss)`` after backward (and the gradient exchange), ``after_update()`` after the optimiser
    step; each returns the name of the first non-finite tensor, or None.

    Gradients and weights are the same on every worker after the exchange, so their verdicts agree by themselves;
    the loss is each worker's own, so with ``distributed`` the pre-update verdict is agreed over the process group
    (one one-element all-reduce per step) and every worker stops at the same step."""

    def __init__(self, module: nn.Module, distributed: bool):
        self.named = [(name, p) for name, p in module.named_parameters() if p.requires_grad]
        self.distributed = distributed
        self._touched: dict[str, torch.Tensor] = {}

    def before_update(self, loss: float) -> str | None:
        found = None if math.isfinite(loss) else "the loss"
        self._touched = {}
        for name, parameter in self.named:
            grad = parameter.grad
            if grad is None:
                continue
            if grad.is_sparse:
                grad = grad.coalesce()
                self._touched[name] = grad.indices()[0]
                values = grad.values()
            else:
                values = grad
            if found is None and not bool(torch.isfinite(values).all()):
                found = f"the gradient of {name}"
        return self._agree(found)

    def after_update(self) -> str | None:
        for name, parameter in self.named:
            rows = self._touched.get(name)
            values = parameter.detach() if rows is None else parameter.detach().index_select(0, rows)
            if not bool(torch.isfinite(values).all()):
                return f"the weight {name}"
        return None

    def _agree(self, found: str | None) -> str | None:
        if not self.distributed:
            return found
        flag = torch.tensor([0.0 if found is None else 1.0])
        if torch.distributed.get_backend() == "nccl":
            flag = flag.cuda()
        torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
        if found is None and float(flag) > 0:
            return "a value on another worker"
        return found
