"""Optimisers for a training module: the sparse-aware variant for row-sparse word tables, the dense one for the rest."""

from __future__ import annotations

import torch
from torch import nn

from parabit.training.config import OptimConfig
from parabit.training.row_kernels import adagrad_rows, sgd_rows
from parabit.training.row_sparse_adam import RowSparseAdam

DENSE = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD}
# A row-sparse table's update has no weight decay (one would touch every row each step): AdamW's tables get the
# RowSparseAdam of adam, and weight decay with Adagrad's or SGD's sparse update is refused (build_optimizers).
SPARSE = {"adam": RowSparseAdam, "adamw": RowSparseAdam, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD}


def sparse_parameters(module: nn.Module) -> list[nn.Parameter]:
    """The trainable weights of ``module``'s sparse embeddings (they get row-sparse gradients)."""
    return [m.weight for m in module.modules()
            if isinstance(m, (nn.Embedding, nn.EmbeddingBag)) and m.sparse and m.weight.requires_grad]


def build_optimizers(module: nn.Module, config: OptimConfig) -> list[torch.optim.Optimizer]:
    """Sparse-gradient parameters get the sparse-aware variant of ``config.name`` (no weight decay); the other
    trainable ones the dense one (with ``config.weight_decay``, AMSGrad if ``config.amsgrad``; Adam and AdamW fused).
    Raises ValueError where ``config.weight_decay`` would reach no parameter it was meant for: with Adagrad's or
    SGD's sparse tables, or a module without dense parameters."""
    sparse = sparse_parameters(module)
    sparse_ids = {id(p) for p in sparse}
    dense = [p for p in module.parameters() if p.requires_grad and id(p) not in sparse_ids]
    if config.weight_decay and sparse and (config.name in ("adagrad", "sgd") or not dense):
        raise ValueError(f"optim.weight_decay reaches no row-sparse word table ({config.name} here), and this model "
                         "trains such tables: set optim.weight_decay to 0, or scaling.gradient_exchange: dense")
    optimizers: list[torch.optim.Optimizer] = []
    if sparse:
        # Adagrad builds its sparse updates from indices it made itself; saying so explicitly (checks off) also
        # silences torch's "invariant checks are implicitly disabled" warning on every worker.
        torch.sparse.check_sparse_tensor_invariants.disable()
        optimizers.append(SPARSE[config.name](sparse, lr=config.lr))
    if dense:
        options = {"amsgrad": True} if config.amsgrad else {}
        if config.name in ("adam", "adamw"):
            # torch's fused Adam is the same update in one pass over each tensor, about 3x faster on CPU than its
            # default per-tensor loop; it matters where a whole word table trains densely (BilDRL's joint cells).
            options["fused"] = True
        # Always the config's weight decay, so AdamW never falls back to torch's own default of 0.01.
        optimizers.append(DENSE[config.name](dense, lr=config.lr, weight_decay=config.weight_decay, **options))
    return optimizers


def row_update_kind(optimizer: torch.optim.Optimizer) -> str:
    """Which compiled row update :func:`update_rows` runs for ``optimizer``: ``adam``, ``adagrad`` or ``sgd``."""
    return "adam" if isinstance(optimizer, RowSparseAdam) else "adagrad" if isinstance(
        optimizer, torch.optim.Adagrad) else "sgd"


def update_rows(optimizer: torch.optim.Optimizer, parameter: torch.Tensor, rows: torch.Tensor, gradient: torch.Tensor,
                penalty_scale: float = 0.0, centre: torch.Tensor | None = None) -> tuple[float, bool]:
    """``optimizer``'s step of ``parameter`` (one of its sparse parameters, :func:`build_optimizers`; float32 on the
    CPU) for a gradient that is ``gradient`` at the distinct ``rows`` and zero elsewhere, plus the gradient of the row
    penalty ``penalty_scale · ‖parameter[rows] − centre[rows]‖²`` (``centre`` None: zero), in place: the update
    ``optimizer.step()`` makes from that gradient as a coalesced sparse tensor, and the same optimiser state
    (checkpoints and resume are unchanged), in one compiled pass over the rows
    (:mod:`parabit.training.row_kernels`). AdaGrad, SGD (plain) and :class:`RowSparseAdam`. Returns the penalty and
    whether every updated value is finite."""
    if isinstance(optimizer, RowSparseAdam):
        return optimizer.update_rows(parameter, rows, gradient, penalty_scale, centre)
    group = next(group for group in optimizer.param_groups if any(p is parameter for p in group["params"]))
    if isinstance(optimizer, torch.optim.Adagrad) and not group["maximize"] and not group["weight_decay"]:
        state = optimizer.state[parameter]
        state["step"].add_(1)  # the step count stays the tensor torch keeps (checkpoints are unchanged)
        rate = group["lr"] / (1 + (float(state["step"]) - 1) * group["lr_decay"])
        return adagrad_rows(parameter, state["sum"], rows, gradient, rate, group["eps"], penalty_scale, centre)
    if isinstance(optimizer, torch.optim.SGD) and not (group["momentum"] or group["weight_decay"] or group["maximize"]):
        return sgd_rows(parameter, rows, gradient, group["lr"], penalty_scale, centre)
    raise ValueError(f"update_rows: no row update for {type(optimizer).__name__} with these options")
