"""infra/local: a head + 2 worker nodes + an MLflow server on this machine, a 2-node training job submitted with
infra/submit.sh, and stop.sh stopping exactly what start.sh started."""

from __future__ import annotations

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
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT, data_root
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


@pytest.fixture
def local_cluster(tmp_path):
    base = _free_port_block(NUM_WORKERS + 1)
    # Short (Unix socket paths), and removed at the end: Ray's session logs stay there after stop.sh.
    ray_temp = Path(tempfile.mkdtemp(prefix="pbray-", dir="/tmp"))
    state = tmp_path / "cluster"
    env = cli_env(PARABIT_CLUSTER_DIR=str(state), PARABIT_PORT_BASE=str(base), PARABIT_NUM_WORKERS=str(NUM_WORKERS),
                  PARABIT_RAY_TEMP_DIR=str(ray_temp), PARABIT_DATA=str(data_root()),
                  PARABIT_OUTPUT=str(tmp_path / "outputs"), RAY_DATA_DISABLE_PROGRESS_BARS="1")
    env.pop("MLFLOW_TRACKING_URI")  # the session's SQLite store: submit.sh must take the cluster's server instead
    cluster = Cluster(state, ray_temp, env, f"http://127.0.0.1:{base + 1}", f"http://127.0.0.1:{base + 3}")
    try:
        started = cluster.run(LOCAL / "start.sh", timeout=240)
        assert started.returncode == 0, started.stderr[-4000:]
        yield cluster
    finally:
        cluster.run(LOCAL / "stop.sh", "--quiet", timeout=180)  # a no-op if the test stopped it already
        shutil.rmtree(ray_temp, ignore_errors=True)


@pytest.mark.slow
def test_two_node_training_job_then_stop_leaves_nothing_behind(ray_session, local_cluster, small_config, tmp_path):
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
    submitted = cluster.run(PROJECT_ROOT / "infra" / "submit.sh", "--", "python", "jobs/train.py",
                            "--config", config_path, timeout=420)
    assert submitted.returncode == 0, submitted.stdout[-4000:] + submitted.stderr[-3000:]
    assert "succeeded" in submitted.stdout + submitted.stderr
    assert "model: models:/parabit-encoder-local-cluster/1" in submitted.stdout

    # Everything went to the cluster's MLflow server: run, tags, metrics, the registered model and its files.
    client = MlflowClient(cluster.mlflow, registry_uri=cluster.mlflow)
    versions = client.search_model_versions("name='parabit-encoder-local-cluster'")
    assert [v.version for v in versions] == ["1"]
    run = client.get_run(versions[0].run_id)
    worker_nodes = run.data.tags["parabit.worker_nodes"].split(",")
    assert len(worker_nodes) == 2 and set(worker_nodes) == workers
    assert run.data.metrics["distinct_nodes"] == 2
    assert any((cluster.state / "mlartifacts").rglob("MLmodel")), "model files did not reach the server's store"

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
