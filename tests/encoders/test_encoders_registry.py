"""build_encoder: every name builds its class; options pass through; unknown names are refused. (The transformer
encoder reads its sizes from a checkpoint folder: tests/encoders/test_transformer.py.)"""

from __future__ import annotations

import pytest

from parabit.encoders import (
    ENCODERS,
    AttentiveGRUEncoder,
    AttentiveLSTMEncoder,
    AvgEncoder,
    BiLSTMEncoder,
    CNNEncoder,
    GRANEncoder,
    GRUEncoder,
    LinearBOWEncoder,
    LSTMEncoder,
    SentenceEncoder,
    TransformerEncoder,
    build_encoder,
)

EXPECTED = {
    "avg": AvgEncoder,
    "gran": GRANEncoder,
    "lstm": LSTMEncoder,
    "bilstm": BiLSTMEncoder,
    "attentive_lstm": AttentiveLSTMEncoder,
    "gru": GRUEncoder,
    "attentive_gru": AttentiveGRUEncoder,
    "cnn": CNNEncoder,
    "linear_bow": LinearBOWEncoder,
}


def test_registry_names():
    assert ENCODERS == {**EXPECTED, "transformer": TransformerEncoder}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_build_by_name(name):
    encoder = build_encoder(name, 12, 4)
    assert type(encoder) is EXPECTED[name]
    assert isinstance(encoder, SentenceEncoder)
    assert encoder.embedding.num_embeddings == 12 and encoder.embedding.embedding_dim == 4


def test_options_reach_the_class():
    assert build_encoder("bilstm", 12, 4, hidden_size=3).output_dim == 6
    assert build_encoder("avg", 12, 4, sparse=True).embedding.sparse
    assert build_encoder("cnn", 12, 4, filters=9, kernel_size=2).output_dim == 9


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown encoder 'bert'") as error:
        build_encoder("bert", 12, 4)
    for name in ENCODERS:
        assert name in str(error.value)


def test_the_transformer_by_name_asks_for_its_checkpoint():
    with pytest.raises(ValueError, match="reads a Hugging Face checkpoint folder"):
        build_encoder("transformer", 12, 4)
