"""Wieting et al.'s data step on small real data, as the full reproduction runs it (not its quick mode): the Apertium
back-translations of 800 Tatoeba pairs scored by every filter, each variant's own seeded selection, a threshold
sweep on the dev set (Ray Tune, one epoch per trial), the length cells, and the engine comparison with the real
offline marian-pt round trips; then its facts restored into a plan that never prepared, giving the same cells."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from parabit.paths import project_path
from parabit.papers.cells import Results
from parabit.reproduction.config import ReproduceConfig
from parabit.papers.plan import PlanContext
from parabit.reproduction.paper_run import PaperRun
from parabit.reproduction.reproduce import Reproduction
from parabit.papers.wieting.plan import WietingPlan
from pipelines import backtranslate

SIZE = 150


# Over 120 s (~2.5-4 min in the full suite on 2 cores): the full data step, not quick mode (Apertium back-translation,
# every filter, a Ray Tune threshold sweep with one epoch per trial, the marian-pt engine comparison). It runs once for
# the module: its tests all read the one prepared plan.
@pytest.fixture(scope="module")
def prepared(ray_session, outputs, tmp_path_factory):
    folder = tmp_path_factory.mktemp("wieting")
    pipeline = yaml.safe_load(project_path("jobs/configs/wieting/backtranslate_apertium.yaml").read_text())
    pipeline["sources"] = [{"format": "tatoeba", "lang": "es", "limit": 800}]
    train = yaml.safe_load(project_path("jobs/configs/wieting/train_avg.yaml").read_text())
    train["data"]["glove_words"] = 0
    for name, content in (("backtranslate.yaml", pipeline), ("train.yaml", train)):
        (folder / name).write_text(yaml.safe_dump(content))
    config = ReproduceConfig(name="wieting-test", papers=("wieting",), repeats=1, wieting={
        "backtranslate": str(folder / "backtranslate.yaml"), "train": str(folder / "train.yaml"),
        "roundtrip": "jobs/configs/wieting/roundtrip_marian.yaml",
        "sample_size": SIZE, "tune_epochs": 1, "engine_sample": 40, "length_ranges": [[0, 6], [6, None]],
        "filters": [{"name": "bleu", "windows": [[None, 0.5], [0.5, None]]}]})
    plan = WietingPlan(PlanContext(config, {"backtranslate": backtranslate.run}))
    plan.prepare()
    return plan


def rows(path):
    return pq.read_table(path).to_pylist()


@pytest.mark.slow
def test_each_variant_is_its_own_seeded_selection_of_the_scored_pairs(prepared):
    plan = prepared
    assert plan.prepared.sizes["main"] == SIZE
    unfiltered = rows(plan.prepared.paths["bt-unfiltered"])
    assert len(unfiltered) == SIZE and len({r["row_id"] for r in unfiltered}) == SIZE
    assert all(r["text_a"] != r["text_b"] for r in unfiltered)  # identical pairs teach nothing
    tuned = plan.prepared.tuned["bleu"]
    chosen = rows(plan.prepared.paths["bt-bleu"])
    assert plan.prepared.paths["bt-bleu"] == project_path(tuned.chosen.path) and len(chosen) == SIZE
    bounds = tuned.chosen.thresholds
    assert all(bounds.get("minimum", -np.inf) <= r["bleu"] <= bounds.get("maximum", np.inf) for r in chosen)
    # the windows are quantiles of the score: the two candidates keep disjoint halves of the pairs by BLEU
    low, high = (rows(t.path) for t in tuned.trials)
    assert max(r["bleu"] for r in low) <= min(r["bleu"] for r in high)
    assert chosen != unfiltered


@pytest.mark.slow
def test_the_threshold_sweep_scores_every_window_on_the_dev_set_and_keeps_the_best(prepared):
    plan = prepared
    tuned = plan.prepared.tuned["bleu"]
    scores = [t.dev_score for t in tuned.trials]
    assert len(scores) == 2 and all(s is not None and np.isfinite(s) for s in scores)
    assert tuned.best == int(np.argmax(scores))
    assert "| bleu (" in plan.tables()[0].markdown(Results())


@pytest.mark.slow
def test_length_cells_hold_only_pairs_in_their_range_at_one_equal_size(prepared):
    plan = prepared
    size = plan.prepared.sizes["length"]
    assert 0 < size <= SIZE
    for key, (low, high) in (("len-0-6", (0, 6)), ("len-6-plus", (6, None))):
        selected = rows(plan.prepared.paths[key])
        assert len(selected) == size
        for r in selected:  # both sides' token counts, as the pipeline's length filter scored them
            for tokens in (r["tokens_reference"], r["tokens_translation"]):
                assert low <= tokens and (high is None or tokens <= high), (key, r["text_a"])
    assert len(rows(plan.prepared.paths["len-any"])) == size
    available = plan.prepared.available_by_range
    assert available["len-6-plus"] >= size and available["len-any"] >= size


@pytest.mark.slow
def test_the_engine_comparison_round_trips_the_same_references_through_marian_pt(prepared):
    plan = prepared
    apertium, marian = rows(plan.prepared.paths["engine-apertium"]), rows(plan.prepared.paths["engine-marian"])
    assert len(apertium) == len(marian) == plan.prepared.sizes["engines"] > 0
    assert {r["engine"] for r in marian} == {"marian-pt"} and all(r["pivot"] for r in marian)
    assert {r["engine"] for r in apertium} == {"apertium"}
    references = set(plan.prepared.engines["apertium"][0]) | set(plan.prepared.engines["marian"][0])
    assert {r["text_a"] for r in marian} <= references
    comparisons = plan._comparisons()
    assert {"apertium (all)", "apertium", "marian"} <= set(comparisons)
    assert all(0.0 <= c.classifier_accuracy <= 1.0 for c in comparisons.values() if np.isfinite(c.classifier_accuracy))


@pytest.mark.slow
def test_its_facts_restore_a_plan_that_never_prepared_with_the_same_cells(prepared):
    config = prepared.context.config
    restored = WietingPlan(PlanContext(config))
    PaperRun(restored).restore(PaperRun(prepared).prepared_facts())
    reproduction = Reproduction(config, {})
    cells = []
    for plan in (prepared, restored):
        paper = PaperRun(plan)
        paper.groups = plan.groups()
        cells.append(sorted((c.name, c.digest) for g in paper.groups
                            for c in [reproduction.cell(paper, g, 1)]))
    assert cells[0] == cells[1] and len(cells[0]) >= 12
    assert restored.setup() == prepared.setup()
    assert [t.markdown(Results()) for t in restored.tables()] == [t.markdown(Results()) for t in prepared.tables()]
    assert [f.claim for f in restored.findings()] == [f.claim for f in prepared.findings()]
