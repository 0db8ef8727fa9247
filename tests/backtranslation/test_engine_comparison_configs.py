"""The engine-comparison training configs (issue 12) load as training configs, on the pairs their pipelines write."""

from parabit.config import load_config
from parabit.paths import PROJECT_ROOT
from parabit.recipes.pairs.config import PairsConfig

FOLDER = PROJECT_ROOT / "jobs" / "configs" / "engine_comparison"


def test_both_engines_train_the_same_model_on_their_own_pairs():
    configs = {engine: load_config(PairsConfig, FOLDER / f"train_{engine}.yaml") for engine in ("apertium", "marian")}
    for engine, config in configs.items():
        assert config.data.path == f"outputs/pipelines/engine_comparison_{engine}/select/data/pairs.parquet"
    apertium, marian = configs["apertium"], configs["marian"]
    assert (apertium.model, apertium.objective, apertium.optim) == (marian.model, marian.objective, marian.optim)
    assert (marian.objective.name, marian.optim.epochs) == ("jpa", 20)
