"""Departures: a departure's other choice measured like a finding, the paper's claim read under it, and the cause a
finding that does not hold is given."""

from __future__ import annotations

import pytest

from parabit.papers.cells import Results
from parabit.papers.departures import GENUINE, NO_DIFFERENCE, Departure, cause
from parabit.papers.findings import FAILS, HOLDS, Finding
from parabit.papers.metrics import Metric

from .test_tables import result

STS = Metric.named("sts/mean", "STS mean r")
CLAIM = Finding("phrases beat sentences", "phrases", "sentences", STS)


def _results(values: dict[str, list[float]], prefixed: dict[str, list[float]] | None = None) -> Results:
    rows = []
    for group, series in values.items():
        for seed, value in enumerate(series, start=1):
            metrics = {"sts/mean": value}
            if prefixed and group in prefixed:
                metrics["shared/sts/mean"] = prefixed[group][seed - 1]
            rows.append(result(group, seed, metrics))
    return Results(rows)


def test_a_finding_that_holds_only_under_a_departures_other_choice_names_that_departure_as_its_cause():
    results = _results({"phrases": [0.40, 0.41, 0.40], "sentences": [0.45, 0.46, 0.45],
                        "phrases-sum": [0.52, 0.53, 0.52], "sentences-sum": [0.46, 0.47, 0.46]})
    composition = Departure("composition", "sum", "mean", "sum composition",
                            {"phrases": "phrases-sum", "sentences": "sentences-sum"})
    unmeasured = Departure("data", "Europarl", "Tatoeba", unmeasured="not shipped")
    comparison = CLAIM.compare(results)
    assert comparison.verdict == FAILS
    assert cause(comparison, [composition, unmeasured], results).startswith(
        "composition: holds with sum composition (+0.060")
    swapped = composition.under(CLAIM)
    assert (swapped.better, swapped.worse) == ("phrases-sum", "sentences-sum")
    assert swapped.compare(results).verdict == HOLDS
    # Its effect on each group it touches: the other choice against ours, decided like a finding.
    effects = {(e.better, e.worse): e.compare(results).mean for e in composition.effects(STS, ["phrases", "sentences"])}
    assert abs(effects[("phrases-sum", "phrases")] - 0.12) < 1e-9 and abs(effects[("sentences-sum", "sentences")] - 0.01) < 1e-9


def test_no_measured_departure_that_turns_it_is_a_genuine_difference_naming_what_was_not_measured():
    results = _results({"phrases": [0.40, 0.41, 0.40], "sentences": [0.45, 0.46, 0.45]},
                       prefixed={"phrases": [0.39, 0.40, 0.39], "sentences": [0.45, 0.46, 0.45]})
    shared = Departure("unknown words", "own rows", "own rows", "one shared row", prefix="shared")
    unmeasured = Departure("data", "Europarl", "Tatoeba", unmeasured="not shipped")
    comparison = CLAIM.compare(results)
    assert cause(comparison, [shared, unmeasured], results) == f"{GENUINE} (not measured: data)"
    # Read from the same cells under the evaluation variant's metrics: the same groups, the prefixed metric.
    effect = shared.effects(STS, ["phrases"])[0]
    assert (effect.better, effect.worse, effect.metric.keys, effect.worse_metric.keys) == (
        "phrases", "phrases", ("shared/sts/mean",), ("sts/mean",))
    assert abs(effect.compare(results).mean + 0.01) < 1e-9
    assert cause(CLAIM.compare(_results({"phrases": [0.6], "sentences": [0.4]})), [shared], results) == ""


def test_a_choice_ablated_on_one_side_of_a_finding_only_is_not_read_as_its_cause():
    """The optimiser is chosen for every condition but ablated on the phrases only: phrases-with-the-other-optimiser
    against monolingual pairs with ours would compare two choices at once. Such a finding names the departure as not
    measured on its cells, never as its cause; a choice that does not apply to the other side (a phrase-table
    setting against sentences) is read with the phrases swapped alone."""
    results = _results({"phrases": [0.40, 0.41, 0.40], "mono": [0.45, 0.46, 0.45], "sentences": [0.44, 0.45, 0.44],
                        "phrases-adam": [0.55, 0.56, 0.55], "phrases-unpruned": [0.52, 0.53, 0.52]})
    everywhere = frozenset({"phrases", "mono", "sentences"})
    optimiser = Departure("optimiser", "AdaGrad", "AdaGrad", "Adam", {"phrases": "phrases-adam"}, applies=everywhere)
    pruning = Departure("phrase table", "all pairs", "pruned", "all pairs", {"phrases": "phrases-unpruned"},
                        applies=frozenset({"phrases"}))
    mono = Finding("phrases beat monolingual pairs", "phrases", "mono", STS)
    comparison = mono.compare(results)
    assert comparison.verdict == FAILS
    assert optimiser.under(mono) is None and optimiser.unmeasured_on(mono)
    assert cause(comparison, [optimiser], results) == f"{GENUINE} (not measured: optimiser)"
    swapped = pruning.under(CLAIM)
    assert (swapped.better, swapped.worse) == ("phrases-unpruned", "sentences") and not pruning.unmeasured_on(CLAIM)
    assert cause(CLAIM.compare(results), [optimiser, pruning], results).startswith(
        "phrase table: holds with all pairs (+0.080")


def test_a_finding_computed_from_the_data_that_does_not_hold_names_the_departures_that_change_the_data():
    data, optimiser = (Departure("data", "Europarl", "Tatoeba", unmeasured="not shipped"),
                       Departure("optimiser", "AdaGrad", "Adam", "AdaGrad", {"phrases": "phrases-adagrad"}))
    shorter = Finding("phrases leave more tokens undertrained", metric=STS, fixed=(0.11, 0.20),
                      data_departures=("data",))
    results = _results({})
    assert cause(shorter.compare(results), [data, optimiser], results) == f"{GENUINE} (not measured: data)"
    assert cause(Finding("holds", metric=STS, fixed=(0.3, 0.2)).compare(results), [data], results) == ""
    misnamed = Finding("a typo", metric=STS, fixed=(0.1, 0.2), data_departures=("bitext",))
    with pytest.raises(ValueError, match="bitext"):
        cause(misnamed.compare(results), [data], results)


def test_a_finding_within_seed_noise_is_no_difference_at_this_scale_never_a_genuine_difference():
    results = _results({"phrases": [0.45, 0.46, 0.44], "sentences": [0.45, 0.44, 0.46]})
    unmeasured = Departure("data", "Europarl", "Tatoeba", unmeasured="not shipped")
    comparison = CLAIM.compare(results)
    assert comparison.verdict == FAILS and comparison.reason.startswith("within seed noise")
    assert cause(comparison, [unmeasured], results) == f"{NO_DIFFERENCE} (not measured: data)"
    reversed_ = _results({"phrases": [0.40, 0.41, 0.40], "sentences": [0.45, 0.46, 0.45]})
    assert cause(CLAIM.compare(reversed_), [unmeasured], reversed_).startswith(GENUINE)


def test_the_committed_document_gives_no_finding_within_seed_noise_a_genuine_difference_cause():
    from parabit.paths import PROJECT_ROOT

    rows = [line.split(" | ") for line in (PROJECT_ROOT / "docs" / "reproduction.md").read_text().splitlines()
            if line.startswith("| ") and "**does not hold**" in line]
    within_noise = [row for row in rows if any(cell.startswith("within seed noise") for cell in row)]
    assert within_noise  # the papers' tables do have such findings
    assert not [row for row in within_noise if GENUINE in row[-1]]
