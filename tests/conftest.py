"""Session-wide test settings: an isolated MLflow store, and real shipped data (never mocked)."""

from __future__ import annotations

import os

import pytest


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
