"""`parabit reproduce --quick --repeats 1` end to end: every seed paper's section with its findings, tables and cells,
each cell's number read back from its MLflow run, and a re-run that trains nothing again."""

from __future__ import annotations

import re
import subprocess

import pytest
from mlflow.tracking import MlflowClient

from ..cluster_support import BIN, session_ray_env

PAPERS = ("Bao et al. 2018", "Elgohary & Carpuat 2017", "Wieting, Mallinson & Gimpel 2017", "Chen et al. 2019")
CELL_ROW = re.compile(r"^\| (repro-quick-\S+) \| (\d+) \| ([0-9a-f]{32}) \| ([^|]+?) \| ([-0-9.]+) \|", re.M)
CELLS = re.compile(r"^Cells: (\d+) of (\d+) finished \((\d+) found finished in MLflow, not retrained\)\.$", re.M)


def reproduce(env: dict) -> str:
    done = subprocess.run([str(BIN / "parabit"), "reproduce", "--quick", "--repeats", "1"], env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_a_quick_reproduction_writes_every_paper_from_its_mlflow_runs_and_resumes(ray_session, isolated_mlflow_store,
                                                                                  tmp_path):
    env = session_ray_env(MLFLOW_TRACKING_URI=isolated_mlflow_store, PARABIT_OUTPUT=str(tmp_path / "outputs"))
    (document,) = re.findall(r"^document: (\S+)", reproduce(env), re.M)
    text = open(document).read()

    assert text.startswith("# Reproducing the seed papers") and "## Findings at a glance" in text
    sections = re.findall(r"^## (.+)$", text, re.M)
    assert [s for s in sections if s.startswith(PAPERS)] == sorted(
        (s for s in sections if s.startswith(PAPERS)), key=lambda s: [s.startswith(p) for p in PAPERS].index(True))
    assert len([s for s in sections if s.startswith(PAPERS)]) == 4  # all four papers, in the order they run
    glance = text.split("## Findings at a glance", 1)[1].split("\n## ", 1)[0]
    for paper in ("bao", "elgohary", "wieting", "bildrl"):
        assert f"| {paper} |" in glance

    # Every paper trained the groups of one finding, and every finished cell's number is its MLflow run's.
    counts = [tuple(map(int, c)) for c in CELLS.findall(text)]
    assert len(counts) == 4 and all(finished == planned >= 2 and reused == 0 for finished, planned, reused in counts)
    rows = CELL_ROW.findall(text)
    assert len(rows) == sum(planned for _, planned, _ in counts)
    client = MlflowClient(isolated_mlflow_store)
    for name, seed, run_id, metric, value in rows:
        run = client.get_run(run_id)
        assert run.info.run_name == name and run.info.status == "FINISHED" and seed == "1"
        if "/" in metric:  # one MLflow metric (a label instead: the mean of several, e.g. the STS years)
            assert run.data.metrics[metric] == pytest.approx(float(value), abs=1e-6), name
    assert sum("/" in metric for *_, metric, _ in rows) >= 4  # Bao's and BilDRL's cells at least

    # The same command again: every cell is found finished in MLflow, none trained again.
    reproduce(env)
    again = open(document).read()
    assert [tuple(map(int, c)) for c in CELLS.findall(again)] == [(f, p, p) for f, p, _ in counts]
    assert sorted(CELL_ROW.findall(again)) == sorted(rows)
