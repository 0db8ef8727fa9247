"""A finding's verdict: a large difference decides at any seed count, a small one needs three seeds and a
t-interval; data-derived findings and references computed from the data involve no seed of their own."""

from __future__ import annotations

import pytest

from parabit.papers.cells import Results
from parabit.papers.findings import FAILS, HOLDS, NOT_RUN, UNDECIDED, UNTESTABLE, Finding, verdict
from parabit.papers.metrics import Metric
from parabit.papers.tables import Entry

from .test_tables import result

P_AT_1 = Metric.named("es-en/test/p_at_1", "es-en P@1 %", scale=100, digits=1)


@pytest.mark.parametrize("differences, expected", [
    ([], NOT_RUN),
    ([0.06], HOLDS),                      # five points or more: the sign decides, even at one seed
    ([-0.07], FAILS),
    ([0.02], UNDECIDED),                  # small, one seed
    ([0.02, 0.021, 0.019], HOLDS),        # small, three seeds, interval above 0
    ([-0.02, -0.021, -0.019], FAILS),     # reversed
    ([0.02, -0.02, 0.001], FAILS),        # small and within noise: the claim is not shown
])
def test_the_verdict_rule(differences, expected):
    assert verdict(differences)[0] == expected


def test_reasons_are_in_the_metrics_display_units():
    assert verdict([0.02], scale=100)[1] == "|difference| < 5 needs ≥ 3 seeds (have 1)"


def test_a_reference_from_the_data_is_compared_with_every_seed_of_the_group():
    results = Results([result("att", seed, {P_AT_1.keys[0]: value}) for seed, value in ((1, 0.040), (2, 0.045),
                                                                                       (3, 0.042))])
    finding = Finding("ATT > reference", "att", "space mean", P_AT_1, reference=0.012)
    assert finding.groups == ("att",)
    comparison = finding.compare(results)
    assert comparison.verdict == HOLDS and comparison.differences == pytest.approx([0.028, 0.033, 0.030])
    assert comparison.difference_text() == "+3.0 ± 0.3 (n=3)"
    assert finding.compare(Results([])).reason == "no finished cell of att"


def test_fixed_and_untestable_findings_need_no_cells():
    fixed = Finding("more pairs", metric=P_AT_1, fixed=(0.3, 0.2))
    assert fixed.groups == () and fixed.compare(Results([])).verdict == HOLDS
    assert fixed.compare(Results([])).difference_text() == "+10.0 (from the data)"
    untestable = Finding("on Tibetan", untestable="no Tibetan data")
    assert untestable.compare(Results([])).verdict == UNTESTABLE


def test_a_table_entry_may_be_a_value_from_the_data():
    assert Entry(None, P_AT_1, paper=0.5, value=0.0123).text(Results([])) == "1.2 (50.0)"
    assert Entry(None, P_AT_1, paper=0.5).text(Results([])) == "— (50.0)"


def _with_starts(values: dict[str, tuple[list[float], list[float]]]) -> Results:
    """Results whose cells logged a trained ``sts/mean`` and their untrained start ``untrained/sts/mean``."""
    return Results([result(group, seed, {"sts/mean": trained, "untrained/sts/mean": start})
                    for group, (series, starts) in values.items()
                    for seed, (trained, start) in enumerate(zip(series, starts), start=1)])


def test_a_finding_between_two_cells_training_made_worse_than_their_start_is_not_testable_never_holds():
    sts = Metric.named("sts/mean", "STS mean r")
    finding = Finding("phrases beat sentences", "phrases", "sentences", sts, untrained="untrained")
    both_below = _with_starts({"phrases": ([0.40, 0.41, 0.40], [0.47, 0.47, 0.47]),
                               "sentences": ([0.30, 0.29, 0.30], [0.47, 0.47, 0.47])})
    comparison = finding.compare(both_below)
    assert comparison.verdict == UNTESTABLE  # +0.10 would hold, but it compares two broken models
    assert comparison.reason.startswith("training made both worse than their untrained start (phrases 0.403 < its "
                                        "start 0.470")
    # Without the start it would hold: the rule is what stops it.
    assert Finding("phrases beat sentences", "phrases", "sentences", sts).compare(both_below).verdict == HOLDS
    one_below = _with_starts({"phrases": ([0.60, 0.61, 0.60], [0.47, 0.47, 0.47]),
                              "sentences": ([0.30, 0.29, 0.30], [0.47, 0.47, 0.47])})
    comparison = finding.compare(one_below)
    assert comparison.verdict == HOLDS and comparison.reason.endswith("(sentences 0.297 < its start 0.470)")


def test_a_within_noise_verdict_is_told_apart_from_a_reversal():
    results = Results([result(g, seed, {P_AT_1.keys[0]: v}) for g, series in
                       (("a", (0.40, 0.42, 0.41)), ("b", (0.41, 0.40, 0.42))) for seed, v in enumerate(series, 1)])
    noise = Finding("a > b", "a", "b", P_AT_1).compare(results)
    assert noise.verdict == FAILS and noise.within_noise
    reversed_ = Finding("b > a", "b", "a", P_AT_1).compare(Results(
        [result(g, s, {P_AT_1.keys[0]: v}) for g, series in (("a", (0.50, 0.51, 0.50)), ("b", (0.40, 0.41, 0.40)))
         for s, v in enumerate(series, 1)]))
    assert reversed_.verdict == FAILS and not reversed_.within_noise
