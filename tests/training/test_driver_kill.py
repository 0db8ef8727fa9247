"""The training job's driver killed mid-run: running the same command again resumes the stored run from its last
checkpoint (same TrainingConfig name) and continues the same MLflow run, with every epoch logged once."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT

from ..cluster_support import kill_when, session_ray_env, write_config

EPOCHS = 6


# Over 120 s (~2.5 min on 2 cores): the training command run three times (killed mid-run, resumed, run again on the
# finished run), each a new process that imports Ray, MLflow and torch and joins the session's Ray.
@pytest.mark.slow
def test_a_killed_driver_resumes_with_the_same_command_and_continues_its_mlflow_run(
        ray_session, small_config, tmp_path, isolated_mlflow_store):
    config = small_config(optim__epochs=EPOCHS, optim__batch_size=10)
    config.tracking.register_as = "parabit-driver-kill"
    command = [sys.executable, "jobs/train.py", "--config", str(write_config(config, tmp_path / "train.yaml"))]
    env = session_ray_env(MLFLOW_TRACKING_URI=isolated_mlflow_store)
    checkpoints = Path(config.storage_path) / config.name
    # Killed once two epochs are committed: mid-run.
    kill_when(command, env, tmp_path / "first.log", lambda: len(list(checkpoints.glob("checkpoint_*"))) >= 2,
              cwd=PROJECT_ROOT)

    rerun = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert "model: models:/parabit-driver-kill/1" in rerun.stdout

    client = MlflowClient(isolated_mlflow_store)
    experiment = client.get_experiment_by_name(config.tracking.experiment)
    runs = client.search_runs([experiment.experiment_id], filter_string=f"tags.`parabit.run_name` = '{config.name}'")
    assert len(runs) == 1, "the re-run started a second MLflow run instead of continuing the first"
    run_id = runs[0].info.run_id
    assert runs[0].info.status == "FINISHED"
    for key in ("loss", "dev_score"):
        steps = Counter(m.step for m in client.get_metric_history(run_id, key))
        # dev_score's step 0 is the untrained model (the baseline every epoch is measured against)
        first = 0 if key == "dev_score" else 1
        assert sorted(steps) == list(range(first, EPOCHS + 1)) and set(steps.values()) == {1}, (key, steps)
    # Resumed from the checkpoint, not started over: the epochs after the kill carry resumes >= 1.
    resumes = {m.step: m.value for m in client.get_metric_history(run_id, "resumes")}
    assert resumes[EPOCHS] >= 1 and resumes[1] == 0
    # Its total time counts the epochs the killed attempt trained and scored, as well as the resumed attempt's own.
    first_attempt = [step for step, value in resumes.items() if value == 0]
    earlier = sum(m.value for key in ("epoch_seconds", "dev_seconds") for m in client.get_metric_history(run_id, key)
                  if m.step in first_attempt)
    times = {k: v for k, v in client.get_run(run_id).data.metrics.items() if k.startswith("time/")}
    assert times["time/earlier_attempts_seconds"] == pytest.approx(earlier), times
    assert times["time/total_seconds"] >= earlier + times["time/train_seconds"], times

    # The same command once more, on the finished run: its last checkpoint is evaluated without training again, and
    # nothing is logged or registered twice.
    checkpoint_folders = sorted(checkpoints.glob("checkpoint_*"))
    again = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"already trained for {EPOCHS} epochs" in again.stdout
    assert "model: models:/parabit-driver-kill/1" in again.stdout
    assert sorted(checkpoints.glob("checkpoint_*")) == checkpoint_folders
    assert len(client.search_runs([experiment.experiment_id],
                                  filter_string=f"tags.`parabit.run_name` = '{config.name}'")) == 1
    steps = Counter(m.step for m in client.get_metric_history(run_id, "loss"))
    assert set(steps.values()) == {1}, steps
