"""Each filter's score on a small hand-checked example, and its accept decision kept apart from scoring."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parabit.filters import (BleuFilter, FilterError, LanguageModelFilter, LengthRatioFilter, NgramOverlapFilter,
                             ReferenceClassifierFilter, TokenLengthFilter, TranslationCostFilter, build_filter)

# Tokens (regexp tokenizer, lower-cased): reference = the cat sat on the mat . (7), translation = the cat sat on a
# mat . (7); second pair: i am hungry . (4) vs it spent . (3).
PAIRS = {"reference": ["The cat sat on the mat.", "I am hungry."], "translation": ["The cat sat on a mat.", "It spent."]}


def test_token_length_scores_both_sides_and_accepts_a_range():
    scores = TokenLengthFilter().score(PAIRS)
    np.testing.assert_array_equal(scores, [[7, 7], [4, 3]])
    assert TokenLengthFilter().accept(scores, min_tokens=4, max_tokens=10).tolist() == [True, False]  # 3 < 4


def test_length_ratio_is_longer_over_shorter():
    scores = LengthRatioFilter().score(PAIRS)
    np.testing.assert_allclose(scores, [7 / 7, 4 / 3])
    assert LengthRatioFilter().accept(scores, max_ratio=1.3).tolist() == [True, False]


def test_ngram_overlap_divides_shared_ngrams_by_the_shorter_side():
    # Unigrams: shared {the, cat, sat, on, mat, .} = 6 (the reference's second "the" has no partner) of 7 → 6/7.
    # Pair 2: shared {.} = 1, shorter side "it spent ." has 3 → 1/3.
    np.testing.assert_allclose(NgramOverlapFilter(1).score(PAIRS), [6 / 7, 1 / 3])
    # Bigrams: (the cat) (cat sat) (sat on) (mat .) shared = 4 of 6 → 4/6. Pair 2: none of 2 → 0.
    np.testing.assert_allclose(NgramOverlapFilter(2).score(PAIRS), [4 / 6, 0.0])
    # Trigrams: (the cat sat) (cat sat on) shared = 2 of 5 → 2/5; pair 2: "it spent ." has 1 trigram, none shared.
    np.testing.assert_allclose(NgramOverlapFilter(3).score(PAIRS), [2 / 5, 0.0])


def test_ngram_overlap_of_a_side_too_short_has_no_score_and_fails_only_a_set_bound():
    scores = NgramOverlapFilter(3).score({"reference": ["Hi."], "translation": ["Hello there ."]})
    assert math.isnan(scores[0])
    assert NgramOverlapFilter(3).accept(scores).tolist() == [True]
    assert NgramOverlapFilter(3).accept(scores, minimum=0.0).tolist() == [False]


def test_bleu_matches_the_hand_computed_value():
    # Modified precisions: 1-grams 6/7, 2-grams 4/6, 3-grams 2/5, 4-grams (the cat sat on) 1/4; same length → BP = 1.
    expected = math.exp((math.log(6 / 7) + math.log(4 / 6) + math.log(2 / 5) + math.log(1 / 4)) / 4)
    scores = BleuFilter().score(PAIRS)
    assert scores[0] == pytest.approx(expected)  # ≈ 0.4889
    assert BleuFilter().accept(scores, minimum=0.3).tolist() == [True, False]


def test_language_model_prefers_the_sentence_it_has_seen():
    model = LanguageModelFilter(lambdas=(0.6, 0.3, 0.1)).fit(["The dog barks."], [])
    # Vocabulary: <unk> <s> </s> . barks dog the → V = 7; N = 5 predicted tokens (the dog barks . </s>).
    # "the dog barks ." + </s>: every trigram and bigram was seen exactly once with its context seen once, so
    # p = 0.6 + 0.3 + 0.1 * (1 + 1) / (5 + 7) for each of the 5 tokens.
    seen = math.log(0.6 + 0.3 + 0.1 * 2 / 12)
    scores = model.score({"reference": ["x", "x"], "translation": ["The dog barks.", "Cats sleep."]})
    assert scores[0] == pytest.approx(seen)
    assert scores[1] < scores[0]
    assert model.accept(scores, minimum=-1.0).tolist() == [True, False]


def test_classifier_learns_which_side_reads_like_a_reference():
    references = ["I am hungry.", "Where is the bathroom?", "She reads a book.", "We love music."] * 10
    translations = ["It spent.", "Where it is the bath?", "It reads a book.", "It loves music."] * 10
    classifier = ReferenceClassifierFilter().fit(references, translations)
    scores = classifier.score({"reference": ["", ""], "translation": ["Where is the bathroom?", "Where it is the bath?"]})
    assert scores[0] > 0.5 > scores[1]
    assert classifier.accept(scores, minimum=0.5).tolist() == [True, False]


def test_translation_cost_needs_an_engine_that_reports_costs():
    cost = TranslationCostFilter()
    with pytest.raises(FilterError, match="does not provide"):
        cost.score(PAIRS)
    scores = cost.score({**PAIRS, "token_costs": [[0.5, 1.5], [4.0]]})
    np.testing.assert_allclose(scores, [1.0, 4.0])
    assert cost.accept(scores, max_cost=2.0).tolist() == [True, False]


def test_unknown_filter_lists_the_registered_ones():
    with pytest.raises(FilterError, match=r"unknown filter 'perplexity'; choose one of \['bilingual', 'bleu'"):
        build_filter("perplexity")
