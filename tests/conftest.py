"""Session-wide test settings: an isolated MLflow store, one local Ray, and small slices of the real shipped data."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parabit.data.bitext import read_tatoeba
from parabit.evaluation.config import EvaluationConfig
from parabit.papers.cells import Group
from parabit.papers.records import CellRecord
from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.recipes.pairs.config import DataConfig, ModelConfig, ObjectiveConfig, PairsConfig
from parabit.reproduction.cells import make_cell
from parabit.training import OptimConfig, ScalingSettings


@pytest.fixture(scope="session", autouse=True)
def isolated_mlflow_store(tmp_path_factory):
    """Every test logs to a throw-away SQLite store, never to the project's own mlflow.db."""
    store = tmp_path_factory.mktemp("mlflow")
    previous = os.environ.get("MLFLOW_TRACKING_URI")
    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{store / 'mlflow.db'}"
    yield os.environ["MLFLOW_TRACKING_URI"]
    if previous is None:
        os.environ.pop("MLFLOW_TRACKING_URI", None)
    else:
        os.environ["MLFLOW_TRACKING_URI"] = previous


@pytest.fixture(scope="session")
def outputs(tmp_path_factory):
    """Job outputs (prepared data, Ray results, spools) of the whole session, away from the project's outputs/."""
    folder = tmp_path_factory.mktemp("outputs")
    os.environ["PARABIT_OUTPUT"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def ray_session(isolated_mlflow_store, outputs):
    """One local Ray for the whole test session (start-up costs ~6 s), with 2 logical CPUs as on CI."""
    import ray

    from parabit.ray_runtime import init_ray

    os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
    init_ray(num_cpus=2)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def tatoeba_slice(tmp_path_factory):
    """4,000 real Tatoeba en-es pairs (every 25th line, so not just the shortest first sentences)."""
    return write_tatoeba_slice(tmp_path_factory.mktemp("pairs") / "tatoeba_slice.parquet")


def write_tatoeba_slice(path: Path) -> Path:
    """The pairs of :func:`tatoeba_slice` written to ``path`` (Parquet; also what bench/bench_run_cost.py trains on)."""
    pairs = read_tatoeba(lang="es")[::25][:4000]
    pq.write_table(pa.table({"text_a": [p.en for p in pairs], "text_b": [p.foreign for p in pairs],
                             "lang_a": ["en"] * len(pairs), "lang_b": ["es"] * len(pairs)}), path)
    return path


@pytest.fixture(scope="session")
def tiny_marian_dir(tmp_path_factory):
    """A real Hugging Face Marian es→en model directory (opus-mt layout), built offline from 400 Tatoeba pairs: tiny,
    randomly initialised with a fixed seed, so it translates badly but varies with the input (parabit.translate.
    tiny_marian)."""
    from parabit.translate.tiny_marian import build_tiny_marian

    pairs = [(p.foreign, p.en) for p in read_tatoeba(lang="es")[::200][:400]]
    return build_tiny_marian(pairs, tmp_path_factory.mktemp("tiny-marian") / "opus-mt-es-en")


@pytest.fixture(scope="session")
def tatoeba_heldout(tatoeba_slice):
    """1,000 real Tatoeba en-es pairs that the slice does not hold (other lines, and no sentence of the slice on
    either side): what a model trained on the slice is tested on."""
    table = pq.read_table(tatoeba_slice)
    seen = set(table["text_a"].to_pylist()) | set(table["text_b"].to_pylist())
    pairs = [p for p in read_tatoeba(lang="es")[12::25] if p.en not in seen and p.foreign not in seen]
    return pairs[:1000]


def pairs_config(name: str, pairs_path, outputs, **changes) -> PairsConfig:
    """A fast AVG + J_bi config on the slice; ``changes`` as ``section__field=value`` or ``section=value``."""
    config = PairsConfig(
        name=name,
        data=DataConfig(condition="pairs_parquet", path=str(pairs_path), max_tokens=30),
        model=ModelConfig(encoder="avg", dim=64),
        objective=ObjectiveConfig(name="jbi", negatives=2),
        optim=OptimConfig(lr=0.005, batch_size=50, epochs=2),
        scaling=ScalingSettings(num_workers=1, cpus_per_worker=1.0),
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


@pytest.fixture
def small_config(tatoeba_slice, outputs, request):
    """A fast AVG + J_bi config on the slice (:func:`pairs_config`); the run name is the test's name, so runs never
    collide."""

    def make(**changes) -> PairsConfig:
        return pairs_config(request.node.name.replace("[", "-").replace("]", ""), tatoeba_slice, outputs, **changes)

    return make


# A reproduction cell of a real training config (Bao's SICK cell) and a finished record of it.
SICK = "jobs/configs/siamese/sick_en.yaml"


@pytest.fixture
def sick_cell():
    """The first seed of Bao's SICK cell, as the reproduction makes it."""
    return make_cell("repro", "parabit-reproduction", "bao",
                     Group("sick-sialstm", load_run_config(project_path(SICK))), 1)


def finished_record(cell, started="2026-11-25T10:00:00Z", finished="2026-11-25T10:01:40Z", seconds=100.0,
                    metrics=None):
    """A finished record of ``cell`` (a run of ``seconds`` between ``started`` and ``finished``)."""
    return CellRecord(cell=cell.name, paper=cell.paper, group=cell.group, seed=cell.seed, digest=cell.digest,
                      commit="0123456789abcdef", metrics=metrics or {"sick-en/test/pearson": 0.75},
                      train_seconds=seconds, data={"pairs_kept": 4500}, machine={"host": "vm", "cpus": 2},
                      started=started, finished=finished, mlflow_run_id="f" * 32)
