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


def _trial(name: str, optimiser: str, batch: int, dev: float | None, margin: float = 1.0, k: int | None = None) -> dict:
    """A sweep trial as the plan records it: the searched parameters only (the stated ones are pinned)."""
    typed = {"optim.name": optimiser, "optim.lr": 0.001 if optimiser == "adam" else 0.05,
             "model.init_std": 1.0 if optimiser == "adam" else 0.1, "optim.batch_size": batch,
             "objective.margin": margin, "objective.regularization": 1e-5, **({"objective.negatives": k} if k else {})}
    return {"trial": name, "status": "FINISHED", "params": {k: str(v) for k, v in typed.items()}, "dev_score": dev,
            "epochs": 5, "typed": typed}


def _sweep(condition: str, trials: list[dict], reading: str = "stated") -> dict:
    best = max((t for t in trials if t["dev_score"] is not None), key=lambda t: t["dev_score"])
    return {"name": "s", "condition": condition, "reading": reading, "pinned": {},
            "space": "tuning/spaces/jbi_elgohary.yaml", "parent_run_id": "r", "best_params": best["typed"],
            "best_dev_score": best["dev_score"], "trials": trials}


def _rescored(group: str, trials: list[dict], full: list[float], chosen: int) -> dict:
    """The plan's record of a re-scoring: ``trials`` re-trained at the cells' scale scored ``full`` on dev."""
    candidates = [{"group": f"{group}-rescore{i}", "trial": t["trial"], "typed": t["typed"],
                   "proxy_dev": t["dev_score"]} for i, t in enumerate(trials, 1)]
    return {"candidates": candidates, "dev": {c["group"]: d for c, d in zip(candidates, full)},
            "chosen": candidates[chosen]["group"], "choice": candidates[chosen]["typed"]}


PHRASE_TRIALS = [_trial("c", "adagrad", 50, 0.66, 0.4), _trial("e", "adam", 100, 0.62, 0.6),
                 _trial("g", "adagrad", 25, 0.61, 0.8), _trial("f", "adam", 25, None, 0.4)]
EUCLIDEAN_TRIALS = [_trial("h", "adagrad", 50, 0.64, 10.0), _trial("i", "adam", 25, 0.60, 1.0)]


def _restored_plan(history=None):
    from parabit.papers.elgohary.plan import ElgoharyPlan
    from parabit.reproduction.config import ReproduceConfig
    from parabit.papers.plan import PlanContext

    config = load_config(ReproduceConfig, PROJECT_ROOT / "jobs/configs/reproduction.yaml",
                         {"name": "elgohary-test", "papers": ["elgohary"]})
    plan = ElgoharyPlan(PlanContext(config, {}, history=history))
    sentence_trials = [_trial("a", "adam", 25, 0.61, 10.0), _trial("b", "adagrad", 100, 0.55, 100.0)]
    sweeps = {"bilingual_sentences": _sweep("bilingual_sentences", sentence_trials),
              "bilingual_phrases": _sweep("bilingual_phrases", PHRASE_TRIALS),
              "bilingual_phrases-otherreading": _sweep("bilingual_phrases", EUCLIDEAN_TRIALS, "contested"),
              "ppdb": _sweep("ppdb", [_trial("p", "adagrad", 25, 0.65, 100.0, k=5)])}
    # At the cells' scale the proxy's best phrase point (c) falls behind the adam point (e); sentences keep theirs.
    rescored = {"bilingual_phrases": _rescored("bilingual_phrases-jbi", PHRASE_TRIALS[:3], [0.58, 0.63, 0.60], 1),
                "bilingual_sentences": _rescored("bilingual_sentences-jbi", sentence_trials, [0.50, 0.48], 0),
                "bilingual_phrases-otherreading": _rescored("bilingual_phrases-jbi-otherreading", EUCLIDEAN_TRIALS,
                                                            [0.62, 0.59], 0)}
    plan.restore({"data_paths": {"bilingual_phrases": "/p/phrase_table/data", "pivot_paraphrases": "/p/pivot/data"},
                  "europarl_paths": {"bilingual_phrases": "/e/phrase_table/data", "pivot_paraphrases": "/e/pivot/data"},
                  "available": {"bilingual_sentences": 138_871, "bilingual_phrases": 3_876_442},
                  "europarl_available": {"bilingual_sentences": 19_928, "bilingual_phrases": 1_577_158},
                  "sizes": [[138_871, "= BiSent"], [500_000, "0.5M"], [1_000_000, "1M"], [1_900_000, "1.9M"],
                            [3_000_000, "3M"]], "sweeps": sweeps, "rescored": rescored, "filtered": {},
                  "undertrained": {c: {name: 0.1 for name in ("sts2012", "sts2013", "sts2014", "sts2015", "sick")}
                                   for c in ("bilingual_sentences", "bilingual_phrases", "pivot_paraphrases", "ppdb")}})
    return plan


def test_each_condition_trains_j_bi_with_the_best_of_its_points_at_the_cells_scale():
    configs = {group.key: group.config for group in _restored_plan().groups()}
    for key in ("bilingual_phrases-jbi", "bilingual_phrases-jbi-nosickbigram", "bilingual_phrases-jbi-500000"):
        config = configs[key]
        # Point e (adam), the best on dev at the cells' scale, not c, the proxy sweep's best.
        assert (config.optim.name, config.optim.lr, config.model.init_std, config.objective.margin,
                config.optim.batch_size) == ("adam", 0.001, 1.0, 0.6, 100), key
    sentences = configs["bilingual_sentences-jbi"]
    assert (sentences.optim.name, sentences.objective.margin, sentences.optim.batch_size) == ("adam", 10.0, 25)
    # A condition not re-scored takes its sweep's best; J_pa is never tuned.
    assert (configs["ppdb-jbi"].optim.name, configs["ppdb-jbi"].objective.negatives) == ("adagrad", 5)
    assert configs["bilingual_phrases-jpa"].objective.name == "jpa"
    assert configs["bilingual_phrases-jbi-3000000"].data.max_pairs == 3_000_000
    assert "bilingual_phrases-jbi-1000000" not in configs  # the 1M column is the main group itself
    # The re-scored points are cells of their own, trained as the cells are (the same scale and epochs).
    point = configs["bilingual_phrases-jbi-rescore1"]
    assert (point.optim.name, point.optim.batch_size, point.data.max_pairs, point.optim.epochs) == (
        "adagrad", 50, 1_000_000, 10)


def test_a_cell_uses_the_distance_and_negatives_the_paper_states_for_its_condition():
    plan = _restored_plan()
    configs = {group.key: group.config for group in plan.groups()}
    # §3.2: Euclidean for bilingual sentences and monolingual phrases, cosine for bilingual phrases; k 15 for the
    # bilingual conditions ("increasing k consistently helps the bilingual models"); k tuned for monolingual ones.
    assert (configs["bilingual_sentences-jbi"].objective.distance, configs["bilingual_sentences-jbi"].objective.negatives) \
        == ("euclidean", 15)
    for key in ("bilingual_phrases-jbi", "bilingual_phrases-jbi-rescore1", "bilingual_phrases-jbi-nosickbigram"):
        assert (configs[key].objective.distance, configs[key].objective.negatives) == ("cosine", 15), key
    assert (configs["ppdb-jbi"].objective.distance, configs["pivot_paraphrases-jbi"].objective.distance) == (
        "euclidean", "euclidean")
    # The sweeps search none of the stated choices.
    assert plan.pins("bilingual_phrases") == {"objective.distance": "cosine", "objective.negatives": 15}
    assert plan.pins("bilingual_phrases", "contested") == {"objective.distance": "euclidean", "objective.negatives": 15}
    assert plan.pins("ppdb") == {"objective.distance": "euclidean"}


def test_the_points_re_scored_at_the_cells_scale_are_the_best_of_each_optimiser_then_the_best_overall():
    from parabit.papers.elgohary.tuning import rescore_candidates

    trials = [_trial("a", "adagrad", 25, 0.70), _trial("b", "adagrad", 50, 0.69), _trial("c", "adagrad", 100, 0.68),
              _trial("d", "adam", 25, 0.52), _trial("e", "adam", 50, None)]
    assert [t["trial"] for t in rescore_candidates(trials, 3)] == ["a", "b", "d"]
    assert [t["trial"] for t in rescore_candidates(trials, 1)] == ["a"]


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
    # The other optimiser's best point on dev at the cells' scale (g, 0.60), not the proxy's order (c first).
    assert changed("bilingual_phrases-jbi-otheroptimiser") == {"optim.name": "adagrad", "optim.lr": 0.05,
                                                                "model.init_std": 0.1, "optim.batch_size": 25,
                                                                "objective.margin": 0.8}
    earlier = changed("bilingual_phrases-jbi-earliertuning")
    assert earlier == {"objective.distance": "euclidean", "objective.margin": 1.0, "objective.regularization": 1e-3,
                       "optim.batch_size": 25}
    # The proxy sweep's own choice (c), and §4's reading (Euclidean) with its own tuning's choice (h).
    assert changed("bilingual_phrases-jbi-proxychoice") == {"optim.name": "adagrad", "optim.lr": 0.05,
                                                             "model.init_std": 0.1, "optim.batch_size": 50,
                                                             "objective.margin": 0.4}
    assert changed("bilingual_phrases-jbi-otherreading") == {"objective.distance": "euclidean",
                                                              "optim.name": "adagrad", "optim.lr": 0.05,
                                                              "model.init_std": 0.1, "optim.batch_size": 50,
                                                              "objective.margin": 10.0}
    # Where the proxy's choice survived the re-scoring, its ablation is the same training as the cells.
    assert configs["bilingual_sentences-jbi-proxychoice"] == configs["bilingual_sentences-jbi"]
    assert configs["bilingual_sentences-jbi-europarl"].data.sources == ("europarl",)
    assert "bilingual_sentences-jbi-pruned" not in configs  # pruning is a phrase-table matter
    assert "bilingual_sentences-jbi-otherreading" not in configs  # the paper contradicts itself on phrases only
    # The re-scored points first (trained by the data step), then Table 3's J_bi columns, the main comparison
    # first, then its ablations: a long run decides the paper's J_bi findings early.
    keys = [group.key for group in plan.groups()]
    first = keys.index("bilingual_sentences-jbi")
    assert all("rescore" in k for k in keys[:first])
    assert keys[first:first + 4] == ["bilingual_sentences-jbi", "bilingual_phrases-jbi", "pivot_paraphrases-jbi",
                                     "ppdb-jbi"]
    assert max(keys.index(k) for k in keys if k.endswith(("-mean", "-pruned", "-europarl"))) < \
        keys.index("ppdb-jpa")


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


def test_the_tuning_ablations_train_every_seed_whatever_their_first_seed_shows():
    from parabit.reproduction.paper_run import PaperRun

    plan = _restored_plan()
    compared = PaperRun(plan).compared()
    assert {"bilingual_phrases-jbi-otheroptimiser", "bilingual_sentences-jbi-earliertuning",
            "bilingual_phrases-jbi-proxychoice"} <= compared
    assert "bilingual_phrases-jbi-mean" not in compared  # decided by one seed when its effect is large


def test_the_compute_estimate_reads_the_speed_of_the_newest_cells_not_of_an_older_slower_step():
    from parabit.papers.cells import Results
    from parabit.papers.elgohary.compute import RATE_CELLS, compute_table
    from parabit.papers.records import CellRecord

    def record(n: int, day: int, seconds: float) -> CellRecord:  # 100,000 pairs × the paper's 10 epochs
        return CellRecord(cell=f"c{n}", paper="elgohary", group="g", seed=1, digest="d", commit="0" * 40, metrics={},
                          train_seconds=seconds, data={"pairs_kept": 100_000}, machine={}, started="",
                          finished=f"2026-12-{day:02d}T00:00:{n % 60:02d}Z")

    slow = [record(n, 1, 1000.0) for n in range(60)]  # 1,000 pairs × epochs/s
    fast = [record(n, 5, 100.0) for n in range(RATE_CELLS)]  # 10,000
    plan = _restored_plan(history=lambda paper: [*fast[:5], *slow, *fast[5:]])
    text = compute_table(plan, Results())
    assert f"Estimated at 10,000 pairs × epochs per second per cell (the median of the {RATE_CELLS} newest" in text
    assert "from 2026-12-05 to 2026-12-05" in text
    only_slow = compute_table(_restored_plan(history=lambda paper: slow), Results())
    assert _estimated_hours(text) == pytest.approx(_estimated_hours(only_slow) / 10, abs=0.1)


def _estimated_hours(compute_table: str) -> float:
    """The estimated hours of the compute table's **all** row."""
    return float(compute_table.split("| **all** | | | **")[1].split("**")[0])
