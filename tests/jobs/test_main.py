"""The main job end to end, as a user runs it: ``python jobs/main.py`` on the embedded defaults."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import mlflow
import pytest

from parabit.baselines import build_baseline
from parabit.evaluation import EvaluationSuite
from parabit.evaluation.config import EvaluationConfig
from parabit.export.pyfunc import load_encoder
from parabit.paths import project_root

STS_YEARS = (2012, 2013, 2014, 2015, 2016)
MAX_LINES = 80


# Over 120 s (~2.5 min on 2 cores): the README's main job itself, end to end: its own Ray, the Apertium pipeline on
# shipped data, training, evaluation on every STS year and SICK, registration.
@pytest.mark.slow
def test_the_main_job_prints_a_short_report_and_registers_a_model_above_the_glove_mean(tmp_path):
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "PARABIT_OUTPUT": str(tmp_path / "outputs"), "MLFLOW_TRACKING_URI": store}
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run([sys.executable, "jobs/main.py"], cwd=project_root(), env=env, capture_output=True,
                          text=True, timeout=900)
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed[-4000:]

    lines = printed.splitlines()
    assert len(lines) < MAX_LINES, printed
    assert "stage" in done.stdout and "score" in done.stdout  # the stage table
    assert re.search(r"^sts2016 avg +mean", done.stdout, re.M)  # the evaluation table
    assert "(RayTrainWorker" in printed and "epoch 3/3" in printed  # per-epoch progress
    assert not [line for line in lines if "logging_progress.py" in line or "streaming_executor.py" in line]
    model_uri = re.search(r"^model: (models:/parabit-encoder/\d+)$", done.stdout, re.M).group(1)

    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(store)
    try:
        encode = load_encoder(model_uri)
    finally:
        mlflow.set_tracking_uri(previous)
    suite = EvaluationSuite.standard(EvaluationConfig(sts_years=STS_YEARS, sick=True, msrp=False))
    trained, glove_mean = suite(encode), suite(build_baseline("glove-mean").encode)
    for year in STS_YEARS:
        assert trained.value(f"sts{year}", "mean", "pearson") > glove_mean.value(f"sts{year}", "mean", "pearson"), year
    assert trained.value("sick", "test", "pearson") > glove_mean.value("sick", "test", "pearson")
