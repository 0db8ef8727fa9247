"""Every shipped config and search space loads and validates as what its command reads it as; mistakes in a config
fail at load with a one-line message naming the field."""

from pathlib import Path

import pytest

from parabit.cli.configs import config_class
from parabit.config import ConfigError, load_config
from parabit.recipes.pairs.config import PairsConfig
from parabit.paths import PROJECT_ROOT
from parabit.recipes import load_run_config
from parabit.training import TrainingConfig
from parabit.sweeps.space import load_space

CONFIGS = PROJECT_ROOT / "jobs" / "configs"
# Config files that are not training configs, by the kind of config their command reads (parabit config --kind).
NOT_TRAINING = {"phrases_en_es.yaml": "phrases", "phrases_en_es_unpruned.yaml": "phrases",
                "phrases_europarl_unpruned.yaml": "phrases", "elgohary.yaml": "reproduce-elgohary",
                "plan.yaml": "quality-plan", "transformer_plan.yaml": "quality-plan",
                "transformer_e5_plan.yaml": "quality-plan", "transformer_english_plan.yaml": "quality-plan", "translate_test.yaml": "translate-test",
                "reproduction.yaml": "reproduce", "mine_europarl.yaml": "mine",
                "evaluation.yaml": "evaluation"}


def kind_of(path: Path) -> str:
    """What reads this file: a pipeline config (``backtranslate*`` and the Wieting/engine pipelines), another named
    kind, or a training config (whose ``recipe:`` decides the class)."""
    if path.name in NOT_TRAINING:
        return NOT_TRAINING[path.name]
    if path.name.startswith("backtranslate") or "translation:" in path.read_text():
        return "backtranslate"
    return "training"


SHIPPED = sorted(CONFIGS.rglob("*.yaml"))
SPACES = sorted((PROJECT_ROOT / "tuning" / "spaces").glob("*.yaml"))


def test_the_shipped_configs_are_all_here():
    assert len(SHIPPED) >= 40 and len(SPACES) >= 3  # a config moved elsewhere would silently drop out of this test


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(CONFIGS)))
def test_every_shipped_config_loads(path: Path, request):
    kind = kind_of(path)
    if kind == "training":
        config = load_run_config(path)
        assert isinstance(config, TrainingConfig) and config.optim.epochs >= 1 and config.name
        return
    overrides = {}
    if "hf_marian" in path.name:  # the user's own model folder: a real (tiny) one stands in for it
        overrides["translation.options.model_dir"] = str(request.getfixturevalue("tiny_marian_dir"))
    config = load_config(config_class(kind), path, overrides)
    assert kind == "evaluation" or config.name  # an evaluation config names no run: `parabit evaluate` does


@pytest.mark.parametrize("path", SPACES, ids=lambda p: p.name)
def test_every_shipped_search_space_loads(path: Path):
    space = load_space(path)
    assert space.points() and space.trial_config(space.points()[0], name="check").name == "check"


def test_the_recipe_of_a_config_comes_from_its_file():
    assert load_run_config(CONFIGS / "siamese" / "sick_en.yaml").recipe == "siamese"
    assert load_run_config(CONFIGS / "bildrl" / "att_mtl_es.yaml").recipe == "bildrl"
    config = load_run_config(CONFIGS / "bilingual_sentences.yaml")
    assert (config.recipe, config.model.encoder, config.objective.name, config.data.condition) == (
        "pairs", "avg", "jbi", "bilingual_sentences")


@pytest.mark.parametrize("text,message", [
    ("objective: {name: jbx}", "objective.name: unknown pair objective 'jbx'; choose one of ['jbi', 'jpa']"),
    ("model: {encoder: bert}", "model.encoder: unknown encoder 'bert'; choose one of ['attentive_gru'"),
    ("model: {encoder: transformer}", "model.encoder: the transformer encoder reads a Hugging Face checkpoint"),
    ("optim: {batch_size: 1}", "optim.batch_size: Input should be greater than or equal to 2 (got 1)"),
    ("model: {init: glove, dim: 300}", "set model.dim to 50"),
    ("data: {condition: pairs_parquet}", "needs data.path"),
    ("objective: {margn: 1}",
     "unknown key 'margn' in objective; valid keys: ['distance', 'distillation', 'distillation_batch', "
     "'distillation_loss', 'distillation_temperature', 'margin'"),
    ("optim: {lr: .nan}", "optim.lr: nan is not a finite number"),
    ("recipe: cooking",
     "unknown recipe 'cooking'; choose one of ['bildrl', 'bilingual', 'pairs', 'siamese', 'transformer']"),
])
def test_bad_values_fail_at_load_with_a_message(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_run_config(path)
    assert message in str(caught.value) and str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)


def test_a_pairs_config_is_refused_as_another_recipe(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("recipe: siamese\ndata: {condition: ppdb}\n")
    with pytest.raises(ConfigError, match="unknown key 'condition' in data"):
        load_run_config(path)
    with pytest.raises(ConfigError, match="Input should be 'pairs'"):
        load_config(PairsConfig, path)
