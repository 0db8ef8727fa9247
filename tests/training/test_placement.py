"""Bounded waits for a run's workers (``parabit.training.placement``), driven with Ray Train's own controller states;
the node-loss drills on a real multi-node cluster are in tests/infra/test_local_cluster.py, and an elastic range that
starts with every worker the cluster can place is the two-worker run of tests/training/test_trainer.py."""

from __future__ import annotations

import logging

import pytest
from ray.train.v2._internal.exceptions import WorkerGroupStartupTimeoutError
from ray.train.v2._internal.execution.controller.state import (
    ReschedulingState,
    RestartingState,
    RunningState,
    SchedulingState,
)
from ray.train.v2._internal.execution.scaling_policy import ResizeDecision

from parabit.config import ConfigError
from parabit.training import ScalingSettings
from parabit.training.run import WorkersNotPlaced
from parabit.training.placement import PlacementWatch, _not_about_placement


def _watch(timeout_s: float) -> PlacementWatch:
    return PlacementWatch("lost-node", 2, {"CPU": 1.0, "train_slot": 1.0}, timeout_s)


def test_a_wait_past_the_limit_ends_the_run_naming_what_is_missing(ray_session, monkeypatch):
    clock = iter([100.0, 100.5, 106.0, 131.0])
    monkeypatch.setattr("parabit.training.placement.time.monotonic", lambda: next(clock))
    watch = _watch(timeout_s=30)
    error = WorkerGroupStartupTimeoutError(num_workers=2)
    watch.after_controller_state_update(RunningState(), ReschedulingState(error))  # t=100: the wait begins
    watch.after_controller_state_update(None, SchedulingState(ResizeDecision(2, {"CPU": 1.0})))  # 0.5 s: quiet
    watch.after_controller_state_update(None, ReschedulingState(error))  # 6 s: announced once
    with pytest.raises(WorkersNotPlaced) as stopped:
        watch.after_controller_state_update(None, ReschedulingState(error))  # 31 s > 30 s
    message = str(stopped.value)
    assert "could not place 2 worker(s) of {CPU: 1, train_slot: 1} within scaling.placement_timeout_s=30 s" in message
    # The live cluster (this session's local Ray: CPUs, no train_slot) has no room for one such worker.
    assert "train_slot: 0} in all, room for 0 such worker(s)" in message and "resumable" in message


def test_running_again_resets_the_wait_and_a_restart_is_not_a_wait_until_it_lasts(ray_session, monkeypatch, capsys):
    clock = iter([0.0, 2.0, 50.0, 80.0])
    monkeypatch.setattr("parabit.training.placement.time.monotonic", lambda: next(clock))
    watch = _watch(timeout_s=40)
    watch.after_controller_state_update(None, RestartingState(RuntimeError("lost")))  # t=0
    watch.after_controller_state_update(None, RestartingState(RuntimeError("lost")))  # 2 s: too short for a line
    assert capsys.readouterr().out == ""
    watch.after_controller_state_update(None, RunningState())  # placed: the wait is over
    watch.after_controller_state_update(None, RestartingState(RuntimeError("lost again")))  # t=50: a new wait
    watch.after_controller_state_update(None, RestartingState(RuntimeError("lost again")))  # 30 s of 40: one line, goes on
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("[lost-node] waiting up to 40 s for the cluster to place 2 worker")


def test_ray_s_report_of_each_placement_attempt_is_left_to_the_watch():
    def record(error: BaseException) -> logging.LogRecord:
        return logging.LogRecord("ray.train", logging.ERROR, __file__, 1, "Error in control loop iteration", None,
                                 (type(error), error, None))

    assert not _not_about_placement(record(WorkerGroupStartupTimeoutError(num_workers=2)))
    assert not _not_about_placement(record(WorkersNotPlaced("training run x: ...")))
    assert _not_about_placement(record(RuntimeError("connection reset by peer")))


def test_num_workers_is_a_count_or_an_elastic_range():
    assert ScalingSettings(num_workers=3).elastic is False
    elastic = ScalingSettings(num_workers=[1, 4])
    assert elastic.elastic and (elastic.min_workers, elastic.max_workers) == (1, 4)
    with pytest.raises(ValueError, match=r"scaling.num_workers is a range \[min, max\]: 3 > 2"):
        ScalingSettings(num_workers=[3, 2])
    with pytest.raises(ValueError):
        ScalingSettings(num_workers=[0, 2])
    with pytest.raises(ValueError):
        ScalingSettings(placement_timeout_s=0)


def test_an_elastic_run_is_checked_against_the_cluster_by_its_minimum(ray_session, tmp_path):
    from parabit.training.run import check_resources

    from ..conftest import pairs_config

    cpus = ray_session.cluster_resources()["CPU"]
    fits = pairs_config("elastic-check", tmp_path / "pairs", tmp_path,
                        scaling=ScalingSettings(num_workers=[1, 64], cpus_per_worker=(cpus - 1) / 2))
    check_resources(fits)  # 64 workers would not fit; the run starts with what the cluster has
    too_many = fits.model_copy(update={"scaling": ScalingSettings(num_workers=[64, 64], cpus_per_worker=0.5)})
    with pytest.raises(ConfigError, match="scaling asks for 64 workers"):
        check_resources(too_many)


# In a process of its own: a Ray with logical GPUs (this session's Ray has none, and a process holds one Ray).
GPU_CHECK = """
import ray
from parabit.config import ConfigError
from parabit.training import ScalingSettings, TrainingConfig
from parabit.training.run import check_resources

ray.init(address="local", num_cpus=4, num_gpus=2, include_dashboard=False, logging_level="ERROR")
config = TrainingConfig(recipe="pairs", name="gpu-trials", scaling=ScalingSettings(use_gpu=True, cpus_per_worker=0.5))
check_resources(config, concurrent_runs=2, cpus_per_run_driver=0.01)  # two one-GPU trials: the two GPUs
try:
    check_resources(config, concurrent_runs=3, cpus_per_run_driver=0.01)
except ConfigError as err:
    print("refused:", err)
"""


def test_the_gpu_check_counts_one_gpu_per_worker_of_every_concurrent_run():
    import subprocess
    import sys

    checked = subprocess.run([sys.executable, "-c", GPU_CHECK], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stderr[-3000:]
    (refusal,) = [line for line in checked.stdout.splitlines() if line.startswith("refused:")]
    assert refusal == ("refused: scaling.use_gpu asks for 3 concurrent runs x 1 GPU worker(s) but the Ray cluster has "
                       "2 GPU(s); set scaling.use_gpu: false to train on CPU, or start Ray on GPU nodes, or lower the "
                       "number of concurrent runs")
