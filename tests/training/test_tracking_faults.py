"""Training with the MLflow tracking server down at the start (nothing listening): training completes, warns, and
every epoch reaches the run exactly once when the spool is replayed (the documented procedure). The server down
*during* training (stopped after an epoch, started again after the next; every epoch delivered live or caught up by
the driver, once) is checked by the two-node job of tests/infra/test_local_cluster.py::
test_a_lost_node_with_a_fixed_count_ends_within_the_wait_in_one_line_then_resumes, which took over the assertions
of the former test_tracking_down_during_training_every_epoch_reaches_the_run_once."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from parabit.tracking import RunTracker
from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.training.run import run_training

from ..cluster_support import free_port

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
    assert sum("unavailable" in r.getMessage() for r in caplog.records) == 1  # said once, not per queued call
    spools = list((outputs / "mlflow-spool").glob(f"{config.name}-*.json"))
    assert len(spools) == 1

    # The server is back (here: the session's store): replaying the spool writes the whole run.
    replayed = RunTracker.replay(spools[0], uri=isolated_mlflow_store)
    client = MlflowClient(isolated_mlflow_store)
    assert_every_epoch_once(client, replayed.run_id)
    assert client.get_run(replayed.run_id).data.tags["parabit.run_name"] == config.name
