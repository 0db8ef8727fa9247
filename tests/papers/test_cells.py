"""How many cells train at once: ``parallel: auto`` puts a cell in process on every CPU (each holds half of a CPU
beside the other, so one stays free for the Ray Data that starts a cell), and a cell with a Ray Train worker group of
its own on every CPU but one."""

from __future__ import annotations

from parabit.papers.cells import Cell, CellRunner, reconfigure
from parabit.papers.ledger import Ledger
from parabit.recipes.pairs.config import PairsConfig


def _cells(count: int, in_process: bool) -> list[Cell]:
    config = reconfigure(PairsConfig(), {"scaling.in_process": in_process})
    return [Cell("alpha", "group", seed, config) for seed in range(1, count + 1)]


def test_auto_trains_a_cell_in_process_on_each_cpu_and_ray_train_cells_on_all_but_one(ray_session, tmp_path):
    runner = CellRunner(Ledger(tmp_path), parallel="auto")  # the session's Ray: 2 CPUs, as CI and the vm
    assert runner.width(_cells(3, in_process=True)) == 2
    assert runner.width(_cells(1, in_process=True)) == 1
    assert runner.width(_cells(3, in_process=False)) == 1
    assert CellRunner(Ledger(tmp_path), parallel=3).width(_cells(2, in_process=False)) == 2  # never more than cells
