"""Optimisers for a training module: the sparse-aware variant for row-sparse word tables, the dense one for the rest."""

from __future__ import annotations

import torch
from torch import nn

from parabit.training.config import OptimConfig
from parabit.training.row_sparse_adam import RowSparseAdam

DENSE = {"adam": torch.optim.Adam, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD}
SPARSE = {"adam": RowSparseAdam, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD}


def sparse_parameters(module: nn.Module) -> list[nn.Parameter]:
    """The trainable weights of ``module``'s sparse embeddings (they get row-sparse gradients)."""
    return [m.weight for m in module.modules()
            if isinstance(m, (nn.Embedding, nn.EmbeddingBag)) and m.sparse and m.weight.requires_grad]


def build_optimizers(module: nn.Module, config: OptimConfig) -> list[torch.optim.Optimizer]:
    """Sparse-gradient parameters get the sparse-aware variant of ``config.name``; the other trainable ones the
    dense one (with AMSGrad if ``config.amsgrad``)."""
    sparse = sparse_parameters(module)
    sparse_ids = {id(p) for p in sparse}
    dense = [p for p in module.parameters() if p.requires_grad and id(p) not in sparse_ids]
    optimizers: list[torch.optim.Optimizer] = []
    if sparse:
        # Adagrad builds its sparse updates from indices it made itself; saying so explicitly (checks off) also
        # silences torch's "invariant checks are implicitly disabled" warning on every worker.
        torch.sparse.check_sparse_tensor_invariants.disable()
        optimizers.append(SPARSE[config.name](sparse, lr=config.lr))
    if dense:
        options = {"amsgrad": True} if config.amsgrad else {}
        optimizers.append(DENSE[config.name](dense, lr=config.lr, **options))
    return optimizers
