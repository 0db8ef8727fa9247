"""BLI on a hand-made 2-d space: ranks of the best gold translation by cosine, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from parabit.evaluation.bli import bli_ranks, bli_scores, standard_bli_sets
from parabit.recipes.bildrl.space import BilingualSpace
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary


def _space() -> BilingualSpace:
    vocab = Vocabulary.build({"en": {"dog": 2, "cat": 2}, "es": {"perro": 2, "gato": 2, "casa": 2}})
    vectors = np.zeros((len(vocab), 2), np.float32)
    place = {("en", "dog"): (1.0, 0.1), ("en", "cat"): (0.0, 1.0),
             ("es", "perro"): (2.0, 0.0), ("es", "gato"): (1.0, 0.2), ("es", "casa"): (0.1, 1.0)}
    for lang in ("en", "es"):
        for index, word in vocab.words(lang):
            vectors[index] = place.get((lang, word), (-1.0, -1.0))   # the unknown word points away from everything
    return BilingualSpace(vocab, vectors, Tokenizer())


def test_ranks_take_the_best_gold_translation_and_skip_missing_words():
    space = _space()
    # dog: cosines perro .9950, gato .9952 (best), casa .20 → gold {perro} rank 2, {perro, gato} rank 1;
    # cat: casa .995, gato .196, perro 0 → gold gato rank 2. "lobo" is not in the space.
    ranks, skipped = bli_ranks(space, [("dog", "perro"), ("cat", "gato"), ("dog", "lobo")], "en", "es")
    assert ranks.tolist() == [2, 2] and skipped == 1
    ranks, _ = bli_ranks(space, [("dog", "perro"), ("dog", "gato")], "en", "es")
    assert ranks.tolist() == [1]
    scores = bli_scores(space, [("dog", "perro"), ("cat", "casa")], "en", "es")
    assert scores["p_at_1"] == pytest.approx(0.5) and scores["mrr"] == pytest.approx(0.75) and scores["words"] == 2


def test_the_shipped_test_sets_load():
    sets = standard_bli_sets("es")
    assert set(sets) == {"es-en Wiktionary test", "en-es MUSE 5000-6500"}
    pairs, src, tgt = sets["en-es MUSE 5000-6500"]
    assert (src, tgt) == ("en", "es") and len(pairs) == 4394
    pairs, src, tgt = standard_bli_sets("fr")["fr-en Wiktionary test"]
    assert (src, tgt) == ("fr", "en") and len(pairs) > 2000


def test_average_is_the_mean_of_the_token_vectors():
    space = _space()
    dog, cat = space.vectors[space.words("en")["dog"]], space.vectors[space.words("en")["cat"]]
    averaged = space.average(["dog cat", "Dog"], "en")
    assert np.allclose(averaged[0], (dog + cat) / 2) and np.allclose(averaged[1], dog)
