"""Averaging gradients across data-parallel workers, row-sparse word tables included, on gloo (CPU) and NCCL (GPU).

Dense gradients are summed with one all-reduce over a flat buffer, as DDP does. A row-sparse word-table gradient
(``embedding_bag(..., sparse=True)``) is exchanged as the rows the step touched: each worker all-gathers every
worker's (row ids, gradient rows), padded to the longest, and the rows are summed per id (``coalesce``). Bytes per
step grow with the batch (distinct words × dim × workers), not with the vocabulary, and NCCL, which has no sparse
all-reduce, needs only ``all_gather`` of dense tensors. Every worker ends with the same gradient, the mean over
workers, so the optimiser (``RowSparseAdam``) updates each touched row once, identically everywhere.

With one worker nothing is exchanged. :attr:`GradientExchange.bytes_last_step` counts what the last step moved
(received per worker), for ``bench/bench_sparse_exchange.py``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn


class GradientExchange:
    """``exchange.average()`` after ``loss.backward()`` leaves every trainable parameter's gradient averaged over
    the process group's workers (dense: all-reduce; row-sparse: all-gather of touched rows)."""

    def __init__(self, module: nn.Module):
        self.parameters = [p for p in module.parameters() if p.requires_grad]
        self.world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
        self.bytes_last_step = 0

    def average(self) -> None:
        if self.world == 1:
            return
        self.bytes_last_step = 0
        sparse = [p for p in self.parameters if p.grad is not None and p.grad.is_sparse]
        dense = [p for p in self.parameters if p not in sparse]
        if dense:
            self._all_reduce_dense(dense)
        for parameter in sparse:
            parameter.grad = self._all_gather_rows(parameter.grad)

    def _all_reduce_dense(self, parameters: list[nn.Parameter]) -> None:
        # Every worker must send the same layout: a parameter without a gradient this step counts as zeros.
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat.div_(self.world)
        self.bytes_last_step += flat.numel() * flat.element_size()
        offset = 0
        for parameter, grad in zip(parameters, grads):
            size = grad.numel()
            parameter.grad = flat[offset:offset + size].view_as(grad)
            offset += size

    def _all_gather_rows(self, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.coalesce()
        rows, values = grad.indices()[0], grad.values()
        counts = [torch.zeros(1, dtype=torch.int64, device=rows.device) for _ in range(self.world)]
        dist.all_gather(counts, torch.tensor([len(rows)], dtype=torch.int64, device=rows.device))
        sizes = [int(c) for c in counts]
        longest = max(sizes)
        padded_rows = rows.new_zeros(longest)
        padded_rows[:len(rows)] = rows
        padded_values = values.new_zeros((longest, *values.shape[1:]))
        padded_values[:len(rows)] = values
        gathered_rows = [torch.empty_like(padded_rows) for _ in range(self.world)]
        gathered_values = [torch.empty_like(padded_values) for _ in range(self.world)]
        dist.all_gather(gathered_rows, padded_rows)
        dist.all_gather(gathered_values, padded_values)
        self.bytes_last_step += self.world * (padded_rows.numel() * padded_rows.element_size()
                                              + padded_values.numel() * padded_values.element_size() + 8)
        all_rows = torch.cat([r[:n] for r, n in zip(gathered_rows, sizes)])
        all_values = torch.cat([v[:n] for v, n in zip(gathered_values, sizes)]).div_(self.world)
        return torch.sparse_coo_tensor(all_rows.unsqueeze(0), all_values, grad.shape).coalesce()
