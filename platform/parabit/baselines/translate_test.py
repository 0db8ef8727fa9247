"""Translate-test with a transformer: what a user with an English sentence model and a translator tries first."""

from __future__ import annotations

from parabit.text.tokenize import Tokenizer


def translate_test_minilm(tokenizer: Tokenizer | None = None):
    """Spanish sentences translated into English by Apertium (spa-eng), then every sentence encoded by the packaged
    all-MiniLM-L6-v2 (extra ``parabit[teacher]``; its own word pieces, mean pooling, unit vectors); which sentences are
    Spanish is told by py3langid. ``tokenizer`` is not read (the transformer brings its own)."""
    from parabit.checkpoints import packaged_checkpoint
    from parabit.encoders.transformer import TransformerEmbedder, TransformerEncoder
    from parabit.export.translate_test import TranslateTestEmbedder

    encoder = TransformerEncoder.from_checkpoint(packaged_checkpoint("packaged:all-MiniLM-L6-v2", "the encoder "
                                                                     "'translate-test-minilm'"), sparse=False)
    return TranslateTestEmbedder(TransformerEmbedder(encoder.eval(), ("en",)), "apertium", {"mode": "spa-eng"}, "es",
                                 detector="langid")
