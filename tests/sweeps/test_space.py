import random

import pytest

from parabit.config import ConfigError
from parabit.paths import PROJECT_ROOT
from parabit.sweeps.space import load_space


def test_the_seed_grids_expand_with_the_margin_conditional_on_the_distance():
    space = load_space(PROJECT_ROOT / "tuning" / "spaces" / "jbi_elgohary.yaml")
    points = space.points()
    # optimiser 2 x batch 3 x (euclidean: 3 margins + cosine: 3 margins) x lambda 5 x k 4
    assert len(points) == 2 * 3 * 6 * 5 * 4
    assert {p["objective.margin"] for p in points if p["objective.distance"] == "euclidean"} == {1, 10, 100}
    assert {p["objective.margin"] for p in points if p["objective.distance"] == "cosine"} == {0.4, 0.6, 0.8}
    assert {(p["optim.name"], p["optim.lr"], p["model.init_std"]) for p in points} == {
        ("adam", 0.001, 1.0), ("adagrad", 0.05, 0.1)}  # each optimiser with its own step size and initial scale
    trials = space.trial_points()
    assert len(trials) == space.search.num_samples and len({tuple(sorted(t.items())) for t in trials}) == len(trials)
    # Stratified: as many trials with each distance and each optimiser, so no condition's sweep misses one.
    strata = [(t["objective.distance"], t["optim.name"]) for t in trials]
    assert {s: strata.count(s) for s in set(strata)} == {(d, o): len(trials) // 4 for d in ("euclidean", "cosine")
                                                        for o in ("adam", "adagrad")}
    config = space.trial_config(trials[0], name="t")
    assert config.data.max_pairs == 100000 and config.dev == "sts2012-train-smteuroparl"


def test_pinning_a_stated_choice_fixes_it_narrows_what_depends_on_it_and_leaves_it_out_of_the_strata():
    space = load_space(PROJECT_ROOT / "tuning" / "spaces" / "jbi_elgohary.yaml")
    pinned = space.pinned({"objective.distance": "cosine", "objective.negatives": 15})
    points = pinned.points()
    assert len(points) == 2 * 3 * 3 * 5  # optimiser x batch x the cosine margins x lambda
    assert {p["objective.margin"] for p in points} == {0.4, 0.6, 0.8}
    assert "objective.distance" not in points[0] and pinned.search.stratify == ("optim.name",)
    trials = pinned.trial_points()
    assert [t["optim.name"] for t in trials].count("adam") == len(trials) // 2
    config = pinned.trial_config(trials[0], name="t")
    assert config.objective.distance == "cosine" and config.objective.negatives == 15
    assert len(space.points()) == 720  # the space pinned is a new one
    with pytest.raises(ConfigError, match="cannot pin objective.negatives=3: the space offers 1, 10, 15, 5"):
        space.pinned({"objective.negatives": 3})
    with pytest.raises(ConfigError, match="cannot pin 'optim.epochs': it is not a parameter"):
        space.pinned({"optim.epochs": 3})


def test_an_unknown_parameter_fails_at_load_with_the_valid_fields(write_space):
    path = write_space("typo", {"objective.margn": [1, 10]})
    with pytest.raises(ConfigError, match=r"unknown parameter 'objective.margn': ObjectiveConfig has no field 'margn'"):
        load_space(path)


def test_an_invalid_value_fails_at_load(write_space):
    path = write_space("bad-value", {"objective.distance": ["euclidean", "manhattan"]})
    with pytest.raises(ConfigError, match=r"objective.distance: Input should be 'euclidean' or 'cosine' \(got 'manhattan'\)"):
        load_space(path)


def test_a_condition_without_values_for_a_parent_value_fails(write_space):
    path = write_space("cond", {"objective.distance": ["euclidean", "cosine"],
                                "objective.margin": {"depends_on": "objective.distance", "values": {"euclidean": [1]}}})
    with pytest.raises(ConfigError, match="no values for objective.distance='cosine'"):
        load_space(path)


def test_random_sampling_is_seeded(write_space):
    path = write_space("seeded", {"optim.batch_size": [25, 50, 100], "objective.margin": [1, 10, 100]},
                       search={"algorithm": "random", "num_samples": 4, "seed": 3})
    assert load_space(path).trial_points() == load_space(path).trial_points()
    assert load_space(path).sample(random.Random(0)).keys() == {"optim.batch_size", "objective.margin"}


def test_optuna_space_names_conditional_choices_per_condition(write_space):
    import optuna

    path = write_space("optuna", {"objective.distance": ["euclidean", "cosine"],
                                  "objective.margin": {"depends_on": "objective.distance",
                                                       "values": {"euclidean": [1, 10], "cosine": [0.4]}}},
                       search={"algorithm": "optuna"})
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    names = set()
    for _ in range(8):
        trial = study.ask()
        load_space(path).optuna_space(trial)
        names |= set(trial.params)
    assert names == {"objective.distance", "objective.margin|euclidean", "objective.margin|cosine"}


def test_stratifying_shares_the_draws_among_the_values_and_leaves_unstratified_draws_as_they_were(write_space):
    parameters = {"objective.distance": ["euclidean", "cosine"], "optim.batch_size": [25, 50, 100],
                  "objective.negatives": [1, 5, 10, 15]}
    plain = load_space(write_space("plain", parameters)).trial_points()
    rng = random.Random(0)
    space = load_space(write_space("plain-again", parameters))
    drawn = []
    while len(drawn) < space.search.num_samples:  # the draws of an unstratified random search, as before
        point = space.sample(rng)
        drawn += [point] if point not in drawn else []
    assert plain == drawn
    path = write_space("strata", parameters, search={"num_samples": 5, "stratify": ["objective.distance"]})
    trials = load_space(path).trial_points()
    assert [t["objective.distance"] for t in trials].count("euclidean") == 3 and len(trials) == 5
    with pytest.raises(ConfigError, match="stratify names 'objective.margin'"):
        load_space(write_space("bad", parameters, search={"stratify": ["objective.margin"]}))
