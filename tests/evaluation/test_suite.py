"""The suite on the real benchmarks, with the GloVe-mean baseline as a cross-check of readers and scorers."""

import numpy as np
import pytest

from parabit.baselines import build_baseline
from parabit.evaluation import EvaluationSuite, MSRPClassifierEvaluator, SICKRelatednessEvaluator, STSEvaluator
from parabit.data.sts import SimilarityPair
from parabit.evaluation.config import EvaluationConfig
from parabit.evaluation.sts import score_similarity_subset

# The plain lower-cased GloVe 6B 50d mean (SentEval's STS code agrees with these to 1e-6, issue 19). The tolerance
# guards the readers and scorers: a dropped subset, a misread gold line or a wrong average moves a year by > .005.
GLOVE_MEAN_REFERENCE = {"sts2012": 0.430, "sts2013": 0.418, "sts2014": 0.462, "sts2015": 0.469, "sts2016": 0.418}
MSRP_MAJORITY = 1147 / 1725  # predicting "paraphrase" for every test pair


@pytest.fixture(scope="module")
def glove_report():
    return EvaluationSuite.standard()(build_baseline("glove-mean").encode)


@pytest.mark.parametrize("year", sorted(GLOVE_MEAN_REFERENCE))
def test_glove_mean_matches_the_reference_per_year(glove_report, year):
    assert glove_report.value(year, "mean", "pearson") == pytest.approx(GLOVE_MEAN_REFERENCE[year], abs=0.005)


def test_glove_mean_on_sick_and_msrp(glove_report):
    assert glove_report.value("sick", "test", "pearson") == pytest.approx(0.607, abs=0.005)
    # The classifier must beat the majority class clearly (GloVe mean: .733); a constant encoder gets exactly it.
    assert glove_report.value("msrp", "test", "accuracy") > MSRP_MAJORITY + 0.04
    assert glove_report.value("msrp", "test", "f1") > 0.81


def test_a_constant_encoder_gets_only_the_majority_class_on_msrp():
    scores = {s.metric: s.value for s in MSRPClassifierEvaluator()(lambda s: np.ones((len(s), 3)))}
    assert scores["accuracy"] == pytest.approx(MSRP_MAJORITY) and scores["accuracy"] < MSRP_MAJORITY + 0.04


def test_report_names_metrics_for_mlflow_and_renders_the_seed_layout(glove_report):
    metrics = glove_report.metrics()
    assert "sts2012/MSRpar/pearson" in metrics and "sts2012/mean/pearson" in metrics
    assert "sts2015/wmean/spearman" in metrics and "msrp/test/f1" in metrics
    lines = glove_report.table().splitlines()
    assert lines[0].split()[:4] == ["benchmark", "subset", "pearson", "spearman"]
    assert any(line.startswith("sts2013 avg  mean") for line in lines)
    frame = glove_report.frame()
    assert list(frame.columns) == ["benchmark", "subset", "metric", "value", "n"]
    assert frame.query("benchmark == 'sick'")["n"].iloc[0] == 4927


def test_weighted_mean_weights_by_pairs(glove_report):
    frame = glove_report.frame().query("benchmark == 'sts2013' and metric == 'pearson'")
    subsets = frame[~frame.subset.isin(["mean", "wmean"])]
    expected = float(np.average(subsets.value, weights=subsets.n))
    assert glove_report.value("sts2013", "wmean", "pearson") == pytest.approx(expected)


def test_cosine_that_tracks_gold_scores_one():
    # Sentence "θ" encodes to the unit vector at angle θ, so cosine(a, b) = cos(θa − θb); gold is 5·cos(...).
    angles = [(0.0, 0.1), (0.2, 1.0), (0.3, 1.5), (0.4, 0.45)]
    pairs = [SimilarityPair(str(a), str(b), 5 * np.cos(a - b), i) for i, (a, b) in enumerate(angles, 1)]
    encode = lambda sentences: np.array([[np.cos(float(s)), np.sin(float(s))] for s in sentences])
    pearson_score, spearman_score = score_similarity_subset(encode, "toy", "angles", pairs)
    assert pearson_score.value == pytest.approx(1.0) and spearman_score.value == pytest.approx(1.0)
    assert pearson_score.name == "toy/angles/pearson" and pearson_score.n == 4


def test_a_constant_encoder_scores_zero_on_sick():
    scores = SICKRelatednessEvaluator()(lambda s: np.ones((len(s), 3)))
    assert [(x.metric, x.value, x.n) for x in scores] == [("pearson", 0.0, 4927), ("spearman", 0.0, 4927)]


def test_config_limits_what_runs():
    suite = EvaluationSuite.standard(EvaluationConfig(sts_years=(2016,), sick=False, msrp=False))
    assert len(suite.evaluators) == 1 and isinstance(suite.evaluators[0], STSEvaluator)
    with pytest.raises(ValueError, match="not STS benchmark years"):
        EvaluationConfig(sts_years=(2011,))


def test_plot_is_written(glove_report, tmp_path):
    path = glove_report.plot(tmp_path / "summary.png")
    assert path.stat().st_size > 5000
