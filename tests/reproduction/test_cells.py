"""The cell runner: a one-CPU-worker cell trains in process and others in worker groups (a digest unchanged either way),
and how many cells train at once: ``parallel: auto`` puts a cell in process on every CPU (each holds half of a CPU
beside the other, so one stays free for the Ray Data that starts a cell), and a cell with a Ray Train worker group of
its own on every CPU but one."""

from __future__ import annotations

from dataclasses import replace

from parabit.config import reconfigure
from parabit.papers.cells import Cell
from parabit.recipes.pairs.config import PairsConfig
from parabit.reproduction.cells import CellRunner
from parabit.reproduction.ledger import Ledger


def test_a_runner_trains_a_one_cpu_worker_cell_in_process_and_others_in_worker_groups(sick_cell, tmp_path):
    runner = CellRunner(Ledger(tmp_path), uri=f"sqlite:///{tmp_path / 'mlflow.db'}", checkpoint_every=5)
    one_worker = runner.as_trained(sick_cell)
    assert one_worker.config.scaling.in_process and one_worker.config.checkpoint_every == 5
    assert one_worker.digest == sick_cell.digest
    for scaling in ({"scaling.num_workers": 2, "scaling.cpus_per_worker": 0.5}, {"scaling.use_gpu": True}):
        cell = replace(sick_cell, config=reconfigure(sick_cell.config, scaling))
        assert not runner.as_trained(cell).config.scaling.in_process
    worker_groups = CellRunner(Ledger(tmp_path), uri=runner.uri, in_process=False)
    assert not worker_groups.as_trained(sick_cell).config.scaling.in_process


def _cells(count: int, in_process: bool) -> list[Cell]:
    config = reconfigure(PairsConfig(), {"scaling.in_process": in_process})
    return [Cell("alpha", "group", seed, config) for seed in range(1, count + 1)]


def test_auto_trains_a_cell_in_process_on_each_cpu_and_ray_train_cells_on_all_but_one(ray_session, tmp_path):
    runner = CellRunner(Ledger(tmp_path), parallel="auto")  # the session's Ray: 2 CPUs, as CI and the vm
    assert runner.width(_cells(3, in_process=True)) == 2
    assert runner.width(_cells(1, in_process=True)) == 1
    assert runner.width(_cells(3, in_process=False)) == 1
    assert CellRunner(Ledger(tmp_path), parallel=3).width(_cells(2, in_process=False)) == 2  # never more than cells
