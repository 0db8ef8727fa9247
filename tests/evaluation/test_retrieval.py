"""P@k and MRR on a toy ranking, checked against hand computation."""

from __future__ import annotations

import numpy as np
import pytest

from parabit.evaluation.retrieval import gold_ranks, retrieval_scores


def test_ranks_on_a_toy_space_match_hand_computation():
    candidates = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    queries = np.array([[0.9, 0.1],    # nearest: 1 (d²=.02), 0 (.82), 2 (4.42), 3 → gold 1 at rank 1
                        [0.1, 1.8],    # nearest: 2 (.05), 0 (3.25), 1 (4.05) → gold 0 at rank 2
                        [2.0, 2.0]])   # d²: 0→8, 1→5, 2→4, 3→2 → gold 0 at rank 4
    ranks = gold_ranks(queries, candidates, np.array([1, 0, 0]))
    assert ranks.tolist() == [1, 2, 4]


def test_precision_and_mrr_match_hand_computation():
    scores = retrieval_scores(np.array([1, 2, 4, 12, 1]), ks=(1, 10))
    assert scores["p_at_1"] == pytest.approx(2 / 5)
    assert scores["p_at_10"] == pytest.approx(4 / 5)
    assert scores["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 1 / 12 + 1) / 5)


def test_ties_count_against_the_gold_word():
    candidates = np.array([[1.0, 0.0], [1.0, 0.0]])
    assert gold_ranks(np.array([[1.0, 0.0]]), candidates, np.array([0])).tolist() == [2]


def test_empty_or_zero_based_ranks_are_refused():
    with pytest.raises(ValueError, match="empty"):
        retrieval_scores(np.array([], dtype=int))
    with pytest.raises(ValueError, match="1-based"):
        retrieval_scores(np.array([0, 1]))


def test_cosine_ranking_is_euclidean_ranking_of_unit_vectors():
    from parabit.evaluation.metrics import unit_rows

    candidates = np.array([[10.0, 0.0], [0.5, 0.5], [0.0, 3.0]])
    query = np.array([[1.0, 1.2]])
    # by Euclidean distance the short vector [0.5, 0.5] is nearest; by angle, [0.5, 0.5] (45°) is too, [0, 3] second
    assert gold_ranks(query, candidates, np.array([2])).tolist() == [2]
    assert gold_ranks(unit_rows(query), unit_rows(candidates), np.array([0])).tolist() == [3]
