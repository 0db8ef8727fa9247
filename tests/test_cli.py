"""The evaluation command end to end, as a user runs it: a subprocess, the real data, a real MLflow store."""

import os
import re
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from parabit.paths import PROJECT_ROOT


@pytest.mark.slow
def test_evaluate_job_prints_the_table_and_logs_a_run(tmp_path):
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    result = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "jobs" / "evaluate.py"), "--experiment", "cli-test"],
        env={**os.environ, "MLFLOW_TRACKING_URI": store}, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"^sick\s+test\s+0\.6\d", result.stdout, re.MULTILINE)
    run_id = re.search(r"MLflow run id: ([0-9a-f]{32})", result.stdout).group(1)
    client = MlflowClient(store)
    run = client.get_run(run_id)
    assert run.data.params["encoder"] == "glove-mean"
    assert 0.40 < run.data.metrics["sts2012/mean/pearson"] < 0.46
    assert {a.path for a in client.list_artifacts(run_id, "evaluation")} == {
        "evaluation/table.txt", "evaluation/scores.csv", "evaluation/summary.png"}


def test_bad_config_is_a_clear_error(tmp_path):
    bad = tmp_path / "eval.yaml"
    bad.write_text("sts_year: [2012]\n")
    result = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "jobs" / "evaluate.py"), "--config", str(bad), "--no-mlflow"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "unknown key 'sts_year'" in result.stderr and result.stderr.count("\n") == 1
