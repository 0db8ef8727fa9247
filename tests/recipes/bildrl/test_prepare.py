"""A multi-task run's training rows: the ``equal`` balance brings each direction to the larger one's rows by
repeating the smaller, and keeps every row each direction's single-direction run trains on."""

from __future__ import annotations

from collections import Counter

import pytest

from parabit.recipes.bildrl.build import build_dictionaries
from parabit.recipes.bildrl.config import BilDRLConfig, DictionaryBuildConfig
from parabit.recipes.bildrl.prepare import balanced, prepare_dictionary_run, training_rows

from .conftest import save_space

DIRECTIONS = ("en-es", "es-en")


@pytest.fixture(scope="module")
def es_data(outputs, tiny_inputs, tiny_spaces, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bildrl-es")
    build_dictionaries(DictionaryBuildConfig(test_words=1, output_dir=str(folder / "data")), inputs=tiny_inputs,
                       spaces=tiny_spaces, directions=DIRECTIONS, paraphrase=False)  # real Apertium eng-spa
    return folder / "data", save_space(tiny_spaces["es"], folder / "space")


def pairs(table) -> Counter:
    return Counter(zip(table["word"].to_pylist(), table["definition"].to_pylist()))


def test_equal_balance_repeats_the_smaller_direction_up_to_the_larger(es_data):
    data, space = es_data
    config = BilDRLConfig(name="tiny-mtl", directions=DIRECTIONS, data_dir=str(data), space=space, balance="equal")
    own = {d: training_rows(config, d) for d in DIRECTIONS}
    larger, smaller = sorted(DIRECTIONS, key=lambda d: -own[d].num_rows)
    assert own[larger].num_rows > own[smaller].num_rows > 0
    whole, rest = divmod(own[larger].num_rows, own[smaller].num_rows)
    result = balanced(own, seed=config.seed)
    assert {d: t.num_rows for d, t in result.items()} == {d: own[larger].num_rows for d in DIRECTIONS}
    assert pairs(result[larger]) == pairs(own[larger])  # the larger direction as it is
    repeated = pairs(result[smaller])
    base = pairs(own[smaller])
    assert set(repeated) == set(base)  # every row of the single-direction run, none other
    extra = repeated - Counter({pair: n * whole for pair, n in base.items()})
    assert sum(extra.values()) == rest and all(n <= base[pair] for pair, n in extra.items())

    # What a run prepares: each direction's own rows (train_rows) and, balanced, its rows an epoch.
    prepared = prepare_dictionary_run(config)
    assert prepared.stats["train_rows"] == {d: own[d].num_rows for d in DIRECTIONS}
    assert prepared.stats["epoch_rows"] == {d: own[larger].num_rows for d in DIRECTIONS}
    assert prepared.stats["pairs_kept"] == 2 * own[larger].num_rows
    unbalanced = prepare_dictionary_run(config.model_copy(update={"balance": "none"}))
    assert unbalanced.directory != prepared.directory
    assert unbalanced.stats["epoch_rows"] == unbalanced.stats["train_rows"] == prepared.stats["train_rows"]
    assert unbalanced.stats["pairs_kept"] == sum(own[d].num_rows for d in DIRECTIONS)
