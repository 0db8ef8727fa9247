"""The embedder encodes each distinct sentence once and gives every input row its sentence's vector."""

import numpy as np
import torch

from parabit.embedder import SentenceEmbedder
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary


def test_repeated_sentences_get_the_vectors_of_their_sentence():
    torch.manual_seed(0)
    vocab = Vocabulary([f"en:{w}" for w in "a man plays guitar the cat sleeps".split()])
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": 8, "options": {}}
    embedder = SentenceEmbedder(SentenceEmbedder.build_encoder(spec, sparse=False), spec, vocab, Tokenizer("regexp"))
    distinct = ["a man plays a guitar", "the cat sleeps", ""]
    rows = [distinct[i] for i in (1, 0, 1, 2, 0, 1)]
    encoded = embedder.encode(rows)
    alone = np.stack([embedder.encode([sentence])[0] for sentence in distinct])
    np.testing.assert_allclose(encoded, alone[[1, 0, 1, 2, 0, 1]], rtol=1e-6, atol=1e-6)
    assert not np.allclose(alone[0], alone[1])
