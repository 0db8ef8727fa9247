"""Table I / II layout from run metrics: values where runs exist, a dash where not, attentive gains."""

from parabit.supervised.tables import table_one, table_two

RUNS = {
    "siamese-sick-en-sialstm": {"sick-en/test/pearson": 0.70, "sick-en/test/mse01": 0.03},
    "siamese-sick-en-attsialstm": {"sick-en/test/pearson": 0.75, "sick-en/test/mse01": 0.025},
    "siamese-sick-en-attsialstm-len15": {"sick-en/test/pearson": 0.74},
    "siamese-msrp-sialstm": {"msrp/test/accuracy": 0.6, "msrp/test/f1": 0.7},
    "siamese-msrp-attsialstm": {"msrp/test/accuracy": 0.65, "msrp/test/f1": 0.75},
}


def test_table_one_has_scores_dashes_and_the_attentive_gain():
    table = table_one(RUNS)
    assert "| SiaLSTM (Baseline1) | 0.7000 | 0.0300 | — | — | — | — | 60.00% | 0.700 |" in table
    assert "| increase AttSiaLSTM over SiaLSTM (Baseline1) | +0.0500 |  | — |  | — |  | +5.00 |  |" in table


def test_table_two_reads_the_length_runs():
    assert "| AttSiaLSTM | 0.7400 | — | 0.7500 |" in table_two(RUNS)
