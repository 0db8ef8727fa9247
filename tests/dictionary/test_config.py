"""BilDRL configs fail at load with a message that says what to change."""

from __future__ import annotations

import pytest

from parabit.dictionary.config import DictionaryBuildConfig, DictionaryModelConfig, DictionaryTrainConfig
from parabit.training.config import OptimConfig


def test_defaults_are_the_papers_optimiser():
    config = DictionaryTrainConfig()
    assert (config.optim.name, config.optim.amsgrad, config.optim.lr, config.optim.batch_size) == \
           ("adam", True, 5e-4, 64)
    assert (config.model.hidden, config.model.max_tokens) == (200, 15)


@pytest.mark.parametrize("build, message", [
    (lambda: DictionaryTrainConfig(directions=("fr-en", "en-es")), "different spaces"),
    (lambda: DictionaryTrainConfig(directions=("de-en",)), "unknown"),
    (lambda: DictionaryModelConfig(encoder="lstm"), "choose one of"),
    (lambda: DictionaryBuildConfig(paraphrase_split=(0.7, 0.2, 0.2)), "summing to 1"),
    (lambda: OptimConfig(name="sgd", amsgrad=True), "variant of Adam"),
])
def test_bad_values_are_refused(build, message):
    with pytest.raises(ValueError, match=message):
        build()
