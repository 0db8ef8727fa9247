"""Where MLflow runs live: ``$MLFLOW_TRACKING_URI`` if set, else a SQLite store in the project folder.

Artifacts of the default store go to ``<project>/mlartifacts`` (not MLflow's cwd-relative ``./mlruns``), so
runs do not scatter across whatever directory a job happened to start in.
"""

from __future__ import annotations

import os

import mlflow
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT

DEFAULT_EXPERIMENT = "parabit"
DEFAULT_STORE = PROJECT_ROOT / "mlflow.db"
DEFAULT_ARTIFACTS = PROJECT_ROOT / "mlartifacts"

# A down tracking server must cost seconds, not the minutes of MLflow's default retry schedule; callers can
# still override both through the environment.
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "10")


def tracking_uri() -> str:
    """The tracking URI in force: ``$MLFLOW_TRACKING_URI`` or ``sqlite:///<project>/mlflow.db``."""
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{DEFAULT_STORE}"


def _uses_default_store(uri: str) -> bool:
    return uri == f"sqlite:///{DEFAULT_STORE}"


def use_tracking_store() -> str:
    """Point this process's MLflow client (and registry) at :func:`tracking_uri`; returns the URI."""
    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    mlflow.set_registry_uri(uri)
    return uri


def ensure_experiment(name: str = DEFAULT_EXPERIMENT) -> str:
    """The id of experiment ``name``, created if missing (artifacts under the project for the default store)."""
    uri = use_tracking_store()
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    artifact_location = None
    if _uses_default_store(uri) or uri.startswith("sqlite:"):
        DEFAULT_ARTIFACTS.mkdir(parents=True, exist_ok=True)
        artifact_location = (DEFAULT_ARTIFACTS / name).as_uri()
    return client.create_experiment(name, artifact_location=artifact_location)
