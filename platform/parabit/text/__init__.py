"""Tokenisation and vocabulary shared by pipelines, training, evaluation and the exported model."""

from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary, pad_batch

__all__ = ["Tokenizer", "Vocabulary", "pad_batch"]
