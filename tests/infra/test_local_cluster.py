"""infra/local: a head + 2 worker nodes + an MLflow server on this machine; every kind of job submitted with
infra/submit.sh (a 2-node training job, the back-translation pipeline, a two-trial sweep) runs the code and configs it
was submitted from (runtime_env.yaml: working_dir + py_modules) and lands in the cluster's MLflow store; then stop.sh
stops exactly what start.sh started. One cluster for the whole module (start-up costs ~30 s): the tests run in file
order, the last one stops it."""

from __future__ import annotations

import calendar
import json
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT, data_root
from parabit.reproduction.ledger import Ledger
from parabit.training.config import ScalingConfig

from ..cluster_support import cli_env, write_config

LOCAL = PROJECT_ROOT / "infra" / "local"
NUM_WORKERS = 2


def _free_port_block(nodes: int) -> int:
    """A base port whose block (see infra/local/lib.sh: 100 ports per node plus the head's) is entirely free;
    below Linux's ephemeral range, so no outgoing connection takes one meanwhile."""
    for _ in range(50):
        base = random.randrange(20_000, 32_000 - 100 * (nodes + 1), 100)
        try:
            for port in range(base, base + 100 * (nodes + 1)):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("no free block of ports for the local cluster")


@dataclass
class Cluster:
    state: Path
    ray_temp: Path
    env: dict
    dashboard: str
    mlflow: str

    def run(self, *command, timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run([str(c) for c in command], env=self.env, capture_output=True, text=True,
                              timeout=timeout, cwd=PROJECT_ROOT)

    def ray_api(self, path: str):
        token = (self.state / "auth_token").read_text().strip()
        request = urllib.request.Request(f"{self.dashboard}{path}", headers={"Authorization": f"Bearer {token}"})
        return json.load(urllib.request.urlopen(request, timeout=10))

    def processes(self) -> dict[int, str]:
        """Every process of this cluster: the process groups in its pid files, and anything else started with its
        Ray temp dir on the command line (Ray workers)."""
        groups = {int(p.read_text()) for p in self.state.glob("*.pid")}
        listing = subprocess.run(["ps", "-eo", "pid=,pgid=,args="], capture_output=True, text=True).stdout
        found = {}
        for line in listing.splitlines():
            pid, pgid, args = line.split(None, 2)
            if int(pgid) in groups or str(self.ray_temp) in args:
                found[int(pid)] = args
        return found


    def submit(self, *command, timeout: float) -> subprocess.CompletedProcess:
        """``infra/submit.sh -- COMMAND`` from the project folder, checked to succeed."""
        submitted = self.run(PROJECT_ROOT / "infra" / "submit.sh", "--", *command, timeout=timeout)
        assert submitted.returncode == 0, submitted.stdout[-5000:] + submitted.stderr[-3000:]
        assert "succeeded" in submitted.stdout + submitted.stderr
        return submitted

    def mlflow_client(self) -> MlflowClient:
        return MlflowClient(self.mlflow, registry_uri=self.mlflow)


@pytest.fixture(scope="module")
def local_cluster(ray_session, tmp_path_factory):
    """The module's cluster; ``ray_session`` first, so that another Ray runs on the machine all along (the last test
    checks stop.sh leaves it alone)."""
    tmp = tmp_path_factory.mktemp("local-cluster")
    base = _free_port_block(NUM_WORKERS + 1)
    # Short (Unix socket paths), and removed at the end: Ray's session logs stay there after stop.sh.
    ray_temp = Path(tempfile.mkdtemp(prefix="pbray-", dir="/tmp"))
    state = tmp / "cluster"
    env = cli_env(PARABIT_CLUSTER_DIR=str(state), PARABIT_PORT_BASE=str(base), PARABIT_NUM_WORKERS=str(NUM_WORKERS),
                  PARABIT_RAY_TEMP_DIR=str(ray_temp), PARABIT_DATA=str(data_root()),
                  PARABIT_OUTPUT=str(tmp / "outputs"), RAY_DATA_DISABLE_PROGRESS_BARS="1")
    env.pop("MLFLOW_TRACKING_URI")  # the session's SQLite store: submit.sh must take the cluster's server instead
    cluster = Cluster(state, ray_temp, env, f"http://127.0.0.1:{base + 1}", f"http://127.0.0.1:{base + 3}")
    try:
        started = cluster.run(LOCAL / "start.sh", timeout=600)  # a node may be started up to 3 times (start.sh)
        assert started.returncode == 0, started.stderr[-4000:]
        yield cluster
    finally:
        cluster.run(LOCAL / "stop.sh", "--quiet", timeout=180)  # a no-op if the last test stopped it already
        shutil.rmtree(ray_temp, ignore_errors=True)


@pytest.mark.slow
def test_two_node_training_job(local_cluster, small_config, tmp_path):
    cluster = local_cluster
    nodes = cluster.ray_api("/api/v0/nodes?detail=1")["data"]["result"]["result"]
    workers = {n["node_id"] for n in nodes if n["state"] == "ALIVE" and n["labels"]["parabit-node"].startswith("worker-")}
    assert len(workers) == NUM_WORKERS
    assert all(n["resources_total"].get("train_slot") == 1 for n in nodes if n["node_id"] in workers)

    # One train_slot per worker node: the two Train workers can only land on different nodes.
    config = small_config(scaling=ScalingConfig(num_workers=2, cpus_per_worker=0.5,
                                                resources_per_worker={"train_slot": 1}))
    config.name, config.storage_path = "local-cluster", None  # results under the job's PARABIT_OUTPUT
    config.tracking.register_as = "parabit-encoder-local-cluster"
    config_path = write_config(config, tmp_path / "train.yaml")
    submitted = cluster.submit("python", "jobs/train.py", "--config", config_path, timeout=420)
    assert "model: models:/parabit-encoder-local-cluster/1" in submitted.stdout

    # Everything went to the cluster's MLflow server: run, tags, metrics, the registered model and its files.
    client = cluster.mlflow_client()
    versions = client.search_model_versions("name='parabit-encoder-local-cluster'")
    assert [v.version for v in versions] == ["1"]
    run = client.get_run(versions[0].run_id)
    assert run.info.status == "FINISHED"
    assert run.data.params["objective.name"] == "jbi" and run.data.params["scaling.num_workers"] == "2"
    assert "sts2016/mean/pearson" in run.data.metrics
    worker_nodes = run.data.tags["parabit.worker_nodes"].split(",")
    assert len(worker_nodes) == 2 and set(worker_nodes) == workers
    assert run.data.metrics["distinct_nodes"] == 2
    assert any((cluster.state / "mlartifacts").rglob("MLmodel")), "model files did not reach the server's store"
    # The server's store is the SQLite file in the cluster's state dir (what the READMEs say): the run is there.
    store = f"sqlite:///{cluster.state / 'mlflow.db'}"
    assert MlflowClient(store).get_run(run.info.run_id).info.status == "FINISHED"


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
    (run,) = client.search_runs([experiment.experiment_id], "tags.`parabit.pipeline` = 'backtranslate_slice'")
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


@pytest.mark.slow
def test_two_trial_sweep_job(local_cluster, tmp_path):
    """Tune trials run in folders of their own: base_config (project-relative) must still resolve in every trial."""
    cluster = local_cluster
    space = {"name": "cluster-sweep", "base_config": "jobs/configs/bilingual_sentences.yaml",
             "fixed": {"data.max_pairs": 2000, "model.dim": 32, "optim.epochs": 1, "evaluation.sts_years": [2016],
                       "evaluation.sick": False, "evaluation.msrp": False, "scaling.cpus_per_worker": 0.45,
                       "tracking.experiment": "cluster-sweep", "tracking.register_as": "parabit-encoder-cluster-sweep"},
             "search": {"algorithm": "grid", "max_concurrent_trials": 2}, "scheduler": {"name": "fifo"},
             "parameters": {"objective.margin": [1.0, 10.0]}}
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(space))
    submitted = cluster.submit("python", "tuning/sweep.py", "--space", path, timeout=600)
    assert "2 trials (0 errors)" in submitted.stdout
    assert "model: models:/parabit-encoder-cluster-sweep/1" in submitted.stdout

    client = cluster.mlflow_client()
    experiment = client.get_experiment_by_name("cluster-sweep")
    runs = client.search_runs([experiment.experiment_id], "tags.`parabit.sweep` = 'cluster-sweep'")
    (parent,) = [r for r in runs if r.data.tags["parabit.kind"] == "sweep"]
    children = [r for r in runs if r.data.tags["parabit.kind"] == "trial"]
    assert parent.info.status == "FINISHED" and parent.data.metrics["trials"] == 2
    assert len(children) == 2 and all(c.info.status == "FINISHED" for c in children)
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert {c.data.params["objective.margin"] for c in children} == {"1.0", "10.0"}
    assert all(c.data.params["optim.epochs"] == "1" and "dev_score" in c.data.metrics for c in children)
    assert "sts2016/mean/pearson" in parent.data.metrics


@pytest.mark.slow
def test_reproduction_cells_train_side_by_side(local_cluster, tmp_path):
    """`--parallel 2`: Bao's two quick cells train at once, each a Ray task with its own Ray Train run; their ledger
    records' wall-clock intervals overlap, and each has its run in the cluster's MLflow store."""
    cluster = local_cluster
    ledger = tmp_path / "ledger"
    submitted = cluster.submit("python", "jobs/reproduce.py", "--quick", "--repeats", "1", "--seed-paper", "bao",
                               "--parallel", "2", "--set", f"ledger={ledger}", "--set",
                               f"document={tmp_path / 'reproduction.md'}", timeout=600)
    assert "0 taken from the ledger" in submitted.stdout and "2 trained, 0 failed" in submitted.stdout
    records = Ledger(ledger).cells("bao")
    assert len(records) == 2

    def seconds(stamp: str) -> float:
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))

    first, second = sorted(records, key=lambda r: r.started)
    assert seconds(second.started) < seconds(first.finished)  # the second started before the first finished
    client = cluster.mlflow_client()
    for record in records:
        run = client.get_run(record.mlflow_run_id)
        assert run.info.status == "FINISHED" and run.info.run_name == record.cell
        assert run.data.metrics["sick-en/test/pearson"] == record.metrics["sick-en/test/pearson"]
        assert record.machine["cell_cpus"] == 1.0  # (3 cluster CPUs - 1 kept for Ray Data) / 2 cells


@pytest.mark.slow
def test_stop_leaves_nothing_behind(ray_session, local_cluster):
    cluster = local_cluster
    processes = cluster.processes()
    leaders = {int(p.read_text()) for p in cluster.state.glob("*.pid")}
    assert leaders <= set(processes) and len(leaders) == NUM_WORKERS + 2  # head, workers, mlflow
    stopped = cluster.run(LOCAL / "stop.sh", timeout=180)
    assert stopped.returncode == 0, stopped.stderr[-3000:]

    deadline = time.time() + 15
    while (left := {pid: args for pid, args in processes.items() if _running(pid, args)}) and time.time() < deadline:
        time.sleep(0.5)
    assert not left, f"stop.sh left processes running: {left}"
    assert not list(cluster.state.glob("*.pid")) and not (cluster.state / "cluster.env").exists()
    # ...and only those: the session's own Ray (another cluster on this machine) still runs tasks.
    assert ray_session.get(ray_session.remote(lambda: os.getpid()).remote(), timeout=60) > 0


def _running(pid: int, args: str) -> bool:
    """Is ``pid`` still the same process (not a new one that reused the number)?"""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip() == args.strip()
    except OSError:
        return False
