"""One optimiser step of the training kernel, and the sums of an epoch's losses: what the worker loop
(:mod:`parabit.training.loop`) runs for every recipe, and what a benchmark can run without Ray (it imports torch and
the kernel's exchange, guard and optimisers only).

A step is one batch, or with gradient accumulation (``optim.accumulation_steps``) several: each batch's forward
(under autocast when asked) and backward, its loss scaled by ``1 / batches`` so the gradients add up to their mean;
then, once per step, the gradient exchange between workers (dense gradients all-reduced, row-sparse word tables as
their touched rows), clipping of the dense gradients, the divergence guard's checks and the optimiser step. Nothing
here reads a value back to the host.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence

import torch
from torch import nn

from parabit.training.config import OptimConfig
from parabit.training.exchange import GradientExchange
from parabit.training.guard import DivergenceGuard, RowGuard
from parabit.training.optimizers import row_update_kind, sparse_parameters, update_rows
from parabit.training.recipe import Step, TrainingModule
from parabit.training.row_kernels import add_penalty, row_gradient, warm_up


class EpochTotals:
    """The running sums of an epoch's loss and its parts, each weighted by its batch's size: on the device for the
    parts that are tensors (adding them makes the host wait for nothing), read in one go by :meth:`means`."""

    def __init__(self):
        self.sums: dict[str, torch.Tensor | float] = {}
        self.seen = 0

    def add(self, parts: dict[str, torch.Tensor | float], size: int) -> None:
        self.seen += size
        for key, part in parts.items():
            value = part.detach().float() * size if isinstance(part, torch.Tensor) else float(part) * size
            self.sums[key] = self.sums.get(key, 0.0) + value

    def means(self) -> dict[str, float]:
        keys = [key for key, total in self.sums.items() if isinstance(total, torch.Tensor)]
        read = dict(zip(keys, torch.stack([self.sums[key] for key in keys]).tolist())) if keys else {}
        return {key: read.get(key, total) / max(self.seen, 1) for key, total in self.sums.items()}


def grouped(batches: Iterable[dict], size: int) -> Iterator[list[dict]]:
    """``batches`` ``size`` at a time (the last group may be smaller): the batches of each optimiser step."""
    group: list[dict] = []
    for batch in batches:
        group.append(batch)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def steps_of(batches: int, accumulation_steps: int) -> int:
    """How many optimiser steps ``batches`` batches make."""
    return -(-batches // accumulation_steps)


class OptimiserStep:
    """``step(batches, context, totals)``: one optimiser step over ``batches`` (see the module docstring), each
    batch's loss and parts added to ``totals``. ``clip_norm``: clip the dense gradients' norm to it (None: not at
    all); ``autocast``: the context the forward passes run in (bfloat16 on a GPU), none by default."""

    def __init__(self, module: nn.Module, optimizers: Sequence[torch.optim.Optimizer], exchange: GradientExchange,
                 guard: DivergenceGuard, clip_norm: float | None = None, autocast=None):
        self.module = module
        self.optimizers = list(optimizers)
        self.exchange = exchange
        self.guard = guard
        self.clip_norm = clip_norm
        self.autocast = autocast if autocast is not None else contextlib.nullcontext()
        sparse = {id(p) for p in sparse_parameters(module)}
        self.clipped = [p for p in module.parameters() if p.requires_grad and id(p) not in sparse]  # norms are dense

    def warm_up(self, batch: dict) -> None:
        """Nothing to load ahead (:meth:`RowStep.warm_up` has)."""

    def __call__(self, batches: Sequence[dict], context: Step, totals: EpochTotals) -> None:
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=True)
        losses = []
        for batch in batches:
            with self.autocast:
                output = self.module(batch, context)
            loss, parts = output if isinstance(output, tuple) else (output, {})
            # One batch: its loss as it is (the step every run without accumulation took before it existed).
            (loss if len(batches) == 1 else loss / len(batches)).backward()
            losses.append(loss)
            totals.add({"loss": loss, **parts}, len(batch["len_a"]))
        self.exchange.average()
        if self.clip_norm is not None and self.clipped:
            torch.nn.utils.clip_grad_norm_(self.clipped, self.clip_norm)
        self.guard.before_update(losses[0] if len(losses) == 1 else torch.stack([l.detach() for l in losses]))
        for optimizer in self.optimizers:
            optimizer.step()
        self.guard.after_update()


class RowStep:
    """The fused step of a module that trains one row-sparse word table in closed form
    (:meth:`TrainingModule.row_gradient`), on the CPU: the batch as bags of the distinct rows it reads, the loss's
    gradient at those rows without an autograd graph (:func:`~parabit.training.row_kernels.row_gradient`), with
    several workers the exchange of those rows (the all-gather :class:`GradientExchange` makes of a sparse gradient),
    and the optimiser's update of those rows with the row penalty, in one compiled pass
    (:func:`~parabit.training.optimizers.update_rows`: the same update and state as ``optimizer.step()``). Called as
    :class:`OptimiserStep` is; its ``guard`` is a :class:`RowGuard`."""

    def __init__(self, module: TrainingModule, optimizer: torch.optim.Optimizer, exchange: GradientExchange,
                 guard: RowGuard):
        self.module = module
        self.optimizer = optimizer
        self.exchange = exchange
        self.guard = guard

    def warm_up(self, batch: dict) -> None:
        """Load (or compile) the compiled loops before the first epoch's clock starts: ``batch``'s closed-form
        gradient with a throwaway generator, and its optimisers' row updates on throwaway rows; nothing of the run
        changes."""
        with torch.no_grad():
            result = self.module.row_gradient(batch, Step(torch.Generator(), {}, 0, 0))
            row_gradient(result.bags, result.sentence_gradient)
        warm_up({row_update_kind(self.optimizer)})

    def __call__(self, batches: Sequence[dict], context: Step, totals: EpochTotals) -> None:
        for batch in batches:  # one: a fused step is one batch (the kernel builds it only then)
            with torch.no_grad():
                result = self.module.row_gradient(batch, context)
                table, rows = result.table, result.bags.rows
                gradient = row_gradient(result.bags, result.sentence_gradient)
                scale, penalty = result.penalty_scale, 0.0
                if self.exchange.world > 1:
                    if scale:  # each worker's gradient holds the penalty of its rows, as autograd's would
                        penalty, scale = add_penalty(table, rows, gradient, scale, result.centre), 0.0
                    table.grad = torch.sparse_coo_tensor(rows.unsqueeze(0), gradient, table.shape,
                                                         check_invariants=False, is_coalesced=True)
                    self.exchange.average()  # every worker's rows, summed per row and averaged
                    rows, gradient, table.grad = table.grad.indices()[0], table.grad.values(), None
                update_penalty, finite = update_rows(self.optimizer, table, rows, gradient, scale, result.centre)
                loss = result.loss + penalty + update_penalty
                self.guard.after_step(loss, finite)
            totals.add({"loss": loss}, len(batch["len_a"]))


def build_step(module: TrainingModule, optimizers: Sequence[torch.optim.Optimizer], optim: OptimConfig, *,
               distributed: bool, mixed_precision: bool = False) -> OptimiserStep | RowStep:
    """The kernel's step for ``module``: :class:`RowStep` when the module trains one word table (float32, on the CPU)
    in closed form (:meth:`TrainingModule.closed_form_table`) and a step is one batch; otherwise
    :class:`OptimiserStep` (forward under bfloat16 autocast with ``mixed_precision``, autograd's backward,
    ``optimizer.step()``). Either has the ``guard`` the worker loop reads."""
    exchange = GradientExchange(module)
    table = module.closed_form_table()
    if (table is not None and table.device.type == "cpu" and table.dtype == torch.float32
            and optim.accumulation_steps == 1 and not mixed_precision and len(optimizers) == 1):
        name = next(name for name, parameter in module.named_parameters() if parameter is table)
        return RowStep(module, optimizers[0], exchange, RowGuard(name, distributed))
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if mixed_precision else None
    return OptimiserStep(module, optimizers, exchange, DivergenceGuard(module, distributed), optim.clip_norm, autocast)
