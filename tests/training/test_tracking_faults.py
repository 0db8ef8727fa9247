"""Training with the MLflow tracking server down: at the start (nothing listening), and during training (a real
`mlflow server` killed after the first epoch and started again later). Training completes either way and every
epoch reaches the run exactly once: delivered live, caught up by the driver from the final checkpoint's history,
or saved to the spool and replayed (the documented procedure) when the server is still down at the end."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
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


def _checkpoints(storage: Path, name: str) -> int:
    return len(list((storage / name).glob("checkpoint_*")))


@pytest.mark.slow
def test_tracking_down_during_training_every_epoch_reaches_the_run_once(ray_session, small_config, tmp_path):
    server = MlflowServer(tmp_path)
    server.start()
    server.wait()
    config = small_config(optim__epochs=EPOCHS, optim__batch_size=10)
    storage = Path(config.storage_path)
    events: list[str] = []

    def outage():  # down from the first committed epoch until the second after it
        deadline = time.time() + 400
        while _checkpoints(storage, config.name) < 1 and time.time() < deadline:
            time.sleep(0.1)
        server.kill()
        events.append("down")
        while _checkpoints(storage, config.name) < 2 and time.time() < deadline:
            time.sleep(0.1)
        server.start()
        events.append("restarted")

    breaker = threading.Thread(target=outage, daemon=True)
    breaker.start()
    old_uri = os.environ["MLFLOW_TRACKING_URI"]
    os.environ["MLFLOW_TRACKING_URI"] = server.uri
    try:
        result = run_training(PairsRecipe(config))
        breaker.join(timeout=400)
        server.wait()
    finally:
        os.environ["MLFLOW_TRACKING_URI"] = old_uri
    try:
        assert events == ["down", "restarted"]
        assert [h["epoch"] for h in result.history] == list(range(1, EPOCHS + 1))
        client = MlflowClient(server.uri)
        # If the server was not back before the run ended, the rest was spooled: replay it as documented.
        for spool in (Path(os.environ["PARABIT_OUTPUT"]) / "mlflow-spool").glob(f"{config.name}-*.json"):
            RunTracker.replay(spool, uri=server.uri)
        runs = client.search_runs([client.get_experiment_by_name(config.tracking.experiment).experiment_id],
                                  filter_string=f"tags.`parabit.run_name` = '{config.name}'")
        assert [r.info.run_id for r in runs] == [result.mlflow_run_id]  # one run, not one per outage
        assert_every_epoch_once(client, result.mlflow_run_id)
    finally:
        server.kill()
