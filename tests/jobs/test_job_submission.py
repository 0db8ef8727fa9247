"""`ray job submit` of jobs/train.py against a real local head node started with `ray start --head`."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT, data_root

from ..cluster_support import BIN, cli_env, free_port, submit_job, wait_for_http, write_config


HEAD_START_ATTEMPTS = 3
STARTED = "Ray runtime started."  # what `ray start` prints once its raylet has registered


def _start_head(log: Path, env: dict) -> tuple[subprocess.Popen, str, str]:
    """``ray start --head --block`` on fresh ports and its own temp dir: (process, dashboard address, temp dir)."""
    gcs_port, dashboard_port = free_port(), free_port()
    # Its own temp dir: with Ray's default (/tmp/ray) the head writes /tmp/ray/ray_current_cluster, which outlives
    # it, and every later address-less ray.init() on the machine (the ray_session fixture's) tries to join it.
    temp_dir = tempfile.mkdtemp(prefix="pbhead-", dir="/tmp")  # short: Unix socket paths must stay < 107 bytes
    head = subprocess.Popen(
        [str(BIN / "ray"), "start", "--head", "--block", f"--port={gcs_port}", "--num-cpus=2", f"--temp-dir={temp_dir}",
         "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard_port}",
         # The agents' ports too: Ray's defaults (52365 for the job agent) are taken by any other Ray on the machine
         # (a training run beside the suite), and the agent then never registers ("No available agent").
         f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
         f"--runtime-env-agent-port={free_port()}", f"--metrics-export-port={free_port()}",
         "--disable-usage-stats"],
        # RAY_ADDRESS names this head to its own processes (the job agent, the job's driver, Ray Train's placement
        # group cleaner): with the test session's Ray also running they otherwise fail on "multiple active Ray
        # instances", and submission answers "No available agent" (as in infra/local/start.sh).
        # Unbuffered: `ray start --block` never exits on success, and its "Ray runtime started." must reach the log.
        env={**env, "RAY_ADDRESS": f"127.0.0.1:{gcs_port}", "PYTHONUNBUFFERED": "1"},
        stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    return head, f"http://127.0.0.1:{dashboard_port}", temp_dir


def _stop_head(head: subprocess.Popen, temp_dir: str, logs: Path) -> None:
    """Stop the head and everything it started; keep its logs (job agent, dashboard, raylet) under ``logs``."""
    try:
        os.killpg(head.pid, signal.SIGTERM)  # also when `ray start` itself has exited: what it started may not have
    except ProcessLookupError:
        pass
    head.wait(timeout=60)
    if (Path(temp_dir) / "session_latest").exists():
        shutil.copytree(Path(temp_dir) / "session_latest" / "logs", logs, ignore_dangling_symlinks=True,
                        dirs_exist_ok=True)
    shutil.rmtree(temp_dir, ignore_errors=True)


def _registered(head: subprocess.Popen, log: Path, timeout: float = 180) -> bool:
    """Whether the head's own raylet registered: its dashboard answers first, and on a busy machine the raylet can
    still give up afterwards (its wait for the dashboard agent's port file expires) and `ray start` then exits."""
    deadline = time.time() + timeout
    while head.poll() is None and time.time() < deadline:
        if STARTED in log.read_text(errors="replace"):
            return True
        time.sleep(0.5)
    return False


@pytest.fixture
def head_node(tmp_path):
    """A Ray head on this machine (its own ports), stopped with everything it started at the end; started again
    (up to HEAD_START_ATTEMPTS times, as infra/local/start.sh does) when `ray start` gives up during start-up.

    The test session's own local Ray is shut down first: beside it the head's job agent did not register within
    Ray's 10 s ("No available agent to submit job"). Later tests start a fresh one through ``init_ray``.
    """
    import ray

    if ray.is_initialized():
        ray.shutdown()
    # Explicitly without token auth (this head is on 127.0.0.1 for one test): left unset, the mode follows whatever
    # an earlier ray.init() of this session or ~/.ray/auth_token decided, and the dashboard then answers 401.
    # No drain on SIGTERM: it is for Ray Serve, and it made the teardown wait 30 s for the killed GCS.
    env = cli_env(RAY_AUTH_MODE="disabled", RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0")
    for attempt in range(1, HEAD_START_ATTEMPTS + 1):
        log = tmp_path / f"head-{attempt}.log"
        head, address, temp_dir = _start_head(log, env)
        if _registered(head, log) and wait_for_http(f"{address}/api/version", timeout=120):
            break
        _stop_head(head, temp_dir, tmp_path / f"head-logs-{attempt}")
    else:
        pytest.fail(f"Ray head did not come up in {HEAD_START_ATTEMPTS} attempts: {log.read_text()[-2000:]}")
    yield address, env
    # The head's logs stay with the test's tmp_path, for a failure to be diagnosed.
    _stop_head(head, temp_dir, tmp_path / "head-logs")


@pytest.mark.slow
def test_train_job_submitted_to_a_head_node(head_node, tmp_path, small_config):
    address, env = head_node
    config = small_config()
    config.name = "submitted"
    config.storage_path = str(tmp_path / "ray_results")
    config.tracking.register_as = "parabit-encoder-submitted"
    config_path = write_config(config, tmp_path / "train.yaml")
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    runtime_env = {"env_vars": {"MLFLOW_TRACKING_URI": store, "PARABIT_DATA": str(data_root()),
                                "PARABIT_OUTPUT": str(tmp_path / "outputs")}}
    submitted = submit_job(
        [str(BIN / "ray"), "job", "submit", "--address", address, "--working-dir", str(PROJECT_ROOT),
         "--runtime-env-json", json.dumps(runtime_env), "--",
         "python", "jobs/train.py", "--config", str(config_path)],
        env=env,
    )
    assert submitted.returncode == 0, submitted.stdout[-3000:] + submitted.stderr[-3000:]
    assert "succeeded" in submitted.stdout
    assert "model: models:/parabit-encoder-submitted/1" in submitted.stdout

    client = MlflowClient(store, registry_uri=store)  # not the registry an in-process test set globally
    versions = client.search_model_versions("name='parabit-encoder-submitted'")
    assert len(versions) == 1
    run = client.get_run(versions[0].run_id)
    assert run.data.tags["parabit.run_name"] == "submitted"
    assert "sts2016/mean/pearson" in run.data.metrics
