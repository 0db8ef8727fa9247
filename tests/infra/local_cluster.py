"""Driving a cluster of infra/local/ (start.sh, stop.sh, submit.sh) from a test: its ports, its state, its jobs
(tests/infra/test_local_cluster.py, tests/infra/test_tracking_server.py)."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT, data_root

from ..cluster_support import cli_env

LOCAL = PROJECT_ROOT / "infra" / "local"


def free_port_block(nodes: int) -> int:
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


def listening(pids: set[int]) -> set[str]:
    """``address:port`` of every TCP socket in LISTEN state that one of ``pids`` holds (/proc/net/tcp, tcp6)."""
    inodes = set()
    for pid in pids:
        try:
            targets = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:  # the process (a Ray worker) ended meanwhile, or a file descriptor closed
            continue
        inodes.update(target[8:-1] for target in targets if target.startswith("socket:["))
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                address, port = fields[1].split(":")
                # The kernel prints the address as 32-bit words in host (little-endian) byte order.
                packed = b"".join(bytes.fromhex(address[i:i + 8])[::-1] for i in range(0, len(address), 8))
                found.add(f"{ipaddress.ip_address(packed)}:{int(port, 16)}")
    return found


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
        Ray temp dir on the command line (Ray workers; `-ww`: whole command lines, however long)."""
        groups = {int(p.read_text()) for p in self.state.glob("*.pid")}
        listing = subprocess.run(["ps", "-ww", "-eo", "pid=,pgid=,args="], capture_output=True, text=True).stdout
        found = {}
        for line in listing.splitlines():
            pid, pgid, args = line.split(None, 2)
            if int(pgid) in groups or str(self.ray_temp) in args:
                found[int(pid)] = args
        return found


    def submit(self, *command, timeout: float) -> subprocess.CompletedProcess:
        """``infra/submit.sh -- COMMAND`` from the project folder, checked to succeed and to leave none of its own
        temporary files (the filled-in runtime env, the client's log) behind."""
        with tempfile.TemporaryDirectory(prefix="submit-tmp-") as tmp:
            submitted = subprocess.run([str(PROJECT_ROOT / "infra" / "submit.sh"), "--", *map(str, command)],
                                       env={**self.env, "TMPDIR": tmp}, capture_output=True, text=True,
                                       timeout=timeout, cwd=PROJECT_ROOT)
            assert submitted.returncode == 0, submitted.stdout[-5000:] + submitted.stderr[-3000:]
            assert "succeeded" in submitted.stdout + submitted.stderr
            left = sorted(p.name for p in Path(tmp).glob("parabit-*"))
            assert not left, f"infra/submit.sh left {left} in TMPDIR"
        return submitted

    def mlflow_client(self) -> MlflowClient:
        return MlflowClient(self.mlflow, registry_uri=self.mlflow)

    def submit_no_wait(self, submission_id: str, *command) -> None:
        submitted = self.run(PROJECT_ROOT / "infra" / "submit.sh", "--no-wait", "--submission-id", submission_id, "--",
                             *command, timeout=300)
        assert submitted.returncode == 0, submitted.stdout[-3000:] + submitted.stderr[-3000:]

    def submit_with_the_ray_cli(self, submission_id: str, *command) -> None:
        """``ray job submit --no-wait`` as the README's cluster line shows it, without infra/submit.sh: after
        ``source cluster.env``, the checkout as ``--working-dir`` (parabit itself from the nodes' environment) and the
        stores in ``--runtime-env-json``."""
        stores = {"MLFLOW_TRACKING_URI": self.mlflow, "PARABIT_DATA": self.env["PARABIT_DATA"],
                  "PARABIT_OUTPUT": self.env["PARABIT_OUTPUT"]}
        submit = shlex.join(["ray", "job", "submit", "--no-wait", "--submission-id", submission_id,
                             "--working-dir", ".", "--runtime-env-json", json.dumps({"env_vars": stores}),
                             "--", *map(str, command)])
        submitted = self.run("bash", "-c", f"source {shlex.quote(str(self.state / 'cluster.env'))} && {submit}",
                             timeout=300)
        assert submitted.returncode == 0, submitted.stdout[-3000:] + submitted.stderr[-3000:]

    def submit_then_kill_the_client(self, submission_id: str, *command) -> None:
        """``infra/submit.sh -- COMMAND``, its client killed as soon as the job runs: the job is the cluster's."""
        client_process = subprocess.Popen(
            [str(PROJECT_ROOT / "infra" / "submit.sh"), "--submission-id", submission_id, "--", *command],
            env=self.env, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        try:
            deadline = time.time() + 300
            while not submitted(self, submission_id):
                assert client_process.poll() is None and time.time() < deadline, "the job was not submitted"
                time.sleep(0.5)
        finally:
            os.killpg(client_process.pid, signal.SIGKILL)
            client_process.wait()

    def job(self, submission_id: str) -> dict:
        return self.ray_api(f"/api/jobs/{submission_id}")

    def job_logs(self, submission_id: str) -> str:
        return self.ray_api(f"/api/jobs/{submission_id}/logs")["logs"]

    def wait_for_log(self, submission_id: str, text: str, timeout: float) -> None:
        deadline = time.time() + timeout
        while text not in self.job_logs(submission_id):
            assert self.job(submission_id)["status"] in ("PENDING", "RUNNING"), self.job_logs(submission_id)[-5000:]
            assert time.time() < deadline, f"no {text!r} in the logs of {submission_id} after {timeout} s"
            time.sleep(0.5)

    def wait_for_end(self, submission_id: str, timeout: float) -> str:
        deadline = time.time() + timeout
        while (status := self.job(submission_id)["status"]) in ("PENDING", "RUNNING"):
            assert time.time() < deadline, f"{submission_id} still {status} after {timeout} s"
            time.sleep(1)
        return status

    def stop_part(self, name: str, *flags: str) -> None:
        """``stop.sh --only NAME`` (``--kill``: SIGKILL, as a lost host)."""
        stopped = self.run(LOCAL / "stop.sh", "--only", name, *flags, timeout=120)
        assert stopped.returncode == 0, stopped.stderr[-3000:]

    def raylet_port(self, node: str) -> int:
        """The node manager port of the live raylet labelled ``parabit-node=node``."""
        (port,) = [n["raylet"]["nodeManagerPort"] for n in self.ray_api("/nodes?view=summary")["data"]["summary"]
                   if n["raylet"]["state"] == "ALIVE" and n["raylet"].get("labels", {}).get("parabit-node") == node]
        return port

    def start_part(self, name: str) -> None:
        """``start.sh --only NAME``: the node or MLflow server back in the running cluster."""
        started = self.run(LOCAL / "start.sh", "--only", name, timeout=600)
        assert started.returncode == 0, started.stderr[-3000:]


def submitted(cluster: Cluster, submission_id: str) -> bool:
    try:
        return cluster.job(submission_id)["status"] == "RUNNING"
    except urllib.error.HTTPError:  # not known yet
        return False


def still_running(pid: int, args: str) -> bool:
    """Is ``pid`` still the same process (not a new one that reused the number)?"""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip() == args.strip()
    except OSError:
        return False


@contextlib.contextmanager
def running_cluster(state: Path, outputs: Path, workers: int, *start_flags: str, **settings: str) -> Iterator[Cluster]:
    """A cluster of ``workers`` worker nodes started by ``start.sh START_FLAGS`` with its state in ``state`` and jobs'
    outputs in ``outputs``; ``settings`` are more environment variables for every command. Stopped at the end (a
    no-op if a test stopped it already), the raylets' and GCS's own logs kept beside the nodes' in ``state/logs``."""
    base = free_port_block(workers + 1)
    # Short (Unix socket paths), and removed at the end: Ray's session logs stay there after stop.sh.
    ray_temp = Path(tempfile.mkdtemp(prefix="pbray-", dir="/tmp"))
    # The head declares a node dead after 3 failed health checks 1 s apart, not Ray's 5 checks 3 s apart: tests kill
    # a node and then wait for that (a killed raylet fails each check at once, so nothing else changes).
    env = cli_env(PARABIT_CLUSTER_DIR=str(state), PARABIT_PORT_BASE=str(base), PARABIT_NUM_WORKERS=str(workers),
                  PARABIT_RAY_TEMP_DIR=str(ray_temp), PARABIT_DATA=str(data_root()),
                  PARABIT_OUTPUT=str(outputs), RAY_DATA_DISABLE_PROGRESS_BARS="1",
                  RAY_health_check_period_ms="1000", RAY_health_check_failure_threshold="3", **settings)
    env.pop("MLFLOW_TRACKING_URI")  # the session's SQLite store: submit.sh must take the cluster's server instead
    cluster = Cluster(state, ray_temp, env, f"http://127.0.0.1:{base + 1}", f"http://127.0.0.1:{base + 3}")
    try:
        started = cluster.run(LOCAL / "start.sh", *start_flags, timeout=600)  # a node may start up to 3 times
        assert started.returncode == 0, started.stderr[-4000:]
        yield cluster
    finally:
        cluster.run(LOCAL / "stop.sh", "--quiet", timeout=180)
        for log in ray_temp.glob("node-*/session_*/logs/*.out"):
            kept = state / "logs" / log.parts[-4] / log.name
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(log, kept)
        shutil.rmtree(ray_temp, ignore_errors=True)
