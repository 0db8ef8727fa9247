"""Several clusters of infra/local on one machine: each remembers its settings in its state dir (cluster.conf, written
by start.sh), so a script given only the state dir (or a shell holding another cluster's settings) reaches that
cluster; `stop.sh` of one stops its own processes, found by the ids it recorded, and leaves the other running."""

from __future__ import annotations

import os
import subprocess
import urllib.request
from pathlib import Path

import pytest

from parabit.paths import PROJECT_ROOT

from .local_cluster import LOCAL, listening, running_cluster


def _lib_settings(tmp_path: Path, **env: str) -> dict[str, str]:
    """What infra/local/lib.sh derives under ``env`` (and none of this session's PARABIT_* variables)."""
    script = tmp_path / "settings.sh"
    names = ("STATE_DIR", "MLFLOW_URL", "POSTGRES_PORT", "RAY_TEMP_DIR", "DASHBOARD_URL")
    script.write_text(f"source {LOCAL / 'lib.sh'}\n" + "".join(f'echo "{name}=${name}"\n' for name in names))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PARABIT_")}
    done = subprocess.run(["bash", str(script)], env={**clean, **env}, capture_output=True, text=True, check=True,
                          cwd=PROJECT_ROOT)
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def test_the_state_dir_follows_parabit_output_and_the_recorded_settings_are_the_defaults(tmp_path):
    """No state dir given: `local-cluster/` in $PARABIT_OUTPUT. A state dir whose cluster.conf records a port base:
    its ports and Ray temp dir, unless another port base is given, which then decides them all."""
    assert _lib_settings(tmp_path, PARABIT_OUTPUT=str(tmp_path / "out"))["STATE_DIR"] == str(
        tmp_path / "out" / "local-cluster")
    state = tmp_path / "cluster"
    state.mkdir()
    (state / "cluster.conf").write_text("PORT_BASE=27300\nMLFLOW_PORT=27399\nPOSTGRES_PORT=27304\n"
                                        "RAY_TEMP_DIR=/tmp/parabit-ray-mine\n")
    assert _lib_settings(tmp_path, PARABIT_CLUSTER_DIR=str(state)) == {
        "STATE_DIR": str(state), "MLFLOW_URL": "http://127.0.0.1:27399", "POSTGRES_PORT": "27304",
        "RAY_TEMP_DIR": "/tmp/parabit-ray-mine", "DASHBOARD_URL": "http://127.0.0.1:27301"}
    other = _lib_settings(tmp_path, PARABIT_CLUSTER_DIR=str(state), PARABIT_PORT_BASE="27500")
    assert (other["MLFLOW_URL"], other["POSTGRES_PORT"], other["RAY_TEMP_DIR"]) == (
        "http://127.0.0.1:27503", "27504", "/tmp/parabit-ray-27500")


def _started(pids) -> dict[int, str]:
    """Each live pid of ``pids`` with its start time (/proc/PID/stat's 22nd field): the same process later has both."""
    found = {}
    for pid in pids:
        try:
            found[pid] = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        except OSError:
            pass
    return found


def _healthy(cluster) -> bool:
    alive = [n for n in cluster.ray_api("/nodes?view=summary")["data"]["summary"] if n["raylet"]["state"] == "ALIVE"]
    with urllib.request.urlopen(f"{cluster.mlflow}/health", timeout=10) as answer:
        return len(alive) == 1 and answer.status == 200


@pytest.mark.slow
def test_stop_of_one_cluster_leaves_another_running(tmp_path):
    """Clusters A and B with different port bases. `stop.sh` for A's state dir, run in a shell holding B's settings
    (its port base and Ray temp dir, as `source B/cluster.env` once did): every process of A ends, every process of
    B runs on and B answers. A started again with no port base given comes up at its recorded one."""
    with running_cluster(tmp_path / "a", tmp_path / "out-a", 0) as a, \
            running_cluster(tmp_path / "b", tmp_path / "out-b", 0) as b:
        base_a = a.env["PARABIT_PORT_BASE"]
        assert f"PORT_BASE={base_a}\n" in (a.state / "cluster.conf").read_text()
        assert f"export PARABIT_CLUSTER_DIR={a.state}\n" in (a.state / "cluster.env").read_text()
        of_a, of_b = _started(a.processes()), _started(b.processes())
        assert of_a and of_b and not set(of_a) & set(of_b)
        assert _healthy(a) and _healthy(b)
        for cluster in (a, b):  # the head's metrics servers at the cluster's own ports, not Ray's fixed ones
            base = int(cluster.env["PARABIT_PORT_BASE"])
            ports = {int(address.rsplit(":", 1)[1]) for address in listening(set(cluster.processes()))}
            assert {base + 5, base + 6} <= ports and not {44217, 44227} & ports, sorted(ports)

        stopped = subprocess.run([str(LOCAL / "stop.sh")], env={**b.env, "PARABIT_CLUSTER_DIR": str(a.state)},
                                 capture_output=True, text=True, timeout=300, cwd=PROJECT_ROOT)
        assert stopped.returncode == 0, stopped.stderr[-3000:]
        assert not set(_started(of_a).items()) & set(of_a.items())  # none of A's processes is left
        assert _started(of_b) == of_b, stopped.stderr  # every one of B's runs on
        assert _healthy(b)

        # A again, from a shell that names only its state dir: its recorded ports and temp dir.
        env = {k: v for k, v in a.env.items() if k not in ("PARABIT_PORT_BASE", "PARABIT_RAY_TEMP_DIR")}
        started = subprocess.run([str(LOCAL / "start.sh")], env=env, capture_output=True, text=True, timeout=600,
                                 cwd=PROJECT_ROOT)
        assert started.returncode == 0, started.stderr[-4000:]
        assert f"export MLFLOW_TRACKING_URI={a.mlflow}\n" in (a.state / "cluster.env").read_text()
        assert _healthy(a) and _healthy(b)
        assert f"RAY_TEMP_DIR={a.ray_temp}\n" in (a.state / "cluster.conf").read_text()
