"""Elgohary & Carpuat's reproduction: the paper's numbers keyed right, each cell's training config, undertrained-word
ratios."""

from __future__ import annotations

from collections import Counter

import pytest

from parabit.config import ConfigError, load_config
from parabit.papers.elgohary.analyses import undertrained_ratio
from parabit.papers.elgohary.paper import ROWS, TABLE3, paper_value
from parabit.papers.elgohary.config import ReproductionConfig, phrase_data_paths, train_config
from parabit.paths import PROJECT_ROOT
from parabit.phrases import PhrasesConfig
from parabit.text.tokenize import Tokenizer


def test_paper_numbers_are_keyed_to_parabit_scores():
    assert len(TABLE3) == len(ROWS) == 24
    assert paper_value("sts2012", "MSRpar", "bilingual_phrases", "jbi") == 0.54
    assert paper_value("sick", "test", "ppdb", "jpa") == paper_value("sick", "test", "pivot_paraphrases", "jpa") == 0.62
    assert paper_value("sts2015", "mean", "bilingual_sentences", "jbi") == 0.59


def test_training_configs_of_the_cells():
    config = load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml")
    paths = phrase_data_paths(load_config(PhrasesConfig, PROJECT_ROOT / config.phrases_config))
    jbi = train_config(config, "bilingual_phrases", "jbi", paths)
    assert (jbi.objective.negatives, jbi.objective.margin, jbi.objective.regularization, jbi.optim.batch_size) == \
        (15, 1.0, 1e-3, 25)
    assert jbi.data.path.endswith("phrase_table/data") and jbi.optim.epochs == 10 and jbi.data.max_pairs is None
    jpa = train_config(config, "pivot_paraphrases", "jpa", paths, "-x", drop_bigrams_of=["sick"])
    assert (jpa.name, jpa.objective.distance, jpa.data.drop_bigrams_of) == (
        "elgohary-pivot_paraphrases-jpa-x", "cosine", ("sick",))
    with pytest.raises(ConfigError, match=r"conditions\[0\]: Input should be"):
        load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml", {"conditions": ["pairs_parquet"]})


def test_undertrained_ratio_counts_token_occurrences():
    counts = Counter({"a": 500, "man": 99, "plays": 100})
    # tokens: a man plays guitar . → man (99), guitar (0), "." (0) are under 100
    assert undertrained_ratio(counts, ["A man plays guitar."], Tokenizer()) == pytest.approx(3 / 5)


def _restored_plan(phrase_sweep: dict | None):
    from parabit.papers.elgohary.plan import ElgoharyPlan
    from parabit.reproduction.config import ReproduceConfig
    from parabit.papers.plan import PlanContext

    config = load_config(ReproduceConfig, PROJECT_ROOT / "jobs/configs/reproduction.yaml",
                         {"name": "elgohary-test", "papers": ["elgohary"]})
    plan = ElgoharyPlan(PlanContext(config, {}))
    sentences = {"objective.distance": "euclidean", "objective.margin": 1, "objective.regularization": 0.001,
                 "objective.negatives": 15, "optim.batch_size": 25}
    sweep = {"name": "s", "space": "tuning/spaces/jbi_elgohary.yaml", "parent_run_id": "r", "best_params": sentences,
             "best_dev_score": 0.61, "trials": []}
    plan.restore({"data_paths": {"bilingual_phrases": "/p/phrase_table/data", "pivot_paraphrases": "/p/pivot/data"},
                  "available": {}, "sizes": [], "jbi": {**plan.config.jbi, **sentences}, "sweep": sweep,
                  "phrase_sweep": phrase_sweep, "undertrained": {}, "filtered": {}})
    return {group.key: group.config for group in plan.groups()}


def test_bilingual_phrases_train_j_bi_with_the_phrase_sweeps_choice_as_the_paper_tuned_each_condition():
    phrases = {"objective.distance": "cosine", "objective.margin": 0.4, "objective.regularization": 1e-5,
               "objective.negatives": 5, "optim.batch_size": 50}
    configs = _restored_plan({"name": "p", "space": "tuning/spaces/jbi_elgohary.yaml", "parent_run_id": "q",
                              "best_params": phrases, "best_dev_score": 0.6, "trials": []})
    for key in ("bilingual_phrases-jbi", "bilingual_phrases-jbi-nosickbigram"):
        objective = configs[key].objective
        assert (objective.distance, objective.margin, objective.regularization, objective.negatives,
                configs[key].optim.batch_size) == ("cosine", 0.4, 1e-5, 5, 50), key
    for key in ("bilingual_sentences-jbi", "ppdb-jbi", "pivot_paraphrases-jbi"):
        assert (configs[key].objective.distance, configs[key].optim.batch_size) == ("euclidean", 25), key
    assert configs["bilingual_phrases-jpa"].objective.name == "jpa"


def test_a_record_from_before_the_phrase_sweep_keeps_the_settings_its_cells_were_trained_with():
    configs = _restored_plan(None)
    assert (configs["bilingual_phrases-jbi"].objective.distance, configs["bilingual_phrases-jbi"].optim.batch_size) \
        == ("euclidean", 25)
