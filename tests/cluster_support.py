"""Helpers for tests that drive real Ray / MLflow processes through their command lines (tests/jobs, tests/infra)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

from parabit.config import to_dict

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment for a `ray`/`mlflow` command, as in an activated .venv (jobs run its Python),
    without a RAY_ADDRESS that would point the command at another cluster."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    env.update(extra)
    return env


def write_config(config, path: Path) -> Path:
    """A training config as the YAML file a job is given (tuples become lists)."""
    path.write_text(yaml.safe_dump(json.loads(json.dumps(to_dict(config)))))
    return path


def stop_process_group(process: subprocess.Popen, grace: float = 30) -> None:
    """SIGTERM a server started with ``start_new_session=True`` and its children; SIGKILL after ``grace`` seconds."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_for_http(url: str, timeout: float, headers: dict | None = None) -> bool:
    """Poll ``url`` until it answers 2xx; False after ``timeout`` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=2)
            return True
        except OSError:
            time.sleep(1)
    return False


def session_ray_env(**extra: str) -> dict[str, str]:
    """The environment for a job (a subprocess) that joins this test session's local Ray instead of starting its
    own, as a job joins a cluster under ``ray job submit``."""
    import ray
    from ray._private.worker import get_dashboard_url

    return cli_env(RAY_ADDRESS=ray.get_runtime_context().gcs_address,
                   RAY_API_SERVER_ADDRESS=f"http://{get_dashboard_url()}", **extra)


def kill_when(command: list[str], env: dict, log: Path, ready, timeout: float = 400, cwd: Path | None = None) -> None:
    """Start ``command``, wait until ``ready()`` is true, then SIGKILL it (its whole process group): a crash at a
    chosen point. Fails if the command ends first or ``ready`` never comes."""
    import signal

    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        deadline = time.time() + timeout
        try:
            while not ready():
                assert process.poll() is None, f"{command} ended before it could be killed: {log.read_text()[-3000:]}"
                assert time.time() < deadline, f"{command}: not ready to be killed within {timeout} s"
                time.sleep(0.1)
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


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
