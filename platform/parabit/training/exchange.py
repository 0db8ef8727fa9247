"""Averaging gradients across data-parallel workers, row-sparse word tables included, on gloo (CPU) and NCCL (GPU).

Dense gradients are summed with all-reduce, as DDP does: the small ones together in one flat buffer, a large one (a
dense word table: ``scaling.gradient_exchange: dense``) in place, without a copy. A row-sparse word-table gradient
(``embedding_bag(..., sparse=True)``) is exchanged as the rows the step touched: every worker all-gathers every
worker's (row ids, gradient rows), padded to the longest, and the rows are summed per id (``coalesce``). Bytes per
step grow with the batch (distinct words × dim × workers), not with the vocabulary, and NCCL, which has no sparse
all-reduce, needs only ``all_gather`` of dense tensors. Every worker ends with the same gradient, the mean over
workers, so the optimiser (``RowSparseAdam``) updates each touched row once, identically everywhere.

Which parameters are exchanged, and how, is agreed on every step from one small all-gather of what each worker
has: a worker whose batch gave a parameter no gradient (a word table its shard never touched, a branch its batch
did not take) still takes part with zeros or no rows, so every worker issues the same collectives in the same order
(a mismatch would hang, or pair the wrong tensors). A parameter no worker has a gradient for keeps ``grad=None``,
as it would with one worker. Collectives per step: that all-gather, one all-reduce per flat dtype bucket (plus one
per large dense gradient), and one all-gather per dtype of sparse parameters (their row ids and rows in one buffer).

Host reads per step (each a wait for the device on a GPU): that table of kinds and row counts, and coalescing the
sparse gradients (their numbers of distinct rows size the buffers). With one worker nothing is exchanged.
:attr:`GradientExchange.bytes_last_step` counts the payload the last step moved per worker: the all-reduced buffers
and the all-gathered ones as each worker receives them (its own part included), metadata included;
``bench/bench_sparse_exchange.py`` reports it.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn

# Dense gradients up to this many bytes share one flat all-reduce buffer; larger ones are reduced in place.
FLAT_BUCKET_BYTES = 16 * 1024**2

NONE, DENSE, SPARSE = 0, 1, 2


class GradientExchange:
    """``exchange.average()`` after ``loss.backward()`` leaves every trainable parameter's gradient averaged over
    the process group's workers (dense: all-reduce; row-sparse: all-gather of touched rows). ``group``: the process
    group (default: the global one)."""

    def __init__(self, module: nn.Module, group: dist.ProcessGroup | None = None):
        self.parameters = [p for p in module.parameters() if p.requires_grad]
        self.group = group
        distributed = dist.is_available() and dist.is_initialized()
        self.world = dist.get_world_size(group) if distributed else 1
        self.bytes_last_step = 0

    def average(self) -> None:
        if self.world == 1 or not self.parameters:
            return
        self.bytes_last_step = 0
        kinds, rows = self._agree()
        dense = [i for i, k in enumerate(kinds) if k == DENSE]
        sparse = [i for i, k in enumerate(kinds) if k == SPARSE]
        if dense:
            self._all_reduce_dense([self.parameters[i] for i in dense])
        for dtype in dict.fromkeys(self.parameters[i].dtype for i in sparse):  # one exchange per dtype, in order
            chosen = [i for i in sparse if self.parameters[i].dtype == dtype]
            self._all_gather_rows([self.parameters[i] for i in chosen], [rows[i] for i in chosen])

    def _agree(self) -> tuple[list[int], list[list[int]]]:
        """Per parameter: how it is exchanged this step (NONE / DENSE / SPARSE) and, if sparse, how many rows each
        worker sends. Local sparse gradients are coalesced here (rows distinct), so each row is sent once."""
        local = []
        for parameter in self.parameters:
            grad = parameter.grad
            if grad is None:
                local += [NONE, 0]
            elif grad.is_sparse:
                parameter.grad = grad = grad.coalesce()
                local += [SPARSE, grad._nnz()]
            else:
                local += [DENSE, 0]
        device = self.parameters[0].device
        mine = torch.tensor(local, dtype=torch.int64, device=device)
        every = [torch.empty_like(mine) for _ in range(self.world)]
        dist.all_gather(every, mine, group=self.group)
        self.bytes_last_step += self.world * mine.numel() * mine.element_size()
        table = torch.stack(every).tolist()  # [worker][2 × parameter], read straight from the device
        kinds, rows = [], []
        for index in range(len(self.parameters)):
            seen = {worker[2 * index] for worker in table}
            # Any dense gradient makes the exchange dense (a sparse one is densified); else any sparse one makes it
            # sparse; a parameter without a gradient anywhere is left alone.
            kinds.append(DENSE if DENSE in seen else SPARSE if SPARSE in seen else NONE)
            rows.append([worker[2 * index + 1] for worker in table])
        return kinds, rows

    def _all_reduce_dense(self, parameters: list[nn.Parameter]) -> None:
        grads = []
        for parameter in parameters:
            grad = parameter.grad
            if grad is None:  # another worker has one: take part with zeros
                grad = torch.zeros_like(parameter)
            elif grad.is_sparse:
                grad = grad.to_dense()
            parameter.grad = grad
            grads.append(grad)
        small: dict[torch.dtype, list[nn.Parameter]] = {}
        for parameter, grad in zip(parameters, grads):
            if grad.numel() * grad.element_size() > FLAT_BUCKET_BYTES and grad.is_contiguous():
                dist.all_reduce(grad, group=self.group)  # a large one in place: no second copy of a dense table
                grad.div_(self.world)
                self.bytes_last_step += grad.numel() * grad.element_size()
            else:
                small.setdefault(grad.dtype, []).append(parameter)
        for bucket in small.values():
            flat = torch.cat([p.grad.reshape(-1) for p in bucket])
            dist.all_reduce(flat, group=self.group)
            flat.div_(self.world)
            self.bytes_last_step += flat.numel() * flat.element_size()
            offset = 0
            for parameter in bucket:
                size = parameter.grad.numel()
                parameter.grad = flat[offset:offset + size].view_as(parameter.grad)
                offset += size

    def _all_gather_rows(self, parameters: list[nn.Parameter], rows: list[list[int]]) -> None:
        """Exchange the touched rows of ``parameters`` (row-sparse, one dtype) in one all-gather: a flat buffer of that
        dtype holding every parameter's row ids (their int64 bits, reinterpreted, not converted) and then their rows,
        each worker's part padded to the longest worker's per parameter."""
        longest = [max(counts) for counts in rows]
        if not any(longest):  # nobody touched a row: nothing to send, every gradient is empty
            for parameter in parameters:
                parameter.grad = _empty_rows(parameter)
            return
        device, dtype = parameters[0].device, parameters[0].dtype
        widths = [_row_width(p) for p in parameters]
        id_words = torch.empty((), dtype=torch.int64).element_size() // torch.empty((), dtype=dtype).element_size()
        id_length = sum(longest) * id_words
        buffer = torch.zeros(id_length + sum(n * w for n, w in zip(longest, widths)), dtype=dtype, device=device)
        ids, values = buffer[:id_length].view(torch.int64), buffer[id_length:]
        id_offset = value_offset = 0
        for parameter, n, width in zip(parameters, longest, widths):
            grad = parameter.grad
            if grad is not None and grad._nnz():
                count = grad._nnz()
                ids[id_offset:id_offset + count] = grad.indices()[0]
                values[value_offset:value_offset + count * width] = grad.values().reshape(-1)
            id_offset += n
            value_offset += n * width
        every = [torch.empty_like(buffer) for _ in range(self.world)]
        dist.all_gather(every, buffer, group=self.group)
        self.bytes_last_step += self.world * buffer.numel() * buffer.element_size()
        every_ids = [worker[:id_length].view(torch.int64) for worker in every]
        every_values = [worker[id_length:] for worker in every]

        id_offset = value_offset = 0
        for parameter, n, width, counts in zip(parameters, longest, widths, rows):
            row_ids = torch.cat([worker[id_offset:id_offset + count] for worker, count in zip(every_ids, counts)])
            row_values = torch.cat([worker[value_offset:value_offset + count * width]
                                    for worker, count in zip(every_values, counts)])
            row_values = row_values.view(-1, *parameter.shape[1:]).div_(self.world)
            # Rows several workers touched appear once per worker: coalesce sums them into one.
            parameter.grad = torch.sparse_coo_tensor(row_ids.unsqueeze(0), row_values, parameter.shape,
                                                     check_invariants=False).coalesce()
            id_offset += n
            value_offset += n * width


def _row_width(parameter: nn.Parameter) -> int:
    width = 1
    for size in parameter.shape[1:]:
        width *= size
    return width


def _empty_rows(parameter: nn.Parameter) -> torch.Tensor:
    return torch.sparse_coo_tensor(torch.zeros((1, 0), dtype=torch.int64, device=parameter.device),
                                   parameter.new_zeros((0, *parameter.shape[1:])), parameter.shape,
                                   check_invariants=False).coalesce()
