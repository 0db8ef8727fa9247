"""Real Ray Train runs on real data: data-parallel workers, a killed worker, the registered pyfunc model."""

import os
import signal
import threading
import time
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from parabit.embedder import SentenceEmbedder
from parabit.training.config import ScalingConfig
from parabit.pairs.recipe import PairsRecipe
from parabit.training.checkpointing import EMBEDDER_DIR
from parabit.training.driver import check_resources, run_training

SENTENCES = ["A man is playing a guitar.", "Two dogs run on the beach.", "The cat sleeps.", ""]


@pytest.mark.slow
def test_two_cpu_workers_train_evaluate_and_register(ray_session, small_config, isolated_mlflow_store):
    config = small_config(scaling=ScalingConfig(num_workers=2, cpus_per_worker=0.5))
    config.tracking.register_as = "parabit-encoder-test"
    result = run_training(PairsRecipe(config))

    assert [h["epoch"] for h in result.history] == [1, 2]
    assert all(h["workers"] == 2 for h in result.history)
    assert result.history[1]["loss"] < result.history[0]["loss"]
    assert -1.0 <= result.report.value("sts2016", "mean", "pearson") <= 1.0

    client = MlflowClient(isolated_mlflow_store)
    run = client.get_run(result.mlflow_run_id)
    assert run.data.params["objective.name"] == "jbi" and run.data.params["scaling.num_workers"] == "2"
    assert [m.step for m in client.get_metric_history(run.info.run_id, "loss")] == [1, 2]
    assert "sts2016/mean/pearson" in run.data.metrics and "dev/sts2016/mean/pearson" in run.data.metrics
    assert {a.path for a in client.list_artifacts(run.info.run_id, "evaluation")} >= {"evaluation/table.txt"}

    # The registered pyfunc model gives the same embeddings as the model in the checkpoint.
    assert result.model_uri.startswith("models:/parabit-encoder-test/")
    predicted = mlflow.pyfunc.load_model(result.model_uri).predict(pd.DataFrame({"text": SENTENCES}))
    in_memory = SentenceEmbedder.load(Path(result.checkpoint_path) / EMBEDDER_DIR).encode(SENTENCES)
    assert predicted.shape == (4, 64) and predicted.dtype == np.float32
    np.testing.assert_allclose(predicted, in_memory, rtol=1e-6, atol=1e-6)


def _kill_a_train_worker_after_a_committed_checkpoint(storage: Path, name: str, killed: list, deadline: float):
    import ray
    from ray.util.state import list_actors

    gcs_address = ray.get_runtime_context().gcs_address  # this session's Ray, even if others run on the machine
    while time.time() < deadline and not killed:
        # A checkpoint folder appears when the worker writes it, but the controller registers it only when it
        # next polls the workers: kill a few seconds after the second folder appears, mid-way through training.
        if len(list((storage / name).glob("checkpoint_*"))) >= 2:
            time.sleep(3.0)
            try:
                actors = list_actors(address=gcs_address, timeout=10,
                                     filters=[("class_name", "=", "RayTrainWorker"), ("state", "=", "ALIVE")])
            except Exception:  # noqa: BLE001 - the state API can be slow on a loaded machine: ask again
                continue
            if actors:
                os.kill(actors[0]["pid"], signal.SIGKILL)
                killed.append(actors[0]["pid"])
                return
        time.sleep(0.05)


@pytest.mark.slow
def test_a_killed_worker_resumes_from_its_checkpoint_and_matches_an_uninterrupted_run(ray_session, small_config,
                                                                                     isolated_mlflow_store):
    # Tiny batches make each epoch last over a second, so the kill lands mid-run.
    changes = dict(optim__epochs=10, optim__batch_size=4)
    config = small_config(**changes)
    storage = Path(config.storage_path)
    killed: list[int] = []
    killer = threading.Thread(target=_kill_a_train_worker_after_a_committed_checkpoint,
                              args=(storage, config.name, killed, time.time() + 240), daemon=True)
    killer.start()
    interrupted = run_training(PairsRecipe(config))
    killer.join()

    assert killed, "the worker was never killed (training finished before the first checkpoint was seen)"
    assert interrupted.history[-1]["resumes"] >= 1
    # No epoch skipped or repeated: in the checkpoint's history, and in the MLflow run (live logging + catch-up).
    assert [h["epoch"] for h in interrupted.history] == list(range(1, 11))
    client = MlflowClient(isolated_mlflow_store)
    for key in ("loss", "dev_score"):
        logged = sorted(m.step for m in client.get_metric_history(interrupted.mlflow_run_id, key))
        assert logged == list(range(1, 11)), (key, logged)
    assert max(m.value for m in client.get_metric_history(interrupted.mlflow_run_id, "resumes")) >= 1

    reference_config = small_config(**changes)
    reference_config.name += "-uninterrupted"
    reference = run_training(PairsRecipe(reference_config))
    assert reference.history[-1]["resumes"] == 0
    np.testing.assert_allclose([h["loss"] for h in interrupted.history], [h["loss"] for h in reference.history],
                               rtol=1e-5)
    resumed = SentenceEmbedder.load(Path(interrupted.checkpoint_path) / EMBEDDER_DIR).encode(SENTENCES)
    straight = SentenceEmbedder.load(Path(reference.checkpoint_path) / EMBEDDER_DIR).encode(SENTENCES)
    np.testing.assert_allclose(resumed, straight, rtol=1e-4, atol=1e-5)


def test_scaling_that_leaves_no_cpu_for_ray_data_fails_at_start(ray_session, small_config):
    config = small_config(scaling=ScalingConfig(num_workers=2, cpus_per_worker=1.0))
    with pytest.raises(ValueError, match="leaving no whole CPU for Ray Data; lower scaling.cpus_per_worker"):
        run_training(PairsRecipe(config))


def test_concurrent_runs_that_leave_no_cpu_for_ray_data_fail_at_start(ray_session, small_config):
    with pytest.raises(ValueError, match="2 concurrent runs x 1 workers x 1.0 CPU = 2 of the cluster's 2 CPUs"):
        check_resources(small_config(), concurrent_runs=2)
