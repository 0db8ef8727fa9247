"""Pivot paraphrases on a toy phrase table, against hand computation."""

from __future__ import annotations

from collections import Counter

import pytest

from parabit.phrases.config import PivotConfig
from parabit.phrases.pivot import pivot_reasons, pivot_scores
from parabit.phrases.table import counts_table, phrase_probabilities

# casa: house 3, home 1; hogar: house 1, home 2; edificio: building 1, house 1
TOY = Counter({("house", "casa"): 3, ("home", "casa"): 1, ("house", "hogar"): 1, ("home", "hogar"): 2,
               ("building", "edificio"): 1, ("house", "edificio"): 1})


def scores(table):
    return {(r["phrase"], r["paraphrase"]): (r["score"], r["pivots"]) for r in table.to_pylist()}


def test_scores_match_hand_computation():
    got = scores(pivot_scores(phrase_probabilities(counts_table(TOY))))
    # p(f|house): casa 3/5, hogar 1/5, edificio 1/5; p(home|casa) 1/4, p(home|hogar) 2/3, p(building|edificio) 1/2
    assert got[("house", "home")][0] == pytest.approx(3 / 5 * 1 / 4 + 1 / 5 * 2 / 3)
    assert got[("house", "home")][1] == 2
    assert got[("house", "building")] == (pytest.approx(1 / 5 * 1 / 2), 1)
    # p(f|home): casa 1/3, hogar 2/3; p(house|casa) 3/4, p(house|hogar) 1/3
    assert got[("home", "house")][0] == pytest.approx(1 / 3 * 3 / 4 + 2 / 3 * 1 / 3)
    # p(edificio|building) = 1, p(house|edificio) = 1/2
    assert got[("building", "house")][0] == pytest.approx(1 / 2)
    assert ("home", "building") not in got and ("house", "house") not in got
    assert len(got) == 4


def test_pivot_top_k_limits_the_english_phrases_of_each_pivot():
    got = scores(pivot_scores(phrase_probabilities(counts_table(TOY)), pivot_top_k=1))
    assert got == {}  # every pivot keeps only its most likely English phrase: no pairs left


def test_pruning_reasons():
    table = pivot_scores(phrase_probabilities(counts_table(TOY + Counter({("house .", "casa"): 1}))))
    reasons = dict(zip(zip(table["phrase"].to_pylist(), table["paraphrase"].to_pylist()),
                       pivot_reasons(table, PivotConfig(top_k=1, min_score=0.2)).to_pylist()))
    assert reasons[("house", "house .")] == "differs only in punctuation"
    assert reasons[("house", "home")] is None                    # 0.283..., the best of "house"
    assert reasons[("house", "building")] == "score below 0.2"  # 0.1
    assert reasons[("building", "house")] is None
