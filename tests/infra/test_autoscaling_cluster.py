"""Training on a cluster that starts with no worker nodes and grows: Ray's own local autoscaling cluster (the fake
multi-node provider behind ``ray.cluster_utils.AutoscalingCluster``), its head started here with the same kind of
autoscaling config (``AutoscalingCluster.start`` runs ``ray stop --force``, which would end every Ray on the machine).

The head has no CPUs and no worker nodes, as the heads of infra/aws/cluster.yaml and infra/k8s/raycluster.yaml; the
one worker node type carries ``fake_gpu``, standing in for the GPU those clusters' workers carry, from 0 up to
``MAX_NODES`` nodes. A training job that needs two ``fake_gpu`` workers makes the autoscaler add two nodes, trains on
them and registers its model; a sweep with more concurrent trials than the cluster can ever have nodes runs every
trial, the extra ones waiting for a node to be free. One cluster for the module; the last test stops it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT, data_root
from parabit.training import ScalingSettings

from ..cluster_support import cli_env, free_port, write_config
from ..conftest import pairs_config

MAX_NODES = 2
RESOURCE = "fake_gpu"
# Each node: one fake GPU, and two (logical) CPUs: a Train worker's share, a trial's driver (0.01), and a whole one
# for a Ray Data task (``from_arrow`` reads a table's metadata in a task of 1 CPU; with one CPU per node, trial
# drivers on every node left no node a whole CPU, and every trial waited for that task for ever).
NODE_RESOURCES = {"CPU": 2, RESOURCE: 1, "object_store_memory": 128 * 1024**2}
HEAD_START_ATTEMPTS = 3  # `ray start` gives its raylet 30 s to register: too little on a loaded 2-core machine


def autoscaling_config(gcs_address: str) -> dict:
    """The fake multi-node provider's cluster config (as AutoscalingCluster writes it from Ray's example.yaml, which
    the wheel does not ship): a head with no CPUs, 0 to MAX_NODES nodes of one worker type; the provider starts each
    node as a raylet on this machine joining ``gcs_address`` (this test's head, not Ray's default port)."""
    return {
        "cluster_name": "parabit-autoscaling-test", "max_workers": MAX_NODES,
        "provider": {"type": "fake_multinode", "use_node_id_as_ip": True, "disable_node_updaters": True,
                     "disable_launch_config_check": True, "gcs_address": gcs_address},
        "available_node_types": {
            "ray.head.default": {"resources": {"CPU": 0}, "node_config": {}, "max_workers": 0},
            "fake_gpu_node": {"resources": NODE_RESOURCES, "node_config": {}, "min_workers": 0,
                              "max_workers": MAX_NODES},
        },
        "head_node_type": "ray.head.default", "upscaling_speed": 1.0, "idle_timeout_minutes": 30,
        "auth": {}, "docker": {}, "initialization_commands": [], "setup_commands": [], "head_setup_commands": [],
        "worker_setup_commands": [], "head_start_ray_commands": [], "worker_start_ray_commands": [],
        "file_mounts": {}, "cluster_synced_files": [], "file_mounts_sync_continuously": False, "rsync_exclude": [],
        "rsync_filter": [],
    }


@dataclass
class AutoscalingHead:
    """A head started with ``ray start --head --block --autoscaling-config`` in its own process group; the nodes
    its autoscaler adds run in the monitor's process group and carry the head's temp dir on their command lines."""

    folder: Path
    temp_dir: Path
    env: dict
    gcs_address: str
    dashboard: str
    process: subprocess.Popen | None = None

    def start(self) -> None:
        ip = self.gcs_address.rpartition(":")[0]
        config = self.folder / "autoscaling.json"
        config.write_text(json.dumps(autoscaling_config(self.gcs_address)))
        port = self.gcs_address.rpartition(":")[2]
        command = ["ray", "start", "--head", "--block", f"--port={port}", f"--node-ip-address={ip}",
                   f"--autoscaling-config={config}", "--num-cpus=0", "--num-gpus=0", f"--temp-dir={self.temp_dir}",
                   "--include-dashboard=true", "--dashboard-host=127.0.0.1",
                   f"--dashboard-port={self.dashboard.rpartition(':')[2]}", f"--ray-client-server-port={free_port()}",
                   "--min-worker-port=0", "--max-worker-port=0", f"--object-store-memory={128 * 1024**2}",
                   "--disable-usage-stats"]
        for attempt in range(1, HEAD_START_ATTEMPTS + 1):
            log = self.folder / f"head-{attempt}.log"
            self.process = subprocess.Popen(command, env=self.env, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                                            start_new_session=True)
            deadline = time.time() + 180
            while "will now block forever" not in log.read_text() and self.process.poll() is None:
                assert time.time() < deadline, f"the head did not start in 180 s: {log.read_text()[-3000:]}"
                time.sleep(1)
            if self.process.poll() is None:
                return
            self.stop()  # what the failed start left behind, then again
        raise AssertionError(f"the head did not start in {HEAD_START_ATTEMPTS} attempts: {log.read_text()[-3000:]}")

    def nodes(self) -> list[dict]:
        """The live nodes, from the dashboard: ``{"id": ..., "resources": {...}}`` each."""
        with urllib.request.urlopen(f"{self.dashboard}/api/v0/nodes?detail=1", timeout=30) as answer:
            nodes = json.load(answer)["data"]["result"]["result"]
        return [{"id": n["node_id"], "resources": n["resources_total"]} for n in nodes if n["state"] == "ALIVE"]

    def stop(self) -> None:
        """SIGTERM the head's `ray start` (it stops its processes), then every process still carrying this
        cluster's temp dir (the autoscaled nodes' raylets, log monitors and workers), each by pid; SIGKILL what
        outlives that, until none is left."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        deadline, sig = time.time() + 60, signal.SIGTERM
        while (left := self.leftovers()) and time.time() < deadline:
            for pid in left:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            time.sleep(2)
            sig = signal.SIGKILL  # what a SIGTERM did not end, and anything started meanwhile
        assert not self.leftovers(), f"processes of the cluster still run: {self.leftovers()}"

    def leftovers(self) -> list[int]:
        """The processes whose command line names this cluster's temp dir (read whole: ``ps`` may cut lines)."""
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and str(self.temp_dir).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:  # ended while being read
                continue
        return found

    def run(self, *command: str, timeout: float) -> subprocess.CompletedProcess:
        """``command`` from the project folder as a job on the head runs: joining the cluster (RAY_ADDRESS)."""
        return subprocess.run([sys.executable, *command], cwd=PROJECT_ROOT, env=self.env, capture_output=True,
                              text=True, timeout=timeout)


@pytest.fixture(scope="module")
def autoscaling_head(tmp_path_factory):
    folder = tmp_path_factory.mktemp("autoscaling")
    temp_dir = Path(tempfile.mkdtemp(prefix="pbas-", dir="/tmp"))  # short: Unix socket paths stay under 107 bytes
    import ray._private.services

    ip = ray._private.services.get_node_ip_address()  # what the provider's raylets advertise
    gcs_address, dashboard = f"{ip}:{free_port()}", f"http://127.0.0.1:{free_port()}"
    from parabit.ray_runtime import LOCAL_RAY_ENV_DEFAULTS, torch_env

    # The environment of the head and so of every node and Ray worker (the provider starts nodes from the head's
    # monitor): where the jobs' data, outputs and MLflow store are, as a cluster's runtime environment would say.
    # RAY_ADDRESS: Ray's state API (Ray Train's placement-group cleaner) must find this cluster among the Rays on
    # the machine. Token auth off, explicitly, for every process (a stray ~/.ray/auth_token would switch it on).
    env = cli_env(RAY_ADDRESS=gcs_address, RAY_API_SERVER_ADDRESS=dashboard, RAY_AUTH_MODE="disabled",
                  RAY_FAKE_CLUSTER="1", AUTOSCALER_UPDATE_INTERVAL_S="1", RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0",
                  RAY_TRAIN_ENABLE_PRINT_PATCH="0", RAY_DATA_DISABLE_PROGRESS_BARS="1",
                  PARABIT_DATA=str(data_root()), PARABIT_OUTPUT=str(folder / "outputs"),
                  MLFLOW_TRACKING_URI=f"sqlite:///{folder / 'mlflow.db'}", **LOCAL_RAY_ENV_DEFAULTS, **torch_env())
    head = AutoscalingHead(folder, temp_dir, env, gcs_address, dashboard)
    try:
        head.start()
        yield head
    finally:
        head.stop()
        logs = folder / "ray-logs"
        for log in temp_dir.glob("session_*/logs/monitor.*"):  # the autoscaler's decisions: what a failure needs
            logs.mkdir(exist_ok=True)
            shutil.copy(log, logs / log.name)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _job_config(name: str, pairs, folder: Path, workers: int, **changes):
    """The tests' small AVG + J_bi run, each worker on a node of the fake GPU, one epoch, STS 2016 only."""
    config = pairs_config(name, pairs, folder, optim__epochs=1, **changes)
    config.scaling = ScalingSettings(num_workers=workers, cpus_per_worker=0.4, resources_per_worker={RESOURCE: 1},
                                     placement_timeout_s=600)
    config.tracking.experiment = "autoscaling"
    return config


def _fake_gpu_nodes(head: AutoscalingHead) -> set[str]:
    return {node["id"] for node in head.nodes() if node["resources"].get(RESOURCE)}


# Over 120 s (3-6 min on 2 cores under load): the autoscaler starts two raylets one after another on a busy machine,
# then a two-worker Ray Train run (~25 s of start-up) trains, is evaluated and registered.
@pytest.mark.slow
def test_a_job_needing_two_nodes_the_cluster_lacks_makes_the_autoscaler_add_them_and_trains(
        autoscaling_head, tatoeba_slice):
    head = autoscaling_head
    assert not _fake_gpu_nodes(head), "the cluster must start without worker nodes"
    config = _job_config("autoscaled-two-workers", tatoeba_slice, head.folder, workers=2)
    config.tracking.register_as = "parabit-autoscaled"
    path = write_config(config, head.folder / "job.yaml")
    job = head.run("jobs/train.py", "--config", str(path), timeout=1500)
    assert job.returncode == 0, job.stdout[-5000:] + job.stderr[-5000:]
    assert "model: models:/parabit-autoscaled/1" in job.stdout
    # Not refused for the CPUs and fake GPUs the cluster did not have yet: its autoscaler can add nodes.
    assert f"[{config.name}] scaling asks for 2 workers x 0.4 CPU = 0.8 of the cluster's 0 CPUs" in job.stdout
    assert "the cluster's autoscaler can add nodes: waiting up to scaling.placement_timeout_s=600 s" in job.stdout

    added = _fake_gpu_nodes(head)
    assert len(added) == 2, head.nodes()
    client = MlflowClient(head.env["MLFLOW_TRACKING_URI"], registry_uri=head.env["MLFLOW_TRACKING_URI"])
    (run,) = client.search_runs([client.get_experiment_by_name("autoscaling").experiment_id],
                                f"tags.`parabit.run_name` = '{config.name}'")
    assert run.info.status == "FINISHED" and "sts2016/mean/pearson" in run.data.metrics
    assert set(run.data.tags["parabit.worker_nodes"].split(",")) == added  # one worker on each added node
    (version,) = client.search_model_versions("name = 'parabit-autoscaled'")
    assert version.run_id == run.info.run_id


# Over 120 s (5-10 min on 2 cores under load): three trials, each a one-worker Ray Train run with its start-up and
# final evaluation, at most two at a time (two nodes), on a machine shared with other work.
@pytest.mark.slow
def test_a_sweep_with_more_concurrent_trials_than_nodes_queues_the_extra_trials_and_finishes_them_all(
        autoscaling_head, tatoeba_slice):
    head = autoscaling_head
    base = _job_config("autoscaled-sweep-base", tatoeba_slice, head.folder, workers=1)
    base.tracking.register_as = "parabit-autoscaled-sweep"
    base_path = write_config(base, head.folder / "sweep-base.yaml")
    trials = MAX_NODES + 1
    space = {"name": "autoscaled-sweep", "base_config": str(base_path),
             "parameters": {"objective.margin": [0.5 * (i + 1) for i in range(trials)]},
             "search": {"algorithm": "grid", "max_concurrent_trials": trials}, "scheduler": {"name": "fifo"}}
    space_path = head.folder / "space.yaml"
    space_path.write_text(yaml.safe_dump(space))
    job = head.run("tuning/sweep.py", "--space", str(space_path), timeout=2400)
    assert job.returncode == 0, job.stdout[-5000:] + job.stderr[-5000:]
    assert f"{trials} trials (0 errors)" in job.stdout, job.stdout[-3000:]

    client = MlflowClient(head.env["MLFLOW_TRACKING_URI"], registry_uri=head.env["MLFLOW_TRACKING_URI"])
    runs = client.search_runs([client.get_experiment_by_name("autoscaling").experiment_id],
                              "tags.`parabit.sweep` = 'autoscaled-sweep' and tags.`parabit.kind` = 'trial'")
    assert len(runs) == trials and all(r.info.status == "FINISHED" for r in runs)
    # Never more nodes than the cluster may have: a trial ran on a node another trial had finished with, and
    # waited for it as in a queue (its placement watch's line), not bounded by placement_timeout_s.
    used = [r.data.tags["parabit.worker_nodes"] for r in runs]
    assert len(set(used)) <= MAX_NODES < len(used)
    assert set(used) <= _fake_gpu_nodes(head)
    assert "waiting for the cluster to free 1 worker(s) of {CPU: 0.4, fake_gpu: 1}" in job.stdout + job.stderr
