"""The embedder encodes each distinct sentence once and gives every input row its sentence's vector."""

import numpy as np
import torch

import pytest

from parabit.embedder import SentenceEmbedder, UnknownWords
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


def test_each_unknown_word_gets_a_row_of_its_own_under_the_own_rule():
    torch.manual_seed(0)
    vocab = Vocabulary([f"en:{w}" for w in "a man plays guitar the cat".split()])
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": 8, "options": {"pooling": "sum"}}
    shared = SentenceEmbedder(SentenceEmbedder.build_encoder(spec, sparse=False), spec, vocab, Tokenizer("regexp"))
    own = shared.with_unknown(UnknownWords("own", seed=1, std=0.1))
    sentences = ["zebra", "violin", "a man plays guitar", "a man plays violin", "zebra violin"]
    vectors, before = own.encode(sentences), shared.encode(sentences)
    # One shared row: every unknown word is the same vector. Own rows: no two unknown words share one.
    np.testing.assert_allclose(before[0], before[1])
    assert not np.allclose(vectors[0], vectors[1])
    np.testing.assert_allclose(vectors[2], before[2], rtol=1e-6)  # known words are untouched
    np.testing.assert_allclose(vectors[4], vectors[0] + vectors[1], rtol=1e-5, atol=1e-6)  # sum of the two rows
    # A word's row is the same in every call (seeded by the word), drawn from N(0, std^2).
    np.testing.assert_allclose(own.encode(["violin", "zebra"]), vectors[[1, 0]])
    rows = UnknownWords("own", seed=1, std=0.1).rows([f"w{i}" for i in range(2000)], "en", 8)
    assert abs(float(rows.std()) - 0.1) < 0.005 and abs(float(rows.mean())) < 0.005
    assert not np.allclose(UnknownWords("own", seed=2, std=0.1).rows(["zebra"], "en", 8), vectors[0])


def test_own_unknown_rows_need_an_encoder_that_reads_rows_beyond_its_table():
    vocab = Vocabulary(["en:a"])
    spec = {"encoder": "gru", "vocab_size": len(vocab), "dim": 8, "options": {"hidden_size": 4}}
    with pytest.raises(ValueError, match="averaging encoder"):
        SentenceEmbedder(SentenceEmbedder.build_encoder(spec), spec, vocab, Tokenizer(), unknown=UnknownWords("own"))
