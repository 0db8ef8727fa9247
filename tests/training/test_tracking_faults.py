"""Training with the MLflow tracking server down at the start (nothing listening): training completes, warns, and
every epoch reaches the run exactly once when the spool is replayed (the documented procedure). ``MlflowServer``: a
real `mlflow server` that tests kill and start again (tests/tracking/test_registry.py). The server down *during*
training (stopped after an epoch, started again after the next; every epoch delivered live or caught up by the
driver, once) is checked by the two-node job of tests/infra/test_local_cluster.py::
test_a_lost_node_with_a_fixed_count_ends_within_the_wait_in_one_line_then_resumes, which took over the assertions
of the former test_tracking_down_during_training_every_epoch_reaches_the_run_once."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from parabit.tracking import RunTracker
from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.training import run_training

from ..cluster_support import BIN, cli_env, free_port, wait_for_http

EPOCHS = 4


def assert_every_epoch_once(client: MlflowClient, run_id: str) -> None:
    for key in ("loss", "dev_score", "epoch"):
        steps = Counter(m.step for m in client.get_metric_history(run_id, key))
        # step 0 is the untrained model (its dev score: the baseline every epoch is measured against)
        first = 0 if key in ("dev_score", "epoch") else 1
        assert sorted(steps) == list(range(first, EPOCHS + 1)) and set(steps.values()) == {1}, (key, steps)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED"
    assert run.data.params["optim.epochs"] == str(EPOCHS)
    assert "sts2016/mean/pearson" in run.data.metrics


@pytest.mark.slow
def test_tracking_down_at_start_training_completes_warns_and_nothing_is_lost(
        ray_session, small_config, monkeypatch, caplog, isolated_mlflow_store, outputs):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    config = small_config(optim__epochs=EPOCHS)
    with caplog.at_level(logging.WARNING, logger="parabit"):
        result = run_training(PairsRecipe(config))

    assert [h["epoch"] for h in result.history] == list(range(1, EPOCHS + 1))
    assert result.mlflow_run_id is None and Path(result.model_uri).is_dir()  # the model was kept locally
    assert any("unreachable" in r.getMessage() for r in caplog.records)
    spools = list((outputs / "mlflow-spool").glob(f"{config.name}-*.json"))
    assert len(spools) == 1

    # The server is back (here: the session's store): replaying the spool writes the whole run.
    replayed = RunTracker.replay(spools[0], uri=isolated_mlflow_store)
    client = MlflowClient(isolated_mlflow_store)
    assert_every_epoch_once(client, replayed.run_id)
    assert client.get_run(replayed.run_id).data.tags["parabit.run_name"] == config.name


class MlflowServer:
    """A real `mlflow server` on one port and SQLite file, that can be killed and started again."""

    def __init__(self, folder: Path):
        self.folder, self.port = folder, free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = cli_env(MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
        self.process = subprocess.Popen(
            [str(BIN / "mlflow"), "server", "--backend-store-uri", f"sqlite:///{self.folder / 'mlflow.db'}",
             "--artifacts-destination", str(self.folder / "artifacts"), "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", "1"],
            env=env, stdout=open(self.folder / "server.log", "a"), stderr=subprocess.STDOUT, start_new_session=True)

    def wait(self, timeout: float = 240) -> None:
        assert wait_for_http(f"{self.uri}/health", timeout), (self.folder / "server.log").read_text()[-2000:]

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
