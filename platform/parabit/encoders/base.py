"""What every sentence encoder shares: the padding id, the word table, the real-token mask.

Contract of every encoder (see :class:`SentenceEncoder`)::

    encoder(ids: LongTensor[B, T], lengths: LongTensor[B]) -> FloatTensor[B, encoder.output_dim]

Sentence ``b`` is ``ids[b, :lengths[b]]``; positions ``>= lengths[b]`` are padding. Padding is written as
:data:`PAD_ID`, but encoders go by ``lengths``, never by the id, so whatever sits past the end of a
sentence cannot change its vector.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

PAD_ID = 0
"""Vocabulary id of the padding token. Its row in every word table is zero and receives no gradient."""


def make_word_embedding(
    vocab_size: int,
    dim: int,
    *,
    initial_vectors: torch.Tensor | None = None,
    sparse: bool = False,
) -> nn.Embedding:
    """The word table of an encoder: ``nn.Embedding(vocab_size, dim, padding_idx=PAD_ID, sparse=sparse)``.

    ``initial_vectors``: optional FloatTensor[vocab_size, dim] whose row ``i`` is the vector of vocabulary
    id ``i`` (e.g. GloVe 50d rows already aligned to the vocabulary); it is copied, and the padding row is
    set to zero whatever the given row held. Without it, rows start as ``nn.Embedding``'s N(0, 1).

    ``sparse=True`` makes the table's gradient a sparse tensor holding only the rows a batch used; it needs
    an optimizer that accepts sparse gradients (``torch.optim.SparseAdam``, ``Adagrad``, ``SGD``). Use it
    for large vocabularies with the averaging models; recurrent models keep the dense default.
    """
    embedding = nn.Embedding(vocab_size, dim, padding_idx=PAD_ID, sparse=sparse)
    if initial_vectors is not None:
        if tuple(initial_vectors.shape) != (vocab_size, dim):
            raise ValueError(
                f"initial_vectors has shape {tuple(initial_vectors.shape)}, expected ({vocab_size}, {dim})"
            )
        with torch.no_grad():
            embedding.weight.copy_(initial_vectors)
            embedding.weight[PAD_ID].zero_()
    return embedding


def length_mask(lengths: torch.Tensor, max_length: int) -> torch.Tensor:
    """BoolTensor[B, max_length], True at real tokens (position < length), False at padding."""
    positions = torch.arange(max_length, device=lengths.device)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)


def touched_rows(ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """LongTensor[R]: the sorted distinct vocabulary ids of the real tokens of a batch, PAD excluded.

    With padding written as PAD_ID these are exactly the rows in the table's sparse gradient for the
    batch; pass them as ``rows`` to the regularisers in :mod:`parabit.objectives.regularization` so only
    those rows are penalised. For a bilingual model with one table per language, call it once per side
    with that side's ids (for J_bi also the negatives' ids when they are encoded separately).
    """
    real = ids[length_mask(lengths.to(ids.device), ids.size(1))]
    rows = torch.unique(real)
    return rows[rows != PAD_ID]


class SentenceEncoder(nn.Module):
    """Base class: owns the word table ``embedding`` and declares ``output_dim``.

    Subclasses implement ``forward(ids: LongTensor[B, T], lengths: LongTensor[B]) -> FloatTensor[B,
    output_dim]``. Every length must be in ``[1, T]``: an empty sentence has no vector.

    ``word_table=False``: the subclass's model brings its own word table (a transformer checkpoint's token
    embeddings), which it exposes as ``embedding``; none is made here. ``reads_checkpoint``: the class builds from a
    checkpoint folder (its vocabulary, tokenizer and weights), so recipes with a word vocabulary of their own cannot
    use it.
    """

    output_dim: int
    reads_checkpoint: ClassVar[bool] = False

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        *,
        initial_vectors: torch.Tensor | None = None,
        sparse: bool = False,
        word_table: bool = True,
    ):
        super().__init__()
        self.vocab_size = vocab_size
        self.dim = dim
        if word_table:
            self.embedding = make_word_embedding(vocab_size, dim, initial_vectors=initial_vectors, sparse=sparse)
        self.output_dim = dim  # subclasses whose vector is not a word-sized vector overwrite this

    def mask(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """BoolTensor[B, T] on ``ids``' device, True at real tokens; checks every length is in [1, T].

        The check runs where the lengths are: on the CPU a bad length raises ``ValueError`` at once; on a GPU the
        host does not wait for the verdict (each training step would), and a bad length fails the step with a
        device-side assertion."""
        if lengths.dim() != 1 or lengths.size(0) != ids.size(0):
            raise ValueError(f"lengths has shape {tuple(lengths.shape)}, expected ({ids.size(0)},)")
        try:
            torch._assert_async(((lengths >= 1) & (lengths <= ids.size(1))).all(), "a length outside [1, T]")
        except RuntimeError:  # raised here only where the check ran synchronously: the values are at hand
            raise ValueError(
                f"every length must be in [1, {ids.size(1)}] (the padded width); got "
                f"min {int(lengths.min())}, max {int(lengths.max())}"
            ) from None
        return length_mask(lengths.to(ids.device), ids.size(1))

    def embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """FloatTensor[B, T, dim]: word vectors, exactly zero at padding positions.

        Zeroing by the mask (not by relying on the PAD row) keeps stray non-PAD ids past a sentence's
        end from leaking into convolutions or sums.
        """
        return self.embedding(ids).masked_fill(~mask.unsqueeze(-1), 0.0)
