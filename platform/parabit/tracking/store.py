"""Where MLflow runs live: ``$MLFLOW_TRACKING_URI`` if set, else a SQLite store in the project folder.

Artifacts of a SQLite store go to ``mlartifacts/`` beside the database (not MLflow's cwd-relative ``./mlruns``),
so runs do not scatter across whatever directory a job happened to start in.
"""

from __future__ import annotations

import os
from pathlib import Path

import mlflow
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from parabit.paths import project_root

DEFAULT_EXPERIMENT = "parabit"

# A down tracking server must cost seconds, not the minutes of MLflow's default retry schedule; callers can
# still override both through the environment.
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "10")


def default_store() -> Path:
    """The project's own SQLite store: ``mlflow.db`` in the project folder (:func:`parabit.paths.project_root`)."""
    return project_root() / "mlflow.db"


def tracking_uri() -> str:
    """The tracking URI in force: ``$MLFLOW_TRACKING_URI`` or ``sqlite:///<project>/mlflow.db``."""
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{default_store()}"


def use_tracking_store() -> str:
    """Point this process's MLflow client (and registry) at :func:`tracking_uri`; returns the URI."""
    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    mlflow.set_registry_uri(uri)
    return uri


def ensure_experiment(name: str = DEFAULT_EXPERIMENT, uri: str | None = None) -> str:
    """The id of experiment ``name`` in store ``uri`` (default: :func:`tracking_uri`), created if missing.

    In a SQLite store the experiment's artifacts go to ``mlartifacts/`` beside the database file (for the default
    store: the project folder), not to MLflow's cwd-relative ``./mlruns``. Two processes creating it at once (the
    first runs of a team's jobs, concurrent trials) both get its id: the one that loses the race reads it.
    """
    uri = uri or tracking_uri()
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    artifact_location = None
    if uri.startswith("sqlite:///"):
        artifacts = Path(uri.removeprefix("sqlite:///")).resolve().parent / "mlartifacts"
        artifacts.mkdir(parents=True, exist_ok=True)
        artifact_location = (artifacts / name).as_uri()
    try:
        return client.create_experiment(name, artifact_location=artifact_location)
    except MlflowException as err:
        if err.error_code != "RESOURCE_ALREADY_EXISTS" or (experiment := client.get_experiment_by_name(name)) is None:
            raise
        return experiment.experiment_id
