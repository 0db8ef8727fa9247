"""Sentence encoders: ``encoder(ids [B, T], lengths [B]) -> [B, encoder.output_dim]``.

Build one by name with :func:`build_encoder`; every encoder takes ``vocab_size`` and ``dim`` (the word
vector size) plus the keyword options of its class, among them ``initial_vectors`` and ``sparse``. The
``transformer`` encoder reads both from its checkpoint folder (``checkpoint=``; :meth:`TransformerEncoder.
from_checkpoint`) and brings its own tokenizer (:class:`TransformerEmbedder`).
"""

from __future__ import annotations

from parabit.encoders.attentive_gru import AttentiveGRUEncoder
from parabit.encoders.attentive_lstm import AttentiveLSTMEncoder
from parabit.encoders.avg import AvgEncoder
from parabit.encoders.base import PAD_ID, SentenceEncoder, make_word_embedding, touched_rows
from parabit.encoders.cnn import CNNEncoder
from parabit.encoders.gran import GRANEncoder
from parabit.encoders.gru import GRUEncoder
from parabit.encoders.linear_bow import LinearBOWEncoder
from parabit.encoders.lstm import BiLSTMEncoder, LSTMEncoder
from parabit.encoders.masked_attention_pooling import MaskedAttentionPooling
from parabit.encoders.transformer import TransformerEmbedder, TransformerEncoder

ENCODERS: dict[str, type[SentenceEncoder]] = {
    "avg": AvgEncoder,
    "gran": GRANEncoder,
    "lstm": LSTMEncoder,
    "bilstm": BiLSTMEncoder,
    "attentive_lstm": AttentiveLSTMEncoder,
    "gru": GRUEncoder,
    "attentive_gru": AttentiveGRUEncoder,
    "cnn": CNNEncoder,
    "linear_bow": LinearBOWEncoder,
    "transformer": TransformerEncoder,
}


def build_encoder(name: str, vocab_size: int, dim: int, **options) -> SentenceEncoder:
    """``ENCODERS[name](vocab_size, dim, **options)``; an unknown name raises ValueError listing the valid ones."""
    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}; valid names: {', '.join(sorted(ENCODERS))}")
    return ENCODERS[name](vocab_size, dim, **options)


__all__ = [
    "ENCODERS",
    "PAD_ID",
    "AttentiveGRUEncoder",
    "AttentiveLSTMEncoder",
    "AvgEncoder",
    "BiLSTMEncoder",
    "CNNEncoder",
    "GRANEncoder",
    "GRUEncoder",
    "LSTMEncoder",
    "LinearBOWEncoder",
    "MaskedAttentionPooling",
    "SentenceEncoder",
    "TransformerEmbedder",
    "TransformerEncoder",
    "build_encoder",
    "make_word_embedding",
    "touched_rows",
]
