"""The divergence guard: a loss, gradient or weight that becomes NaN or infinite stops training, naming the step.

Checked every step on the device, where the values are: the loss, each gradient (for a row-sparse word table only
the rows the step touched) and, after the optimiser step, each dense weight and the touched rows of each sparse
table. The host reads the verdicts every ``CHECK_EVERY_STEPS`` steps and at the end of each epoch, in one read: on a
GPU it would otherwise wait for the device once per tensor per step. A step past a non-finite one is wasted work,
never a result: the run stops at the read, no checkpoint holds those steps, and the message names the first step
and tensor that went non-finite. With several workers the verdicts are agreed over the process group at each read,
so every worker stops together.
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


# Steps between two reads of the guard's verdicts (and the last step of an epoch): at most this many steps are
# trained past a non-finite value before the run stops.
CHECK_EVERY_STEPS = 32


class DivergenceGuard:
    """``before_update(loss)`` after backward (and the gradient exchange), ``after_update()`` after the optimiser
    step: both only queue their checks on the device. ``problem()`` reads the checks of the steps since its last call
    (one host read): ``(n, name)`` for the first of them (``n``: 0-based, in that order) with a non-finite tensor and
    the first such tensor, or None.

    Gradients and weights are the same on every worker after the exchange, so their checks agree by themselves; the
    loss is each worker's own, so with ``distributed`` the checks are agreed over the process group (one all-reduce
    per read) and every worker finds the same step; a worker whose own values were finite names "a value on
    another worker"."""

    def __init__(self, module: nn.Module, distributed: bool):
        self.named = [(name, p) for name, p in module.named_parameters() if p.requires_grad]
        self.names = ["the loss", *(f"the gradient of {name}" for name, _ in self.named),
                      *(f"the weight {name}" for name, _ in self.named)]
        self.distributed = distributed
        self._touched: dict[str, torch.Tensor] = {}
        self._before: torch.Tensor | None = None
        self._steps: list[torch.Tensor] = []  # per step since the last read: is each of ``names`` non-finite

    def before_update(self, loss: torch.Tensor) -> None:
        bad = [non_finite(loss.detach())]
        self._touched = {}
        for name, parameter in self.named:
            grad = parameter.grad
            if grad is None:
                bad.append(torch.zeros((), dtype=torch.bool, device=parameter.device))
                continue
            if grad.is_sparse:
                # Uncoalesced: coalescing would make the host wait for the number of rows; a row repeated is only
                # checked twice. (The exchange and RowSparseAdam coalesce where the sums matter.)
                self._touched[name] = grad._indices()[0]
                grad = grad._values()
            bad.append(non_finite(grad))
        self._before = torch.stack(bad)

    def after_update(self) -> None:
        bad = []
        for name, parameter in self.named:
            rows = self._touched.get(name)
            values = parameter.detach() if rows is None else parameter.detach().index_select(0, rows)
            bad.append(non_finite(values))
        self._steps.append(torch.cat([self._before, torch.stack(bad)]) if bad else self._before)

    def problem(self) -> tuple[int, str] | None:
        if not self._steps:
            return None
        flags = torch.stack(self._steps).to(torch.uint8)  # [steps, names]
        self._steps = []
        return first_problem(flags, self.names, self.distributed)


def non_finite(values: torch.Tensor) -> torch.Tensor:
    """Whether ``values`` hold a NaN or an infinity, as a 0-d bool tensor on their device: their sum is not finite.
    One pass with no mask of the tensor's size (a 36,132 × 50 word table, each step, for its gradient and its
    weight: 0.35 ms against 8.9 ms for ``isfinite().all()``). A sum of finite values that overflows counts too:
    values whose sum passes the dtype's largest (3.4e38 in float32) are a diverged run as much as an infinity is."""
    return ~torch.isfinite(values.sum())


class RowGuard:
    """The fused step's guard (:class:`parabit.training.step.RowStep`, on the CPU): ``after_step(loss, rows_finite)``
    notes whether the step's loss (a float) is finite and whether every row the step wrote is finite (the compiled update checks each value as it writes
    it); ``problem()`` as :class:`DivergenceGuard`'s. The gradient is not checked by itself: a non-finite gradient
    makes a non-finite row, found in the same step."""

    def __init__(self, table_name: str, distributed: bool):
        self.names = ["the loss", f"the weight {table_name}"]
        self.distributed = distributed
        self._flags: list[tuple[bool, bool]] = []

    def after_step(self, loss: float, rows_finite: bool) -> None:
        self._flags.append((not math.isfinite(loss), not rows_finite))

    def problem(self) -> tuple[int, str] | None:
        if not self._flags:
            return None
        flags = torch.tensor(self._flags, dtype=torch.uint8)
        self._flags = []
        return first_problem(flags, self.names, self.distributed)


def first_problem(mine: torch.Tensor, names: list[str], distributed: bool) -> tuple[int, str] | None:
    """The first step (row of ``mine [steps, names]``, uint8 flags) with a non-finite tensor, and the first such
    tensor's name, or None; with ``distributed`` the flags are agreed over the process group first (a worker whose own
    values were finite names "a value on another worker"). One host read."""
    every = mine.clone()
    if distributed:
        torch.distributed.all_reduce(every, op=torch.distributed.ReduceOp.MAX)
    agreed, own = torch.stack([every, mine]).tolist()  # the one host read
    for step, (flags, own_flags) in enumerate(zip(agreed, own)):
        if any(flags):
            name = next((n for n, flag in zip(names, own_flags) if flag), "a value on another worker")
            return step, name
    return None
