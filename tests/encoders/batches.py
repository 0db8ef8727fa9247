"""Batch builders and reference runs shared by the encoder tests (tiny sizes keep the suite fast on CPU)."""

from __future__ import annotations

import torch

from parabit.encoders import PAD_ID

VOCAB = 20
DIM = 6


def padded_batch(lengths: list[int], width: int | None = None, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids [B, width], lengths [B])``: random non-PAD ids for real tokens, PAD_ID after each length."""
    width = width or max(lengths)
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, VOCAB, (len(lengths), width), generator=generator)
    lengths_tensor = torch.tensor(lengths)
    ids[torch.arange(width).unsqueeze(0) >= lengths_tensor.unsqueeze(1)] = PAD_ID
    return ids, lengths_tensor


def unpadded_run(encoder, ids: torch.Tensor, length: int) -> torch.Tensor:
    """The top-layer RNN outputs ``[length, H * directions]`` of one sentence run alone, without packing.

    The reference the packed, padded batch must reproduce: no padding ever entered this run.
    """
    words = encoder.embedding(ids[:length]).unsqueeze(0)
    outputs, _ = encoder.rnn(words)
    return outputs[0]
