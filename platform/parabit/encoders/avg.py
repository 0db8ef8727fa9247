"""AVG: a sentence is the mean (or sum) of its word vectors (Wieting et al. 2016; SUM: Hermann & Blunsom 2014),
optionally weighted per word and with common components removed (SIF, Arora et al. 2017)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from parabit.encoders.base import PAD_ID, SentenceEncoder
from parabit.encoders.pooling import pooling_function

if TYPE_CHECKING:  # numba's import (half a second) only where the fused step runs
    from parabit.encoders.row_bags import RowBags


class AvgEncoder(SentenceEncoder):
    """Word averaging: ``ids [B, T], lengths [B] -> [B, dim]``; ``output_dim == dim``.

    ``pooling="mean"`` averages the word vectors of the real tokens (the AVG model); ``"sum"`` adds them (the ADD/SUM
    model used with J_bi by Hermann & Blunsom). The word table is meant for ``sparse=True`` with row-sparse optimisers.

    ``weighted``: each word's vector is scaled by its weight before pooling (the mean still divides by the number of
    tokens, as SIF's ``1/|s| Σ a/(a+p(w)) v_w``). The weights start as ``initial_weights`` (e.g. SIF's, see
    :func:`parabit.text.frequency.sif_weights`); they are fixed (a buffer) unless ``learn_weights``, then a one-column
    embedding trained with the words (row-sparse like the table).

    ``components``: that many common directions ``u`` are projected out of every sentence vector,
    ``v − Σ (v·u) u`` (SIF's common-component removal). They are a buffer set by :meth:`fit_components` on
    training-side sentences (never evaluation data); until fitted they are zero and remove nothing. Weights and
    components are part of the state dict, so the exported model encodes exactly as the evaluated one.
    """

    POOLINGS = ("mean", "sum")
    accepts_extra_rows = True  # forward(..., extra_rows=): words outside the table (SentenceEmbedder's own unknown rows)

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        pooling: str = "mean",
        weighted: bool = False,
        learn_weights: bool = False,
        components: int = 0,
        initial_weights: torch.Tensor | None = None,
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
    ):
        super().__init__(vocab_size, dim, initial_vectors=initial_vectors, sparse=sparse)
        self.pooling = pooling
        pooling_function(pooling, self.POOLINGS)  # validates the name
        if learn_weights and not weighted:
            raise ValueError("learn_weights needs weighted=True")
        if components < 0 or components >= dim:
            raise ValueError(f"components must be in [0, dim); got {components} for dim {dim}")
        self.weighted, self.learn_weights = weighted, learn_weights
        weights = torch.ones(vocab_size) if initial_weights is None else initial_weights.detach().float().clone()
        if weighted and tuple(weights.shape) != (vocab_size,):
            raise ValueError(f"initial_weights has shape {tuple(weights.shape)}, expected ({vocab_size},)")
        if learn_weights:
            self.word_weights = nn.Embedding(vocab_size, 1, padding_idx=PAD_ID, sparse=sparse)
            with torch.no_grad():
                self.word_weights.weight.copy_(weights.unsqueeze(1))
        elif weighted:
            self.register_buffer("word_weights", weights)
        self.register_buffer("components", torch.zeros(components, dim))

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor, extra_rows: torch.Tensor | None = None) -> torch.Tensor:
        """``extra_rows [E, dim]``: vectors of words outside the table, addressed by the ids ``vocab_size + e``
        (inference only: they get no gradient, and weight 1 under ``weighted``, SIF's weight of a word never seen)."""
        return self.remove_components(self.pool(ids, lengths, extra_rows))

    def pool(self, ids: torch.Tensor, lengths: torch.Tensor, extra_rows: torch.Tensor | None = None) -> torch.Tensor:
        """Sentence vectors before common-component removal (what :meth:`fit_components` is fitted on)."""
        # embedding_bag reduces inside the lookup: no [B, T, dim] intermediate, and its backward writes the
        # sparse gradient directly. It gets the real tokens as one flat bag per sentence (offsets), PAD left out
        # beforehand: with a padded [B, T] input or a padding_idx it takes a slower kernel (3-6x slower on 2 cores
        # for 4,096 sentences of a 156k-word table, measured 2026-11-26), for the same sums.
        real = self.mask(ids, lengths) & (ids != PAD_ID)
        flat = ids[real]
        counts = real.sum(dim=1)
        offsets = torch.cumsum(counts, dim=0) - counts
        sparse = self.embedding.sparse
        table = self.embedding.weight
        if extra_rows is not None:
            flat, table, weights = self._with_extra_rows(flat, extra_rows)
        else:
            weights = self._weights(flat) if self.weighted else None
        if weights is None:
            pooled = F.embedding_bag(flat, table, offsets, mode=self.pooling, sparse=sparse)
        else:
            pooled = F.embedding_bag(flat, table, offsets, mode="sum", sparse=sparse,
                                     per_sample_weights=weights.to(table.dtype))
            if self.pooling == "mean":
                pooled = pooled / lengths.to(pooled.dtype).unsqueeze(1)
        return pooled

    def bags(self, first: tuple[torch.Tensor, torch.Tensor], second: tuple[torch.Tensor, torch.Tensor]) -> RowBags:
        """The sentences of ``first`` and then of ``second`` (each ``(ids [B, T], lengths [B])``) as
        :class:`RowBags` (on the CPU; fixed word weights only: learnt ones train through autograd)."""
        from parabit.encoders.row_bags import row_bags  # numba's import only where the fused step runs

        if self.learn_weights:
            raise ValueError("bags: learnt word weights are trained through autograd, not from row bags")
        return row_bags(first, second, self.embedding.weight, mean=self.pooling == "mean",
                        weights=self.word_weights if self.weighted else None)

    def encode_bags(self, bags: RowBags) -> torch.Tensor:
        """``[S, dim]``: the sentences of ``bags`` as :meth:`forward` encodes them (their sums, common components
        removed)."""
        return self.remove_components(bags.sums)

    def _weights(self, ids: torch.Tensor) -> torch.Tensor:
        return self.word_weights(ids).squeeze(-1) if self.learn_weights else self.word_weights[ids]

    def _with_extra_rows(self, flat: torch.Tensor,
                         extra_rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The batch's tokens re-addressed into a small table of just the rows they use, taken from the word table
        or from ``extra_rows`` (ids past the table), with their weights (a word outside the table weighs 1)."""
        size = self.embedding.num_embeddings
        used, flat = torch.unique(flat, return_inverse=True)
        known = used < size
        weight = self.embedding.weight
        table = torch.empty(len(used), weight.shape[1], dtype=weight.dtype, device=weight.device)
        table[known] = weight[used[known]]
        table[~known] = extra_rows[used[~known] - size].to(table)
        if not self.weighted:
            return flat, table, None
        weights = torch.ones(len(used), dtype=weight.dtype, device=weight.device)
        weights[known] = self._weights(used[known]).to(weights)
        return flat, table, weights[flat]

    def remove_components(self, vectors: torch.Tensor) -> torch.Tensor:
        if self.components.numel() == 0:
            return vectors
        return vectors - (vectors @ self.components.T) @ self.components

    @torch.no_grad()
    def fit_components(self, vectors: torch.Tensor) -> None:
        """Set the common components to the top right singular vectors of ``vectors [N, dim]`` (sentence vectors
        of training-side text, from :meth:`pool`), as SIF does (no centring)."""
        k = self.components.shape[0]
        if k == 0:
            return
        vectors = vectors.double()
        _, eigenvectors = torch.linalg.eigh(vectors.T @ vectors)  # eigenvalues ascending
        self.components.copy_(eigenvectors[:, -k:].flip(1).T.to(self.components.dtype))
