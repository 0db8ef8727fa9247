"""A reproduction cell of a real training config (Bao's SICK cell) and a finished record of it."""

from __future__ import annotations

import pytest

from parabit.papers.cells import Group, make_cell
from parabit.papers.records import CellRecord
from parabit.paths import project_path
from parabit.recipes import load_run_config

SICK = "jobs/configs/siamese/sick_en.yaml"


@pytest.fixture
def sick_cell():
    """The first seed of Bao's SICK cell, as the reproduction makes it."""
    return make_cell("repro", "parabit-reproduction", "bao",
                     Group("sick-sialstm", load_run_config(project_path(SICK))), 1)


def finished_record(cell, started="2026-11-25T10:00:00Z", finished="2026-11-25T10:01:40Z", seconds=100.0,
                    metrics=None):
    """A finished record of ``cell`` (a run of ``seconds`` between ``started`` and ``finished``)."""
    return CellRecord(cell=cell.name, paper=cell.paper, group=cell.group, seed=cell.seed, digest=cell.digest,
                      commit="0123456789abcdef", metrics=metrics or {"sick-en/test/pearson": 0.75},
                      train_seconds=seconds, data={"pairs_kept": 4500}, machine={"host": "vm", "cpus": 2},
                      started=started, finished=finished, mlflow_run_id="f" * 32)
