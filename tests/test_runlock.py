"""One process per run name, one builder per cached dataset: two same-name runs started together never write the
same outputs (the second is refused in one line), two runs that need the same prepared data build it once, and a
folder made once is whole or absent."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from parabit.config import to_dict
from parabit.paths import PROJECT_ROOT
from parabit.runlock import RunInUse, built_once, exclusive_run, one_builder

from .cluster_support import session_ray_env


def _hold(lock: str, ready, release) -> None:
    with exclusive_run(Path(lock), "run x"):
        ready.set()
        release.wait(30)


def test_a_second_holder_of_a_run_name_is_refused_and_a_killed_holder_frees_it(tmp_path):
    lock = tmp_path / "x.lock"
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(str(lock), ready, release))
    holder.start()
    assert ready.wait(30)
    with pytest.raises(RunInUse, match=rf"run x is already running \(pid {holder.pid} on "):
        with exclusive_run(lock, "run x"):
            pass
    holder.kill()  # SIGKILL: the OS drops the lock with the process
    holder.join()
    with exclusive_run(lock, "run x"):
        assert lock.read_text().startswith(f"pid {os.getpid()}")


def _prepare(config: dict, outputs: str, queue) -> None:
    os.environ["PARABIT_OUTPUT"] = outputs
    from parabit.recipes.pairs.config import DataConfig
    from parabit.recipes.pairs.data import prepare_pairs

    started = time.perf_counter()
    prepared = prepare_pairs(DataConfig(**config))
    queue.put((str(prepared.directory), prepared.pairs_path.stat().st_mtime_ns, time.perf_counter() - started))


def test_two_runs_that_need_the_same_prepared_data_build_it_once(tatoeba_slice, tmp_path):
    config = {"condition": "pairs_parquet", "path": str(tatoeba_slice), "max_pairs": 3000}
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_prepare, args=(config, str(tmp_path), queue)) for _ in range(2)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join()
    (directory, stamp, _), (other, other_stamp, _) = results
    assert directory == other and stamp == other_stamp  # one folder, written once
    assert not list((tmp_path / "prepared").glob("*.partial-*"))  # no second, discarded build


def test_one_builder_lets_waiters_through_in_turn(tmp_path):
    order = []
    with one_builder(tmp_path / "cache.lock"):
        order.append("first")
    with one_builder(tmp_path / "cache.lock"):
        order.append("second")
    assert order == ["first", "second"]



def test_a_folder_built_once_is_built_by_one_of_those_that_need_it_at_once(tmp_path):
    builds = []

    def build(staging: Path) -> None:
        builds.append(staging)
        time.sleep(0.2)  # long enough for the other caller to arrive while this one builds
        (staging / "made").write_text("whole")

    folder = tmp_path / "model"
    callers = [threading.Thread(target=built_once, args=(folder, build)) for _ in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(builds) == 1 and (folder / "made").read_text() == "whole"
    assert built_once(folder, build) == folder and len(builds) == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model", "model.lock"]


def test_a_failed_or_killed_build_leaves_no_folder_and_the_next_builds_it_whole(tmp_path):
    folder = tmp_path / "model"

    def fail(staging: Path) -> None:
        (staging / "half").write_text("")
        raise RuntimeError("out of disk")

    with pytest.raises(RuntimeError, match="out of disk"):
        built_once(folder, fail)
    assert not folder.exists() and not list(tmp_path.glob(".model-*"))
    (tmp_path / ".model-killed").mkdir()  # what a builder killed with SIGKILL leaves
    built_once(folder, lambda staging: (staging / "made").write_text("whole"))
    assert (folder / "made").read_text() == "whole" and not list(tmp_path.glob(".model-*"))
@pytest.mark.slow
def test_a_second_training_run_of_the_same_name_is_refused_while_the_first_runs(ray_session, small_config, tmp_path):
    config = small_config(optim__epochs=3)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(to_dict(config)))
    # Both jobs join the session's Ray (as jobs join a cluster): the lock is the run's, not its Ray's.
    env = session_ray_env(PARABIT_OUTPUT=str(tmp_path / "outputs"),
                          MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path / 'mlflow.db'}")
    command = [sys.executable, str(PROJECT_ROOT / "jobs" / "train.py"), "--config", str(path)]
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lock = Path(config.storage_path) / f"{config.name}.lock"
    deadline = time.time() + 120
    while time.time() < deadline and not (lock.is_file() and lock.read_text()):
        time.sleep(0.2)
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert first.wait(timeout=600) == 0
    assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
    assert f"training run '{config.name}' is already running (pid {first.pid} on " in second.stderr
