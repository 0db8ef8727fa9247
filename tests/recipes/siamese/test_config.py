"""Siamese configs: the shipped ones load; mistakes fail at load with what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from parabit.config import ConfigError, load_config
from parabit.paths import PROJECT_ROOT
from parabit.recipes.siamese.config import VARIANTS, SiameseConfig
from parabit.recipes.pairs.config import PairsConfig

CONFIGS = sorted(p for p in (PROJECT_ROOT / "jobs" / "configs" / "siamese").glob("*.yaml")
                 if p.name != "bilingual_space.yaml")


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_siamese_configs_load(path: Path):
    config = load_config(SiameseConfig, path)
    assert config.model.hidden_size == 50 and config.data.max_length == 25
    assert config.objective == ("malstm" if config.data.task == "sick" else "malstm_classification")


def test_the_bilingual_space_config_is_a_50d_training_config():
    config = load_config(PairsConfig, PROJECT_ROOT / "jobs" / "configs" / "siamese" / "bilingual_space.yaml")
    assert (config.model.encoder, config.model.dim, config.objective.name, config.data.lang) == ("avg", 50, "jbi", "es")


def test_the_four_models_of_bao_et_al():
    assert {v: VARIANTS[v][0] for v in VARIANTS} == {
        "sialstm": "lstm", "siabilstm": "bilstm", "attsialstm": "attentive_lstm", "attsiabilstm": "attentive_lstm"}
    assert VARIANTS["attsiabilstm"][1] == {"bidirectional": True}


@pytest.mark.parametrize("text,message", [
    ("model: {variant: transformer}", "model.variant: Input should be 'sialstm', 'siabilstm'"),
    ("data: {task: msrp, language: es}", "MSRP is English only"),
    ("data: {language: es}", "use model.init: space"),
    ("model: {init: space}", "needs model.space"),
    ("data: {max_length: 0}", "data.max_length: Input should be greater than 0 (got 0)"),
    ("data: {max_lenght: 20}", "unknown key 'max_lenght' in data; valid keys: ['dev_fraction'"),
])
def test_bad_values_fail_at_load_with_a_message(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(SiameseConfig, path)
    assert message in str(caught.value)
