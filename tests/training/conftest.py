"""Small real training inputs: a slice of the shipped Tatoeba en-es bitext as a pairs parquet."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parabit.data.bitext import read_tatoeba
from parabit.evaluation.config import EvaluationConfig
from parabit.training.config import DataConfig, ModelConfig, ObjectiveConfig, OptimConfig, ScalingConfig, TrainConfig


@pytest.fixture(scope="session")
def tatoeba_slice(tmp_path_factory):
    """4,000 real Tatoeba en-es pairs (every 25th line, so not just the shortest first sentences)."""
    pairs = read_tatoeba(lang="es")[::25][:4000]
    path = tmp_path_factory.mktemp("pairs") / "tatoeba_slice.parquet"
    pq.write_table(pa.table({"text_a": [p.en for p in pairs], "text_b": [p.foreign for p in pairs],
                             "lang_a": ["en"] * len(pairs), "lang_b": ["es"] * len(pairs)}), path)
    return path


@pytest.fixture
def small_config(tatoeba_slice, outputs, request):
    """A fast AVG + J_bi config on the slice; the run name is the test's name, so runs never collide."""

    def make(**changes) -> TrainConfig:
        config = TrainConfig(
            name=request.node.name.replace("[", "-").replace("]", ""),
            data=DataConfig(condition="pairs_parquet", path=str(tatoeba_slice), max_tokens=30),
            model=ModelConfig(encoder="avg", dim=64),
            objective=ObjectiveConfig(name="jbi", negatives=2),
            optim=OptimConfig(lr=0.005, batch_size=50, epochs=2),
            scaling=ScalingConfig(num_workers=1, cpus_per_worker=1.0),
            evaluation=EvaluationConfig(sts_years=(2016,), sick=False, msrp=False),
            storage_path=str(outputs / "ray_results"),
        )
        for key, value in changes.items():
            section, _, field = key.partition("__")
            if field:
                setattr(getattr(config, section), field, value)
            else:
                setattr(config, section, value)
        return config

    return make
