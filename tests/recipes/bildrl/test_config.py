"""BilDRL configs fail at load with a message that says what to change."""

from __future__ import annotations

import pytest

from parabit.config import load_config
from parabit.paths import project_path
from parabit.recipes.bildrl.config import BilDRLConfig, DictionaryBuildConfig, DictionaryModelConfig
from parabit.training import OptimConfig


def test_defaults_are_the_papers_optimiser():
    config = BilDRLConfig()
    assert (config.optim.name, config.optim.amsgrad, config.optim.lr, config.optim.batch_size) == \
           ("adam", True, 5e-4, 64)
    assert (config.model.hidden, config.model.max_tokens) == (200, 15)


@pytest.mark.parametrize("build, message", [
    (lambda: BilDRLConfig(directions=("fr-en", "en-es")), "different spaces"),
    (lambda: BilDRLConfig(directions=("de-en",)), "Input should be 'fr-en', 'en-es', 'es-en' or 'en-en'"),
    (lambda: DictionaryModelConfig(encoder="lstm"), "Input should be 'bow', 'cnn', 'gru' or 'att'"),
    (lambda: DictionaryBuildConfig(paraphrase_split=(0.7, 0.2, 0.2)), "summing to 1"),
    (lambda: OptimConfig(name="sgd", amsgrad=True), "variant of Adam"),
])
def test_bad_values_are_refused(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_the_shipped_multi_task_and_joint_configs_balance_their_directions_and_single_runs_do_not():
    for name, balance in (("att_mtl_es", "equal"), ("gru_mtl_es", "equal"), ("att_joint_es", "equal"),
                          ("att_es-en", "none"), ("att_en-es", "none"), ("gru_fr-en", "none")):
        assert load_config(BilDRLConfig, project_path(f"jobs/configs/bildrl/{name}.yaml")).balance == balance, name
    with pytest.raises(ValueError, match="Input should be 'none' or 'equal'"):
        BilDRLConfig(balance="proportional")
