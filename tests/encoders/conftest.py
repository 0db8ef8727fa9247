"""Fixtures for the encoder tests: ``make_encoder``, and one intra-op thread."""

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


@pytest.fixture(autouse=True)
def single_thread():
    """Run these tests on one intra-op thread, restoring the setting afterwards.

    The tensors here are tiny; with several threads every LSTM step pays for thread hand-offs, which on a
    busy 2-core machine made the suite 2-3x slower.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
