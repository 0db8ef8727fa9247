"""Real sweeps on the local Ray: MLflow parent/child runs, and a killed sweep driver restored to completion."""

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT
from parabit.tuning.space import load_space
from parabit.tuning.sweep import FINAL_METRIC, run_sweep


def _runs(client, sweep):
    experiment = client.get_experiment_by_name("sweep-tests")
    return client.search_runs([experiment.experiment_id], filter_string=f"tags.`parabit.sweep` = '{sweep}'")


@pytest.mark.slow
def test_a_two_trial_sweep_logs_one_parent_and_two_children(ray_session, write_space, isolated_mlflow_store):
    path = write_space("two-trials", {"objective.margin": [1.0, 10.0]},
                       search={"algorithm": "grid", "max_concurrent_trials": 2}, scheduler={"name": "fifo"})
    summary = run_sweep(load_space(path))
    assert summary.trials == 2 and summary.errors == 0
    assert summary.best_params["objective.margin"] in (1.0, 10.0)
    assert summary.model_uri == "models:/parabit-two-trials/1"
    client = MlflowClient(isolated_mlflow_store, registry_uri=isolated_mlflow_store)
    assert str(client.get_model_version_by_alias("parabit-two-trials", "candidate").version) == "1"

    runs = _runs(client, "two-trials")
    parents = [r for r in runs if r.data.tags["parabit.kind"] == "sweep"]
    children = [r for r in runs if r.data.tags["parabit.kind"] == "trial"]
    assert len(parents) == 1 and len(children) == 2
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    assert {c.data.params["objective.margin"] for c in children} == {"1.0", "10.0"}
    for child in children:
        assert child.info.status == "FINISHED"
        assert len(client.get_metric_history(child.info.run_id, "dev_score")) == 2  # one per epoch
        assert "sts2016/mean/pearson" in child.data.metrics
    assert parents[0].data.metrics["trials"] == 2
    assert "sweep/trials.csv" in {a.path for a in client.list_artifacts(parents[0].info.run_id, "sweep")}


@pytest.mark.slow
def test_a_killed_sweep_driver_is_restored_and_every_trial_finishes_once(write_space, tmp_path):
    path = write_space("restored", {"objective.margin": [1.0, 10.0, 100.0]},
                       search={"algorithm": "grid", "max_concurrent_trials": 1}, scheduler={"name": "fifo"},
                       fixed={"optim.epochs": 3})
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": store, "PARABIT_OUTPUT": str(tmp_path / "outputs")}
    env.pop("RAY_ADDRESS", None)
    command = [sys.executable, str(PROJECT_ROOT / "tuning" / "sweep.py"), "--space", path]
    client = MlflowClient(store)

    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.time() + 300
    try:
        while time.time() < deadline:  # kill the driver (and its local Ray) once the first trial has finished
            experiment = client.get_experiment_by_name("sweep-tests")
            if experiment and any(r.info.status == "FINISHED" and r.data.tags.get("parabit.kind") == "trial"
                                  for r in _runs(client, "restored")):
                break
            assert first.poll() is None, "the sweep ended before it could be interrupted"
            time.sleep(1)
        else:
            pytest.fail("no trial finished within 300 s")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()

    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "resuming the interrupted sweep" in rerun.stdout
    assert "3 trials (0 errors)" in rerun.stdout

    trials = [r for r in _runs(client, "restored") if r.data.tags["parabit.kind"] == "trial"]
    finished = Counter(r.data.tags["parabit.run_name"] for r in trials if r.info.status == "FINISHED")
    assert len(finished) == 3 and set(finished.values()) == {1}
    final_evaluations = {}
    for trial in trials:
        # Each epoch once: a trial restarted from scratch would log its epochs again.
        assert sorted(m.step for m in client.get_metric_history(trial.info.run_id, "loss")) == [1, 2, 3]
        # The final evaluation once: a trial that Tune runs again after the restore (it had finished, but the killed
        # driver had not saved it as finished) reuses the evaluation in its run instead of logging another.
        final_evaluations[trial.info.run_name] = {
            key: len(client.get_metric_history(trial.info.run_id, key))
            for key in ("sts2016/mean/pearson", FINAL_METRIC)}
    assert all(counts == {"sts2016/mean/pearson": 1, FINAL_METRIC: 1} for counts in final_evaluations.values()), \
        final_evaluations
    parents = [r for r in _runs(client, "restored") if r.data.tags["parabit.kind"] == "sweep"]
    assert len(parents) == 1  # the parent run was continued, not duplicated
