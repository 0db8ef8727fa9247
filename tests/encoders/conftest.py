"""The ``make_encoder`` fixture for the encoder tests."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import build_encoder

from .batches import DIM, VOCAB


@pytest.fixture
def make_encoder():
    """``make_encoder(name, **options)``: a seeded encoder with VOCAB words of DIM dimensions."""

    def make(name: str, **options):
        torch.manual_seed(0)
        return build_encoder(name, VOCAB, DIM, **options)

    return make
