"""Adam for word tables with row-sparse gradients, touching each used row of its state once per step.

The update is exactly ``torch.optim.SparseAdam``'s (moments and parameter change only in the rows the batch used;
bias correction by the optimiser's step count). What differs is the memory traffic. On a 2M-word table every row a
step touches is a cache (and TLB) miss, so the cost that grows with the vocabulary is the number of random row
accesses. SparseAdam makes five per row: it gathers each moment (``sparse_mask``), adds back into each moment and
into the parameter (three scatter-adds of sparse tensors), with a dozen elementwise passes between. Here both
moments live interleaved in one ``[rows, 2, dim]`` table, so a step gathers the state once, updates it in place
with fused ops (``lerp_``, ``addcmul_``), writes it back once (``index_copy_``) and adds the change into the
parameter once (``index_add_``): three random accesses per row. bench/bench_vocab_scaling.py measures the gain.

Checkpoints: the state is ``{"step": int, "moments": Tensor[rows, 2, dim]}``. The state of a ``SparseAdam``
(``exp_avg`` / ``exp_avg_sq``) loaded into this optimiser is converted on its first step, so runs checkpointed
before the switch resume unchanged.
"""

from __future__ import annotations

import torch

from parabit.training.row_kernels import adam_rows


class RowSparseAdam(torch.optim.Optimizer):
    """``RowSparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)``: every parameter must get sparse gradients
    (``nn.Embedding(sparse=True)``, ``F.embedding_bag(..., sparse=True)``); dense ones belong to ``torch.optim.Adam``."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        if not lr > 0.0:
            raise ValueError(f"RowSparseAdam: lr must be positive, got {lr}")
        if not 0.0 < eps:
            raise ValueError(f"RowSparseAdam: eps must be positive, got {eps}")
        for beta in betas:
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"RowSparseAdam: betas must lie in [0, 1), got {betas}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    self._update(param, group)
        return loss

    def _update(self, param: torch.Tensor, group: dict) -> None:
        if not param.grad.is_sparse:
            raise RuntimeError("RowSparseAdam got a dense gradient: give this parameter to torch.optim.Adam, or build "
                               "its embedding with sparse=True")
        grad = param.grad.coalesce()  # rows sorted and distinct: the update is not linear in repeated rows
        self._update_rows(param, group, grad.indices()[0], grad.values())

    @torch.no_grad()
    def update_rows(self, param: torch.Tensor, rows: torch.Tensor, values: torch.Tensor, penalty_scale: float = 0.0,
                    centre: torch.Tensor | None = None) -> tuple[float, bool]:
        """The step of ``param`` whose gradient is ``values`` at the distinct ``rows`` (zero elsewhere), in place:
        what :meth:`step` does with a coalesced sparse gradient, for a caller that has the rows at hand; with a row
        penalty as :func:`~parabit.training.row_kernels.adam_rows`. Returns the penalty and whether every updated
        value is finite."""
        group = next(group for group in self.param_groups if any(p is param for p in group["params"]))
        return self._update_rows(param, group, rows, values, penalty_scale, centre)

    def _update_rows(self, param: torch.Tensor, group: dict, rows: torch.Tensor, values: torch.Tensor,
                     penalty_scale: float = 0.0, centre: torch.Tensor | None = None) -> tuple[float, bool]:
        if values.numel() == 0:
            return 0.0, True
        state = self.state[param]
        moments = self._moments(param, state)
        state["step"] += 1
        return adam_rows(param, moments, rows, values, lr=group["lr"], betas=group["betas"], eps=group["eps"],
                         step=state["step"], penalty_scale=penalty_scale, centre=centre)

    @staticmethod
    def _moments(param: torch.Tensor, state: dict) -> torch.Tensor:
        """The interleaved moment table, made on the first step (or from a loaded SparseAdam state)."""
        if "moments" not in state:
            if "exp_avg" in state:
                state["moments"] = torch.stack([state.pop("exp_avg"), state.pop("exp_avg_sq")], dim=1)
            else:
                state["step"] = 0
                state["moments"] = param.new_zeros((param.shape[0], 2, *param.shape[1:]))
        return state["moments"]
