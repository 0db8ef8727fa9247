"""Bounded waits for a run's workers: one progress line while the cluster cannot place them, and the end of the run,
with what is missing, once ``scaling.placement_timeout_s`` has passed.

Ray Train waits for its workers for as long as it takes: at the start, and after a lost node, when the worker group
is started again from the last checkpoint. With a fixed number of workers and a node that does not come back, that is
for ever (its controller retries the placement every ``RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S``, 60 s by default,
logging a traceback each time). :class:`PlacementWatch` runs inside the run's controller and sees each of its state
changes: it prints one line when a wait begins, and ends the run when the wait is over its limit by raising
:class:`WorkersNotPlaced` there (Ray Train then stops the run as failed; the driver turns it into one line).
"""

from __future__ import annotations

import logging
import time

import ray
from ray.train.v2._internal.exceptions import WorkerGroupStartupTimeoutError
from ray.train.v2._internal.execution.callback import ControllerCallback
from ray.train.v2._internal.execution.controller.state import TrainControllerStateType

from parabit.config import ConfigError
from parabit.output import one_line_console
from parabit.ray_runtime import available_cpus
from parabit.training.config import TrainingConfig
from parabit.training.guard import RunStopped

# Controller states in which the run has no worker group running and is waiting to start one.
WAITING_STATES = frozenset({TrainControllerStateType.INITIALIZING, TrainControllerStateType.SCHEDULING,
                            TrainControllerStateType.RESCHEDULING, TrainControllerStateType.RESTARTING})
# A wait shorter than this is a worker group starting normally, not worth a line.
QUIET_WAIT_S = 5.0
# How long one placement attempt of Ray Train waits before it tries again: the watch sees the time at each try.
PLACEMENT_ATTEMPT_S = 10.0


class WorkersNotPlaced(RunStopped):
    """The cluster could not place a run's workers within ``scaling.placement_timeout_s``; the message says which
    resources are missing. The run keeps its checkpoints: the same command resumes it."""


class PlacementWatch(ControllerCallback):
    """A Ray Train controller callback bounding how long run ``name`` waits for ``workers`` workers (the minimum of an
    elastic range) of ``per_worker`` resources each."""

    def __init__(self, name: str, workers: int, per_worker: dict[str, float], timeout_s: float,
                 verbose: bool = False):
        self.name, self.workers, self.per_worker, self.timeout_s = name, workers, per_worker, timeout_s
        self.verbose = verbose  # the driver's --verbose: the controller's environment does not carry it
        self._waiting_since: float | None = None
        self._announced = False

    def after_controller_start(self, train_run_context) -> None:
        """Ray's own report of each placement attempt (a traceback every attempt) gives way to this watch's line on
        the console; every fault the controller logs is one line there (Ray Train's log files keep them whole)."""
        if self.verbose:
            return
        one_line_console("ray.train")
        for handler in logging.getLogger("ray.train").handlers:
            handler.addFilter(_not_about_placement)

    def after_controller_state_update(self, previous_state, current_state) -> None:
        if getattr(current_state, "_state_type", None) not in WAITING_STATES:  # Ray Train has no public accessor
            self._waiting_since, self._announced = None, False
            return
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = now
        waited = now - self._waiting_since
        if waited > self.timeout_s:
            raise WorkersNotPlaced(
                f"training run {self.name}: the cluster could not place {self.wanted()} within "
                f"scaling.placement_timeout_s={self.timeout_s:g} s ({self.shortfall()}); the run is resumable from its "
                f"last checkpoint: once the cluster has the resources, run the same command again")
        if waited > QUIET_WAIT_S and not self._announced:
            self._announced = True
            print(f"[{self.name}] waiting up to {self.timeout_s:g} s for the cluster to place {self.wanted()} "
                  f"({self.shortfall()})", flush=True)

    def wanted(self) -> str:
        resources = ", ".join(f"{name}: {amount:g}" for name, amount in sorted(self.per_worker.items()))
        return f"{self.workers} worker(s) of {{{resources}}}"

    def shortfall(self) -> str:
        """Which of the resources the workers need the cluster's live nodes lack, as they stand now."""
        try:
            nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]
        except Exception as err:  # noqa: BLE001 - the message matters more than its detail
            return f"the cluster's resources could not be read: {err}"
        fits = sum(min(int(resources.get(name, 0.0) // amount) for name, amount in self.per_worker.items()
                       if amount > 0) for resources in nodes) if self.per_worker else self.workers
        totals = {name: sum(resources.get(name, 0.0) for resources in nodes) for name in self.per_worker}
        have = ", ".join(f"{name}: {amount:g}" for name, amount in sorted(totals.items()))
        return f"its {len(nodes)} live node(s) have {{{have}}} in all, room for {fits} such worker(s)"


def _not_about_placement(record: logging.LogRecord) -> bool:
    """False for Ray's report of a placement attempt that timed out, and of this watch ending the run (the driver
    prints that as the run's last line)."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, (WorkerGroupStartupTimeoutError, WorkersNotPlaced)) and \
        not isinstance(getattr(error, "__cause__", None), WorkersNotPlaced)


def check_resources(config: TrainingConfig, concurrent_runs: int = 1, cpus_per_run_driver: float = 0.0) -> None:
    """Fail fast, with what to change, when ``concurrent_runs`` runs of ``config`` (each with a driver task of
    ``cpus_per_run_driver``, e.g. a Tune trial) cannot all get their resources: no GPU, or less than one whole CPU
    left for Ray Data's read tasks, which then wait forever."""
    if config.scaling.use_gpu:
        gpus = ray.cluster_resources().get("GPU", 0)
        if gpus < config.scaling.min_workers:
            raise ConfigError(
                f"scaling.use_gpu asks for {config.scaling.min_workers} GPU worker(s) but the Ray cluster has {gpus:g} "
                "GPU(s); set scaling.use_gpu: false to train on CPU, or start Ray on GPU nodes"
            )
    cpus = available_cpus()
    workers = config.scaling.min_workers * concurrent_runs  # an elastic run starts with what the cluster has
    wanted = workers * config.scaling.cpus_per_worker + concurrent_runs * cpus_per_run_driver
    if wanted > cpus - 1.0:  # Ray Data's split coordinator and the evaluation need a CPU beside the workers
        runs = f"{concurrent_runs} concurrent runs x " if concurrent_runs > 1 else ""
        raise ConfigError(
            f"scaling asks for {runs}{config.scaling.min_workers} workers x {config.scaling.cpus_per_worker} CPU = "
            f"{wanted:g} of the cluster's {cpus:g} CPUs, leaving no whole CPU for Ray Data; lower scaling.cpus_per_worker "
            f"(e.g. {max((cpus - 1) / workers, 0.1):.2g}), scaling.num_workers or the number of concurrent runs"
        )
