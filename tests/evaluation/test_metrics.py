import numpy as np
import pytest

from parabit.evaluation.metrics import encode_pairs, pearson, row_cosines, spearman


def test_pearson_of_a_known_toy_pair_of_lists():
    # x = 1..5, y = 2, 4, 5, 4, 5: cov = 1.5 * 4/4 ..., r = 0.7745966692 (hand-computed: 6 / sqrt(10 * 6)).
    assert pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5]) == pytest.approx(6 / np.sqrt(10 * 6))


def test_spearman_is_rank_based():
    assert spearman([1, 2, 3, 4], [1, 10, 100, 1000]) == pytest.approx(1.0)
    assert pearson([1, 2, 3, 4], [1, 10, 100, 1000]) < 0.9


def test_constant_input_scores_zero_instead_of_nan():
    assert pearson([1, 1, 1], [1, 2, 3]) == 0.0


def test_row_cosines_with_zero_rows():
    a = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    b = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 2.0]])
    assert row_cosines(a, b).tolist() == pytest.approx([0.0, 0.0, 1.0])


def test_encode_pairs_encodes_each_distinct_sentence_once():
    calls = []

    def encode(sentences):
        calls.append(list(sentences))
        return np.array([[len(s), 1.0] for s in sentences])

    left, right = encode_pairs(encode, ["ab", "abc", "ab"], ["abc", "x", "ab"])
    assert calls == [["ab", "abc", "x"]]
    assert left[:, 0].tolist() == [2, 3, 2] and right[:, 0].tolist() == [3, 1, 2]


def test_encode_must_return_one_row_per_sentence():
    with pytest.raises(ValueError, match="one row per sentence"):
        encode_pairs(lambda s: np.zeros((1, 3)), ["a", "b"], ["c", "d"])


def test_pearson_and_spearman_equal_scipy_s_on_real_tied_scores():
    """STS 2016's gold scores against each pair's shorter length: both sides full of ties (spearman's mean ranks)."""
    from scipy import stats

    from parabit.data.sts import read_sts_year

    pairs = [pair for subset in read_sts_year(2016) for pair in subset.pairs]
    gold = [pair.score for pair in pairs]
    lengths = [min(len(pair.sentence_a.split()), len(pair.sentence_b.split())) for pair in pairs]
    assert len(set(lengths)) < len(lengths) / 10 and len(set(gold)) < len(gold) / 2
    assert pearson(gold, lengths) == pytest.approx(stats.pearsonr(gold, lengths).statistic, abs=1e-12)
    assert spearman(gold, lengths) == pytest.approx(stats.spearmanr(gold, lengths).statistic, abs=1e-12)
