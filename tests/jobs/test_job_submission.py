"""`ray job submit` of jobs/train.py against a real local head node started with `ray start --head`."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT, data_root

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def head_node(tmp_path):
    """A Ray head on this machine (its own ports), stopped with everything it started at the end."""
    gcs_port, dashboard_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"  # as in an activated .venv: jobs run this Python
    head = subprocess.Popen(
        [str(BIN / "ray"), "start", "--head", "--block", f"--port={gcs_port}", "--num-cpus=2",
         "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard_port}",
         "--disable-usage-stats"],
        env=env, stdout=open(tmp_path / "head.log", "w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    address = f"http://127.0.0.1:{dashboard_port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{address}/api/version", timeout=2)
            break
        except OSError:
            time.sleep(1)
    else:
        head.kill()
        pytest.fail(f"Ray head did not come up: {(tmp_path / 'head.log').read_text()[-2000:]}")
    yield address, env
    os.killpg(head.pid, signal.SIGTERM)
    head.wait(timeout=60)


@pytest.mark.slow
def test_train_job_submitted_to_a_head_node(head_node, tmp_path, small_config):
    address, env = head_node
    config = small_config()
    config.name = "submitted"
    config.storage_path = str(tmp_path / "ray_results")
    config.tracking.register_as = "parabit-encoder-submitted"
    from parabit.config import to_dict

    config_path = tmp_path / "train.yaml"
    config_path.write_text(yaml.safe_dump(json.loads(json.dumps(to_dict(config)))))
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    runtime_env = {"env_vars": {"MLFLOW_TRACKING_URI": store, "PARABIT_DATA": str(data_root()),
                                "PARABIT_OUTPUT": str(tmp_path / "outputs")}}
    submitted = subprocess.run(
        [str(BIN / "ray"), "job", "submit", "--address", address, "--working-dir", str(PROJECT_ROOT),
         "--runtime-env-json", json.dumps(runtime_env), "--",
         "python", "jobs/train.py", "--config", str(config_path)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert submitted.returncode == 0, submitted.stdout[-3000:] + submitted.stderr[-3000:]
    assert "succeeded" in submitted.stdout
    assert "model: models:/parabit-encoder-submitted/1" in submitted.stdout

    client = MlflowClient(store)
    versions = client.search_model_versions("name='parabit-encoder-submitted'")
    assert len(versions) == 1
    run = client.get_run(versions[0].run_id)
    assert run.data.tags["parabit.run_name"] == "submitted"
    assert "sts2016/mean/pearson" in run.data.metrics
