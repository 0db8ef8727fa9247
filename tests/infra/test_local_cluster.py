"""infra/local: a head + 2 worker nodes + an MLflow server on this machine; every kind of job submitted with
infra/submit.sh (a 2-node training job, the back-translation pipeline, a two-trial sweep) runs the code and configs it
was submitted from (runtime_env.yaml: working_dir + py_modules) and lands in the cluster's MLflow store; a training job
submitted with plain `ray job submit --working-dir` (the README's line) does too; then stop.sh, on the cluster that
lost a node, stops what start.sh started and nothing else. One cluster for the whole module (start-up costs ~30 s on a
quiet machine, up to ~2 min in the full suite): the tests run in file order, the last one stops it."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import time
from pathlib import Path

import pytest
import yaml
from mlflow.tracking import MlflowClient

from parabit.sweeps.trials import FINAL_METRIC

from .local_cluster import LOCAL, running_cluster, still_running

NUM_WORKERS = 2


@pytest.fixture(scope="module")
def local_cluster(ray_session, tmp_path_factory):
    """The module's cluster; ``ray_session`` first, so that another Ray runs on the machine all along (the last test
    checks stop.sh leaves it alone)."""
    tmp = tmp_path_factory.mktemp("local-cluster")
    with running_cluster(tmp / "cluster", tmp / "outputs", NUM_WORKERS) as cluster:
        yield cluster


# Over 120 s in the full suite (63-187 s seen on 2 cores): the module's first job, so the one that waits for each node
# to set up the runtime environment (working_dir and py_modules unpacked), then Apertium, scoring and selection as Ray
# Data stages on three raylets and a server sharing two cores.
@pytest.mark.slow
def test_backtranslate_job(local_cluster):
    """The pipeline job imports `pipelines` (a py_module) and reads the shipped config from the uploaded project."""
    cluster = local_cluster
    submitted = cluster.submit("python", "jobs/backtranslate.py", "--config", "jobs/configs/backtranslate_slice.yaml",
                               "--set", "sources=[{format: tatoeba, lang: es, limit: 200}]",
                               "--set", "select.sample_size=100", timeout=420)
    assert "training pairs:" in submitted.stdout

    client = cluster.mlflow_client()
    experiment = client.get_experiment_by_name("parabit-pipelines")
    (run,) = client.search_runs([experiment.experiment_id], "tags.`parabit.backtranslation` = 'backtranslate_slice'")
    assert run.info.status == "FINISHED"
    assert run.data.params["translation.engine"] == "apertium" and run.data.params["select.sample_size"] == "100"
    assert "'limit': 200" in run.data.params["sources"]
    metrics = run.data.metrics
    assert metrics["ingest.rows_in"] == metrics["backtranslate.rows_in"] == 200
    for stage in ("ingest", "backtranslate", "score", "select"):
        assert metrics[f"{stage}.rows_in"] == metrics[f"{stage}.rows_out"] + metrics[f"{stage}.rows_rejected"]
    assert 0 < metrics["select.rows_out"] <= 100
    # The selected pairs are on the disk every node shares (the job's PARABIT_OUTPUT), where the run says.
    output = Path(run.data.tags["parabit.pipeline_output"])
    assert output.is_file() and output.is_relative_to(Path(cluster.env["PARABIT_OUTPUT"]))


# Over 120 s (~2-4 min on 2 cores): a sweep job whose two trials are each a Ray Train run with ~15-20 s of start-up,
# then the surviving trial evaluated and registered, on the cluster's three raylets sharing two cores.
@pytest.mark.slow
def test_a_two_trial_sweep_job_registers_the_trial_that_did_not_diverge(local_cluster, tmp_path):
    """Tune trials run in folders of their own: base_config (project-relative) must still resolve in every trial.
    lr 1e37 makes one trial's loss non-finite in its first epoch: that trial fails with the reason and the sweep
    registers the other. (One sweep job checks both: it holds the assertions of tests/sweeps/test_sweep.py's former
    test_a_trial_that_diverges_fails_with_the_reason_and_the_sweep_registers_the_best_of_the_others.)"""
    cluster = local_cluster
    space = {"name": "cluster-sweep", "base_config": "jobs/configs/bilingual_sentences.yaml",
             "fixed": {"data.max_pairs": 2000, "model.dim": 32, "optim.epochs": 1, "evaluation.sts_years": [2016],
                       "evaluation.sick": False, "evaluation.msrp": False, "scaling.cpus_per_worker": 0.45,
                       "tracking.experiment": "cluster-sweep", "tracking.register_as": "parabit-encoder-cluster-sweep"},
             "search": {"algorithm": "grid", "max_concurrent_trials": 2}, "scheduler": {"name": "fifo"},
             "parameters": {"optim.lr": [0.005, 1e37]}}
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(space))
    submitted = cluster.submit("python", "tuning/sweep.py", "--space", path, timeout=600)
    assert "2 trials (1 error)" in submitted.stdout
    assert "model: models:/parabit-encoder-cluster-sweep/1" in submitted.stdout

    client = cluster.mlflow_client()
    experiment = client.get_experiment_by_name("cluster-sweep")
    runs = client.search_runs([experiment.experiment_id], "tags.`parabit.sweep` = 'cluster-sweep'")
    (parent,) = [r for r in runs if r.data.tags["parabit.kind"] == "sweep"]
    children = [r for r in runs if r.data.tags["parabit.kind"] == "trial"]
    assert parent.info.status == "FINISHED" and parent.data.metrics["trials"] == 2
    assert parent.data.metrics["errors"] == 1
    assert len(children) == 2 and {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert all(c.data.params["optim.epochs"] == "1" for c in children)
    (diverged,) = [c for c in children if float(c.data.params["optim.lr"]) == 1e37]
    (finished,) = [c for c in children if c.info.run_id != diverged.info.run_id]
    assert diverged.info.status == "FAILED" and finished.info.status == "FINISHED"
    reason = diverged.data.tags["mlflow.note.content"]  # the run's description in the MLflow UI
    assert reason.startswith(f"training run {diverged.info.run_name} diverged at epoch 1, step ")
    assert "not finite" in reason and "no model is registered" in reason
    assert FINAL_METRIC not in diverged.data.metrics and "parabit.model_uri" not in diverged.data.tags
    assert "dev_score" in finished.data.metrics
    # The one model version is the sweep's, of the trial that did not diverge, with a finite final score.
    (version,) = client.search_model_versions("name = 'parabit-encoder-cluster-sweep'")
    assert version.run_id == parent.info.run_id
    assert parent.data.tags["parabit.sweep.best_trial"] == finished.info.run_name
    assert json.loads(parent.data.tags["parabit.sweep.best_params"]) == {"optim.lr": 0.005}
    assert math.isfinite(parent.data.metrics[FINAL_METRIC]) and "sts2016/mean/pearson" in parent.data.metrics


# A job long enough to lose a node in (4 epochs of some seconds on 2 workers: batches of 20, since the fused step
# takes a batch of 100 in well under a millisecond), on one Train worker per worker node.
NODE_LOSS_JOB = ("python", "jobs/train.py", "--config", "jobs/configs/bilingual_sentences.yaml",
                 "--set", "data.max_pairs=30000", "--set", "model.dim=64", "--set", "optim.epochs=4",
                 "--set", "optim.batch_size=20",
                 "--set", "evaluation.sts_years=[2016]", "--set", "evaluation.sick=false",
                 "--set", "evaluation.msrp=false", "--set", "scaling.resources_per_worker={train_slot: 1}",
                 "--set", "tracking.register_as=parabit-encoder-node-loss")


def _epochs_logged(client: MlflowClient, run_id: str, key: str = "loss") -> list[int]:
    return sorted(int(m.step) for m in client.get_metric_history(run_id, key))


def _run_named(client: MlflowClient, name: str):
    (run,) = client.search_runs([client.get_experiment_by_name("parabit").experiment_id],
                                f"tags.`parabit.run_name` = '{name}'")
    return run


@pytest.mark.slow
def test_a_lost_node_with_a_fixed_count_ends_within_the_wait_in_one_line_then_resumes(local_cluster):
    """Two workers, worker-2's processes killed after epoch 1: the run waits placement_timeout_s (15 s) for a second
    train_slot, then ends: one error line naming what is missing, no traceback, the MLflow run FAILED, nothing
    registered. The same command, once worker-2 is back, resumes, submitted by a client killed as soon as the job
    runs, with the cluster's MLflow server down for an epoch: the job finishes, `ray job logs` shows its model, every
    epoch is in MLflow once, and its two Train workers ran on the two worker nodes. (Over 120 s, ~2.5-4.5 min: two
    jobs, the 15 s placement wait, the killed node's restart, and the MLflow server's.)"""
    cluster, name = local_cluster, "node-loss-fixed"
    command = (*NODE_LOSS_JOB, "--set", f"name={name}", "--set", "scaling.num_workers=2",
               "--set", "scaling.placement_timeout_s=15")
    cluster.submit_no_wait(f"{name}-1", *command)
    cluster.wait_for_log(f"{name}-1", f"[{name}] epoch 1/4 loss", timeout=300)
    killed_port = cluster.raylet_port("worker-2")
    cluster.stop_part("worker-2", "--kill")
    killed = time.time()
    try:
        assert cluster.wait_for_end(f"{name}-1", timeout=300) == "FAILED"
        assert time.time() - killed < 150  # node-loss detection, the 15 s wait, shutting down
        logs = cluster.job_logs(f"{name}-1")
        assert "Traceback" not in logs, logs[-5000:]
        assert f"[{name}] waiting up to 15 s for the cluster to place 2 worker(s) of {{CPU: 1, train_slot: 1}}" in logs
        last = logs.strip().splitlines()[-1]
        assert last.startswith(f"error: training run {name}: the cluster could not place 2 worker(s) of "
                               "{CPU: 1, train_slot: 1} within scaling.placement_timeout_s=15 s (its ")
        assert "the run is resumable" in last and last.endswith(f"python {shlex.join(command[1:])}")
        client = cluster.mlflow_client()
        run = _run_named(client, name)
        assert run.info.status == "FAILED" and not client.search_model_versions("name='parabit-encoder-node-loss'")
    finally:
        cluster.start_part("worker-2")
    # Started again at a new raylet address: the head's connection to the old one is still backing off.
    assert cluster.raylet_port("worker-2") != killed_port

    # The same command resumes: submitted by a client that is killed once the job runs, with the MLflow server
    # stopped after the job's first epoch and started again after its next. (This job holds the assertions of the
    # former test_a_two_node_job_outlives_its_client_and_its_tracking_server_going_down, and before it of
    # test_two_node_training_job: one two-node job checks all three; and those of tests/training/
    # test_tracking_faults.py::test_tracking_down_during_training_every_epoch_reaches_the_run_once: one run of that
    # name, FINISHED, each epoch's loss, dev score and epoch metric once, the final STS scores.)
    nodes = cluster.ray_api("/api/v0/nodes?detail=1")["data"]["result"]["result"]
    workers = {n["node_id"] for n in nodes
               if n["state"] == "ALIVE" and n["labels"]["parabit-node"].startswith("worker-")}
    assert len(workers) == NUM_WORKERS
    assert all(n["resources_total"].get("train_slot") == 1 for n in nodes if n["node_id"] in workers)
    job = f"{name}-2"
    cluster.submit_then_kill_the_client(job, *command)
    cluster.wait_for_log(job, f"resuming {name} from the checkpoint of epoch", timeout=300)
    said = re.findall(rf"resuming {name} from the checkpoint of epoch (\d+)", cluster.job_logs(job))
    (resumed_from,) = {int(epoch) for epoch in said}  # every worker says it
    assert resumed_from <= 2, "the node was lost too late to leave two epochs for the tracking outage"
    cluster.wait_for_log(job, f"[{name}] epoch {resumed_from + 1}/4 loss", timeout=300)
    cluster.stop_part("mlflow")
    try:
        cluster.wait_for_log(job, f"[{name}] epoch {resumed_from + 2}/4 loss", timeout=300)
    finally:
        cluster.start_part("mlflow")
    assert cluster.wait_for_end(job, timeout=420) == "SUCCEEDED", cluster.job_logs(job)[-5000:]
    logs = cluster.run("bash", "-c", f"source {cluster.state / 'cluster.env'} && ray job logs {job}", timeout=120)
    assert logs.returncode == 0, logs.stderr[-3000:]
    (model_uri,) = re.findall(r"model: (models:/parabit-encoder-node-loss/\d+)", logs.stdout)
    client = cluster.mlflow_client()
    resumed = _run_named(client, name)
    assert resumed.info.run_id == run.info.run_id and resumed.info.status == "FINISHED"
    assert _epochs_logged(client, run.info.run_id) == [1, 2, 3, 4]
    assert _epochs_logged(client, run.info.run_id, "dev_score") == [0, 1, 2, 3, 4]
    assert _epochs_logged(client, run.info.run_id, "epoch") == [0, 1, 2, 3, 4]
    (version,) = client.search_model_versions("name='parabit-encoder-node-loss'")
    assert version.run_id == run.info.run_id and model_uri == f"models:/parabit-encoder-node-loss/{version.version}"

    # Everything went to the cluster's MLflow server: run, tags, metrics, the registered model and its files.
    assert resumed.data.params["objective.name"] == "jbi" and resumed.data.params["scaling.num_workers"] == "2"
    assert "sts2016/mean/pearson" in resumed.data.metrics
    worker_nodes = resumed.data.tags["parabit.worker_nodes"].split(",")
    assert len(worker_nodes) == 2 and set(worker_nodes) == workers
    assert resumed.data.metrics["distinct_nodes"] == 2
    assert any((cluster.state / "mlartifacts").rglob("MLmodel")), "model files did not reach the server's store"
    # The server's store is the SQLite file in the cluster's state dir (what the READMEs say): the run is there.
    store = f"sqlite:///{cluster.state / 'mlflow.db'}"
    assert MlflowClient(store).get_run(run.info.run_id).info.status == "FINISHED"


@pytest.mark.slow
def test_a_lost_node_with_an_elastic_range_goes_on_with_fewer_workers(local_cluster):
    """``scaling.num_workers: [1, 2]``, worker-2's processes killed after epoch 1: the job succeeds on one worker from
    the last checkpoint, each epoch in MLflow once, and scores as the uninterrupted two-worker run of the previous
    test (whose resume is bit-identical to an uninterrupted run) within noise. It is submitted with plain `ray job
    submit --working-dir` (the README's line), not infra/submit.sh: its model is registered and named in the job's
    logs. (This job holds the assertions of the former tests/jobs/test_job_submission.py::
    test_train_job_submitted_to_a_head_node, which started a head of its own for one such job: the job succeeds,
    its logs name the model version registered from its run, and that run carries its name and its STS scores.)
    (Over 120 s in the full suite, ~2-2.5 min: a four-epoch job whose worker group starts twice.)"""
    cluster, name = local_cluster, "node-loss-elastic"
    cluster.submit_with_the_ray_cli(name, *NODE_LOSS_JOB, "--set", f"name={name}",
                                    "--set", "scaling.num_workers=[1, 2]")
    cluster.wait_for_log(name, f"[{name}] epoch 1/4 loss", timeout=300)
    cluster.stop_part("worker-2", "--kill")  # not started again: the last test stops a cluster that lost a node
    assert cluster.wait_for_end(name, timeout=420) == "SUCCEEDED", cluster.job_logs(name)[-5000:]
    # Ray Data's split coordinator of the lost worker group may print its executor's teardown error (Ray's own
    # __del__, seen once in CI); every other line (the driver, parabit's workers) must be free of tracebacks.
    logs = [line for line in cluster.job_logs(name).splitlines() if "(SplitCoordinator pid=" not in line]
    assert not [line for line in logs if "Traceback" in line], "\n".join(logs[-80:])
    client = cluster.mlflow_client()
    run, reference = _run_named(client, name), _run_named(client, "node-loss-fixed")
    assert run.info.status == "FINISHED" and _epochs_logged(client, run.info.run_id) == [1, 2, 3, 4]
    workers = [m.value for m in sorted(client.get_metric_history(run.info.run_id, "workers"), key=lambda m: m.step)]
    assert workers[0] == 2 and workers[-1] == 1
    (version,) = [v for v in client.search_model_versions("name='parabit-encoder-node-loss'")
                  if v.run_id == run.info.run_id]
    assert f"model: models:/parabit-encoder-node-loss/{version.version}" in "\n".join(logs)
    assert run.data.tags["parabit.run_name"] == name
    score, uninterrupted = (r.data.metrics["sts2016/mean/pearson"] for r in (run, reference))
    assert abs(score - uninterrupted) < 0.03, (score, uninterrupted)


@pytest.mark.slow
def test_stop_leaves_nothing_behind(ray_session, local_cluster):
    """stop.sh on a cluster that lost a node (the previous test SIGKILLed worker-2 and left it down), as after a lost
    host: it stops every part still running and the lost node's leftovers, and only those."""
    cluster = local_cluster
    processes = cluster.processes()
    running = {p.stem: int(p.read_text()) for p in cluster.state.glob("*.pid")}
    assert {"head", "worker-1", "mlflow"} <= set(running) and set(running.values()) <= set(processes)
    stopped = cluster.run(LOCAL / "stop.sh", timeout=180)
    assert stopped.returncode == 0, stopped.stderr[-3000:]

    deadline = time.time() + 15
    while (left := {pid: a for pid, a in processes.items() if still_running(pid, a)}) and time.time() < deadline:
        time.sleep(0.5)
    assert not left, f"stop.sh left processes running: {left}"
    assert not list(cluster.state.glob("*.pid")) and not (cluster.state / "cluster.env").exists()
    # ...and only those: the session's own Ray (another cluster on this machine) still runs tasks.
    assert ray_session.get(ray_session.remote(lambda: os.getpid()).remote(), timeout=60) > 0

