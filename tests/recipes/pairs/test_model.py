from collections import Counter

import numpy as np
import pytest
import torch

from parabit.config import ConfigError
from parabit.recipes.pairs.config import ModelConfig
from parabit.recipes.pairs.model import initial_word_table
from parabit.text.glove import load_glove
from parabit.text.vocab import Vocabulary


def glove_vector(word: str) -> np.ndarray:
    words, vectors = load_glove()
    return np.asarray(vectors[words.index(word)])


def test_foreign_words_start_at_their_english_translations():
    vocab = Vocabulary.build({"en": Counter(["house"]), "es": Counter(["casa", "zzqxw"])})
    torch.manual_seed(0)
    table = initial_word_table(ModelConfig(dim=50, init="glove", foreign_init="muse", init_std=0.1), vocab).numpy()
    # MUSE es-en: casa -> house, home
    expected = (glove_vector("house") + glove_vector("home")) / 2
    np.testing.assert_allclose(table[vocab.id("casa", "es")], expected, rtol=1e-5)
    np.testing.assert_allclose(table[vocab.id("house", "en")], glove_vector("house"), rtol=1e-6)
    # a word no dictionary knows keeps a small random vector
    assert np.linalg.norm(table[vocab.id("zzqxw", "es")]) < 0.5 * np.linalg.norm(expected)

    random_foreign = initial_word_table(ModelConfig(dim=50, init="glove", init_std=0.1), vocab).numpy()
    assert not np.allclose(random_foreign[vocab.id("casa", "es")], expected)


def test_muse_placement_needs_glove():
    with pytest.raises((ConfigError, ValueError), match="foreign_init 'muse'"):
        ModelConfig(dim=50, init="random", foreign_init="muse")
