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
