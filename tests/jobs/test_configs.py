"""Every shipped config loads and validates; mistakes in a config fail at load with a useful message."""

from pathlib import Path

import pytest

from parabit.config import ConfigError, load_config
from parabit.elgohary.reproduce import ReproductionConfig
from parabit.paths import PROJECT_ROOT
from parabit.phrases.config import PhrasesConfig
from parabit.training.config import TrainConfig

# Top-level configs that are not training configs, with the class their job loads them as.
OTHER_CONFIGS = {"phrases_en_es.yaml": PhrasesConfig, "elgohary.yaml": ReproductionConfig}
TRAIN_CONFIGS = sorted(p for p in (PROJECT_ROOT / "jobs" / "configs").glob("*.yaml")
                       if not p.name.startswith("backtranslate") and p.name not in OTHER_CONFIGS)


@pytest.mark.parametrize("name", sorted(OTHER_CONFIGS))
def test_shipped_job_configs_load(name: str):
    assert load_config(OTHER_CONFIGS[name], PROJECT_ROOT / "jobs" / "configs" / name)


@pytest.mark.parametrize("path", TRAIN_CONFIGS, ids=lambda p: p.name)
def test_shipped_training_configs_load(path: Path):
    config = load_config(TrainConfig, path)
    assert config.name and config.optim.epochs >= 1


def test_main_job_config_is_avg_jbi_on_bilingual_sentences():
    config = load_config(TrainConfig, PROJECT_ROOT / "jobs" / "configs" / "bilingual_sentences.yaml")
    assert (config.model.encoder, config.objective.name, config.data.condition) == ("avg", "jbi", "bilingual_sentences")


@pytest.mark.parametrize("text,message", [
    ("objective: {name: jbx}", "objective.name is 'jbx'; choose one of ['jbi', 'jpa']"),
    ("model: {encoder: transformer}", "model.encoder is 'transformer'; choose one of"),
    ("optim: {batch_size: 1}", "optim.batch_size must be at least 2"),
    ("model: {init: glove, dim: 300}", "set model.dim to 50"),
    ("data: {condition: pairs_parquet}", "needs data.path"),
    ("objective: {margn: 1}", "unknown key(s) ['margn'] for ObjectiveConfig"),
])
def test_bad_values_fail_at_load_with_a_message(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(TrainConfig, path)
    assert message in str(caught.value)
