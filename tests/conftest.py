"""Session-wide test settings: an isolated MLflow store, one local Ray, and small slices of the real shipped data."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parabit.data.bitext import read_tatoeba
from parabit.evaluation.config import EvaluationConfig
from parabit.pairs.config import DataConfig, ModelConfig, ObjectiveConfig, PairsConfig
from parabit.training.config import OptimConfig, ScalingConfig

# The suite runs on two pytest-xdist workers (pyproject.toml: -n 2 --dist loadfile), each taking whole modules in
# this order (--no-loadscope-reorder). The modules that take longest (CI's --durations, 2026-11-26: each over a
# minute) are handed out first, so the two workers finish together instead of one starting the longest module last.
# The local cluster comes first: its three Ray nodes start while the other worker runs the quick reproduction's data
# steps, not while a sweep starts a Ray of its own (on 2 cores that storm of processes has made Ray's own start-up
# waits expire).
LONGEST_MODULES = (
    "infra/test_local_cluster.py", "reproduction/test_reproduce.py", "tuning/test_sweep.py", "wieting/test_plan.py",
    "training/test_trainer.py", "training/test_driver_kill.py", "teacher/test_distilled.py",
    "training/test_tracking_faults.py", "jobs/test_main.py", "test_runlock.py", "jobs/test_job_submission.py",
    "training/test_guard.py", "pipeline/test_pipeline.py", "dictionary/test_trainer.py", "test_bad_inputs.py",
)


def pytest_collection_modifyitems(config, items):
    first = {module: rank for rank, module in enumerate(LONGEST_MODULES)}

    def rank(item) -> int:
        module = item.path.relative_to(config.rootpath / "tests").as_posix()
        return first.get(module, len(first))

    items.sort(key=rank)  # stable: tests keep their order inside a module, and the other modules theirs


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
    pairs = read_tatoeba(lang="es")[::25][:4000]
    path = tmp_path_factory.mktemp("pairs") / "tatoeba_slice.parquet"
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


@pytest.fixture
def small_config(tatoeba_slice, outputs, request):
    """A fast AVG + J_bi config on the slice (:func:`pairs_config`); the run name is the test's name, so runs never
    collide."""

    def make(**changes) -> PairsConfig:
        return pairs_config(request.node.name.replace("[", "-").replace("]", ""), tatoeba_slice, outputs, **changes)

    return make
