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


def test_training_configs_of_the_cells_are_built_as_the_paper_writes_them():
    config = load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml")
    paths = phrase_data_paths(load_config(PhrasesConfig, PROJECT_ROOT / config.phrases_config))
    jbi = train_config(config, "bilingual_phrases", "jbi", paths)
    assert (jbi.objective.negatives, jbi.objective.margin, jbi.objective.regularization, jbi.optim.batch_size) == \
        (15, 1.0, 1e-3, 25)
    assert jbi.data.path.endswith("phrases_en_es_unpruned/phrase_table/data") and jbi.optim.epochs == 10
    # Eq. (1)'s sum, a random row of its own for each unknown test word, the paper's 1M phrase pairs, every pair kept.
    assert jbi.model.options == {"pooling": "sum"} and jbi.model.unknown_words == "own"
    assert jbi.data.max_pairs == 1_000_000 and jbi.data.min_pair_count == 1
    assert set(jbi.evaluation.also) == {"untrained", "shared_unknown"}
    sentences = train_config(config, "bilingual_sentences", "jbi", paths)
    assert sentences.data.max_pairs is None and sentences.model.options == {"pooling": "sum"}
    jpa = train_config(config, "pivot_paraphrases", "jpa", paths, "-x", drop_bigrams_of=["sick"])
    assert (jpa.name, jpa.objective.distance, jpa.data.drop_bigrams_of) == (
        "elgohary-pivot_paraphrases-jpa-x", "cosine", ("sick",))
    with pytest.raises(ConfigError, match=r"conditions\[0\]: Input should be"):
        load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml", {"conditions": ["pairs_parquet"]})
    with pytest.raises(ConfigError, match="europarl_phrases_config"):
        load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml", {"europarl_phrases_config": None})


def test_undertrained_ratio_counts_token_occurrences():
    counts = Counter({"a": 500, "man": 99, "plays": 100})
    # tokens: a man plays guitar . → man (99), guitar (0), "." (0) are under 100
    assert undertrained_ratio(counts, ["A man plays guitar."], Tokenizer()) == pytest.approx(3 / 5)


def _trial(name: str, optimiser: str, distance: str, batch: int, dev: float | None) -> dict:
    typed = {"optim.name": optimiser, "optim.lr": 0.001 if optimiser == "adam" else 0.05,
             "model.init_std": 1.0 if optimiser == "adam" else 0.1, "optim.batch_size": batch,
             "objective.distance": distance, "objective.margin": 1 if distance == "euclidean" else 0.4,
             "objective.regularization": 1e-5, "objective.negatives": 5}
    return {"trial": name, "status": "FINISHED", "params": {k: str(v) for k, v in typed.items()}, "dev_score": dev,
            "epochs": 5, "typed": typed}


def _sweep(trials: list[dict]) -> dict:
    best = max((t for t in trials if t["dev_score"] is not None), key=lambda t: t["dev_score"])
    return {"name": "s", "space": "tuning/spaces/jbi_elgohary.yaml", "parent_run_id": "r",
            "best_params": best["typed"], "best_dev_score": best["dev_score"], "trials": trials}


def _restored_plan():
    from parabit.papers.elgohary.plan import ElgoharyPlan
    from parabit.reproduction.config import ReproduceConfig
    from parabit.papers.plan import PlanContext

    config = load_config(ReproduceConfig, PROJECT_ROOT / "jobs/configs/reproduction.yaml",
                         {"name": "elgohary-test", "papers": ["elgohary"]})
    plan = ElgoharyPlan(PlanContext(config, {}))
    sweeps = {
        "bilingual_sentences": _sweep([_trial("a", "adam", "euclidean", 25, 0.61), _trial("b", "adagrad", "cosine",
                                                                                           100, 0.55)]),
        "bilingual_phrases": _sweep([_trial("c", "adagrad", "cosine", 50, 0.66), _trial("d", "adam", "euclidean",
                                                                                         25, 0.60),
                                     _trial("e", "adam", "cosine", 100, 0.62), _trial("f", "adam", "cosine", 25, None)]),
    }
    plan.restore({"data_paths": {"bilingual_phrases": "/p/phrase_table/data", "pivot_paraphrases": "/p/pivot/data"},
                  "europarl_paths": {"bilingual_phrases": "/e/phrase_table/data", "pivot_paraphrases": "/e/pivot/data"},
                  "available": {"bilingual_sentences": 138_871, "bilingual_phrases": 3_876_442},
                  "sizes": [[138_871, "= BiSent"], [500_000, "0.5M"], [1_000_000, "1M"], [1_900_000, "1.9M"],
                            [3_000_000, "3M"]], "sweeps": sweeps, "filtered": {},
                  "undertrained": {c: {name: 0.1 for name in ("sts2012", "sts2013", "sts2014", "sts2015", "sick")}
                                   for c in ("bilingual_sentences", "bilingual_phrases", "pivot_paraphrases", "ppdb")}})
    return plan


def test_each_condition_trains_j_bi_with_its_own_sweeps_choice_as_the_paper_tuned_each_condition():
    configs = {group.key: group.config for group in _restored_plan().groups()}
    for key in ("bilingual_phrases-jbi", "bilingual_phrases-jbi-nosickbigram", "bilingual_phrases-jbi-500000"):
        config = configs[key]
        assert (config.optim.name, config.optim.lr, config.model.init_std, config.objective.distance,
                config.objective.margin, config.optim.batch_size) == ("adagrad", 0.05, 0.1, "cosine", 0.4, 50), key
    sentences = configs["bilingual_sentences-jbi"]
    assert (sentences.optim.name, sentences.objective.distance, sentences.optim.batch_size) == ("adam", "euclidean", 25)
    # Conditions without a sweep keep the configured J_bi settings; J_pa is never tuned.
    assert (configs["ppdb-jbi"].objective.distance, configs["ppdb-jbi"].objective.negatives) == ("euclidean", 15)
    assert configs["bilingual_phrases-jpa"].objective.name == "jpa"
    assert configs["bilingual_phrases-jbi-3000000"].data.max_pairs == 3_000_000
    assert "bilingual_phrases-jbi-1000000" not in configs  # the 1M column is the main group itself


def test_each_ablation_group_switches_one_departure_and_nothing_else():
    plan = _restored_plan()
    configs = {group.key: group.config for group in plan.groups()}
    main = configs["bilingual_phrases-jbi"]

    def changed(key: str) -> dict:
        mine, theirs = main.model_dump(), configs[key].model_dump()
        return {f"{section}.{field}": value for section in mine if isinstance(mine[section], dict)
                for field, value in theirs[section].items() if mine[section].get(field) != value}

    assert changed("bilingual_phrases-jbi-mean") == {"model.options": {"pooling": "mean"}}
    assert changed("bilingual_phrases-jbi-pruned") == {"data.min_pair_count": 2}
    assert changed("bilingual_phrases-jbi-europarl") == {"data.path": "/e/phrase_table/data"}
    # The other optimiser's best dev point (trial e), not the best overall (c) nor a trial without a score (f).
    assert changed("bilingual_phrases-jbi-otheroptimiser") == {"optim.name": "adam", "optim.lr": 0.001,
                                                                "model.init_std": 1.0, "optim.batch_size": 100}
    earlier = changed("bilingual_phrases-jbi-earliertuning")
    assert earlier == {"objective.distance": "euclidean", "objective.margin": 1.0, "objective.regularization": 1e-3,
                       "objective.negatives": 15, "optim.batch_size": 25}
    assert configs["bilingual_sentences-jbi-europarl"].data.sources == ("europarl",)
    assert "bilingual_sentences-jbi-pruned" not in configs  # pruning is a phrase-table matter
    # The main comparison and its ablations come first: a long run decides the central claim early.
    keys = [group.key for group in plan.groups()]
    assert keys[:2] == ["bilingual_sentences-jbi", "bilingual_phrases-jbi"]
    assert max(keys.index(k) for k in keys if k.endswith(("-mean", "-pruned", "-europarl"))) < keys.index("ppdb-jbi")


def test_every_ablation_is_a_measured_departure_and_the_unknown_word_rule_is_read_from_the_same_cells():
    plan = _restored_plan()
    departures = {d.aspect: d for d in plan.departures()}
    assert departures["composition"].variants == {"bilingual_sentences-jbi": "bilingual_sentences-jbi-mean",
                                                  "bilingual_phrases-jbi": "bilingual_phrases-jbi-mean"}
    assert departures["unknown test words"].prefix == "shared_unknown" and not departures["unknown test words"].groups
    assert not departures["scale"].measured and departures["scale"].unmeasured
    effects = {(e.better, e.worse) for e in plan.departure_effects()}
    assert ("bilingual_phrases-jbi-pruned", "bilingual_phrases-jbi") in effects
    assert ("bilingual_phrases-jbi", "bilingual_phrases-jbi") in effects  # shared_unknown/... against the cells' own


def test_a_j_bi_cell_sums_its_word_vectors_in_training():
    import torch

    from parabit.recipes.pairs.model import PairModule
    from parabit.text.vocab import Vocabulary

    config = {group.key: group.config for group in _restored_plan().groups()}["bilingual_sentences-jbi"]
    vocab = Vocabulary.build({"en": Counter({"a": 2, "b": 1}), "es": Counter({"c": 1})})
    module = PairModule.build(config.model, config.objective, vocab, sparse=True)
    ids, lengths = torch.tensor([[vocab.id("a", "en"), vocab.id("b", "en")]]), torch.tensor([2])
    table = module.encoder.embedding.weight
    assert torch.allclose(module.encoder(ids, lengths)[0], table[ids[0]].sum(0))  # the mean would be half of it
