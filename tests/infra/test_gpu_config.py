"""The GPU job config: it loads, asks for what a GPU cluster offers, and fails clearly where there is no GPU."""

import pytest

from parabit.config import load_config
from parabit.paths import PROJECT_ROOT
from parabit.recipes.pairs.config import PairsConfig
from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.training.run import run_training

GPU_CONFIG = PROJECT_ROOT / "jobs" / "configs" / "bilingual_sentences_gpu.yaml"


def test_gpu_config_loads_with_one_worker_per_gpu_and_mixed_precision():
    config = load_config(PairsConfig, GPU_CONFIG)
    main = load_config(PairsConfig, PROJECT_ROOT / "jobs" / "configs" / "bilingual_sentences.yaml")
    assert config.scaling.use_gpu and config.scaling.mixed_precision
    assert config.scaling.num_workers >= 2
    # the same experiment as the main job, only placed on GPUs
    assert (config.data, config.model, config.objective, config.optim) == (main.data, main.model, main.objective,
                                                                          main.optim)


def test_gpu_scaling_on_a_cluster_without_gpus_fails_before_training(ray_session, small_config):
    scaling = load_config(PairsConfig, GPU_CONFIG).scaling
    assert ray_session.cluster_resources().get("GPU", 0) == 0, "this test needs a Ray without GPUs"
    with pytest.raises(ValueError, match=rf"scaling.use_gpu asks for {scaling.num_workers} GPU worker\(s\) but "
                                         r"the Ray cluster has 0 GPU\(s\)"):
        run_training(PairsRecipe(small_config(scaling=scaling)))


@pytest.mark.parametrize("doc", ["README.md", "infra/README.md"])
def test_the_multi_gpu_gradient_path_the_docs_state_is_the_one_the_config_they_name_takes(doc):
    """Where a document speaks of multi-GPU gradients it names a GPU config and its `scaling.gradient_exchange`:
    that config must load with that setting, and with `sparse_rows` its word table must train row-sparse (what the
    exchange all-gathers). No document may still say that multi-GPU falls back to dense gradients."""
    import re

    text = (PROJECT_ROOT / doc).read_text()
    parts = re.split(r"\n\s*\n|\n\* ", text)  # paragraphs and bullets
    statements = [part for part in parts if "gradient_exchange" in part and "_gpu.yaml" in part]
    assert statements, f"{doc} does not say which gradient path the GPU config takes"
    for statement in statements:
        (named,) = set(re.findall(r"`(jobs/configs/[\w/]+_gpu\.yaml)`", statement))
        (path,) = set(re.findall(r"`scaling\.gradient_exchange: (\w+)`", statement))
        config = load_config(PairsConfig, PROJECT_ROOT / named)
        assert config.scaling.gradient_exchange == path
        assert config.scaling.use_gpu and config.model.sparse
        assert config.scaling.sparse_gradients == (path == "sparse_rows")
    assert "not built yet" not in text and "falls back to dense" not in text
