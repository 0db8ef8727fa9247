"""CNN: convolution, then max/mean over real positions only."""

from __future__ import annotations

import pytest
import torch

from parabit.encoders import CNNEncoder, PAD_ID

# 2-d word vectors with every component < -1, so relu(x + 0.5) == 0 at every real position.
VECTORS = torch.tensor([[0.0, 0.0], [-2.0, -3.0], [-4.0, -1.5]])


def identity_cnn(pooling: str) -> CNNEncoder:
    """kernel 1, W = I, b = 0.5: feature_t = relu(x_t + 0.5); a zero (padding) input would give 0.5."""
    encoder = CNNEncoder(3, 2, kernel_size=1, pooling=pooling, initial_vectors=VECTORS)
    with torch.no_grad():
        encoder.conv.weight.copy_(torch.eye(2).unsqueeze(-1))
        encoder.conv.bias.fill_(0.5)
    return encoder


def test_padding_positions_never_win_the_max():
    ids = torch.tensor([[1, 2, PAD_ID, PAD_ID]])
    # Real features are relu((-2,-3)+0.5) = relu((-4,-1.5)+0.5) = (0,0); padding would say (0.5,0.5).
    out = identity_cnn("max")(ids, torch.tensor([2]))
    assert torch.equal(out, torch.zeros(1, 2))


def test_mean_is_over_real_positions_by_hand():
    encoder = identity_cnn("mean")
    with torch.no_grad():
        encoder.conv.bias.fill_(3.0)
    ids = torch.tensor([[1, 2, PAD_ID]])
    # relu((-2,-3)+3) = (1,0); relu((-4,-1.5)+3) = (0,1.5); mean (0.5, 0.75). Padding would add (3,3).
    torch.testing.assert_close(encoder(ids, torch.tensor([2])), torch.tensor([[0.5, 0.75]]))


@pytest.mark.parametrize("kernel_size", [1, 2, 3, 4, 5])
def test_any_kernel_size_keeps_one_output_per_position(kernel_size):
    torch.manual_seed(0)
    encoder = CNNEncoder(10, 3, kernel_size=kernel_size, filters=7)
    ids = torch.tensor([[4, PAD_ID, PAD_ID], [5, 6, 7]])
    assert encoder(ids, torch.tensor([1, 3])).shape == (2, 7)
    assert encoder.output_dim == 7


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="max, mean"):
        CNNEncoder(10, 3, pooling="last")
    with pytest.raises(ValueError, match="kernel_size"):
        CNNEncoder(10, 3, kernel_size=0)
