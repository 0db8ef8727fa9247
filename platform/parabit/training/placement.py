"""Bounded waits for a run's workers: one progress line while the cluster cannot place them, and the end of the run,
with what is missing, once ``scaling.placement_timeout_s`` has passed without room for them on the cluster's nodes.

Ray Train waits for its workers for as long as it takes: at the start, and after a lost node, when the worker group
is started again from the last checkpoint. With a fixed number of workers and a node that does not come back, that is
for ever (its controller retries the placement every ``RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S``, 60 s by default,
logging a traceback each time). :class:`PlacementWatch` runs inside the run's controller and sees each of its state
changes: it prints one line when a wait begins, and ends the run when the wait is over its limit by raising
:class:`WorkersNotPlaced` there (Ray Train then stops the run as failed; the driver turns it into one line).

Only a wait for room counts: while the live nodes could hold the workers (their total resources, whatever is using
them now) the run is queued behind other work, e.g. the other trials of a sweep holding every GPU, and waits for as
long as that work runs. A lost node, or nodes an autoscaler has not added yet, leave no room: that wait is bounded.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import ray
# Private (Ray 2.60, none of them public): the controller's callback interface and its states are how the watch sees
# a run waiting for workers, and this error is what one placement attempt that timed out raises.
from ray.train.v2._internal.exceptions import WorkerGroupStartupTimeoutError
from ray.train.v2._internal.execution.callback import ControllerCallback
from ray.train.v2._internal.execution.controller.state import TrainControllerStateType

from parabit.config import ConfigError
from parabit.output import one_line_console
from parabit.ray_runtime import available_cpus, cluster_can_grow
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
        self._waiting_since: float | None = None  # when the current wait began
        self._without_room_since = 0.0  # when its nodes last lacked room for the workers (what the limit bounds)
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
            self._waiting_since = self._without_room_since = now
        room = self.room()
        queued = room.fits is not None and room.fits >= self.workers
        if queued:  # the nodes could hold the workers: other work holds their resources, a wait not counted
            self._without_room_since = now
        if now - self._without_room_since > self.timeout_s:
            raise WorkersNotPlaced(
                f"training run {self.name}: the cluster could not place {self.wanted()} within "
                f"scaling.placement_timeout_s={self.timeout_s:g} s ({room}); the run is resumable from its "
                f"last checkpoint: once the cluster has the resources, run the same command again")
        if now - self._waiting_since > QUIET_WAIT_S and not self._announced:
            self._announced = True
            print(f"[{self.name}] waiting for the cluster to free {self.wanted()} ({room}; other work holds them)"
                  if queued else f"[{self.name}] waiting up to {self.timeout_s:g} s for the cluster to place "
                  f"{self.wanted()} ({room})", flush=True)

    def wanted(self) -> str:
        resources = ", ".join(f"{name}: {amount:g}" for name, amount in sorted(self.per_worker.items()))
        return f"{self.workers} worker(s) of {{{resources}}}"

    def room(self) -> "Room":
        """How many of the workers the cluster's live nodes could hold by their total resources, as they stand now."""
        try:
            nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]
        except Exception as err:  # noqa: BLE001 - the message matters more than its detail
            return Room(None, f"the cluster's resources could not be read: {err}")
        fits = sum(min(int(resources.get(name, 0.0) // amount) for name, amount in self.per_worker.items()
                       if amount > 0) for resources in nodes) if self.per_worker else self.workers
        totals = {name: sum(resources.get(name, 0.0) for resources in nodes) for name in self.per_worker}
        have = ", ".join(f"{name}: {amount:g}" for name, amount in sorted(totals.items()))
        return Room(fits, f"its {len(nodes)} live node(s) have {{{have}}} in all, room for {fits} such worker(s)")


@dataclass(frozen=True)
class Room:
    """What :meth:`PlacementWatch.room` found: ``fits`` workers (None: the cluster could not be read) and, as the
    messages say it, why."""

    fits: int | None
    description: str

    def __str__(self) -> str:
        return self.description


def _not_about_placement(record: logging.LogRecord) -> bool:
    """False for Ray's report of a placement attempt that timed out, and of this watch ending the run (the driver
    prints that as the run's last line)."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, (WorkerGroupStartupTimeoutError, WorkersNotPlaced)) and \
        not isinstance(getattr(error, "__cause__", None), WorkersNotPlaced)


def check_resources(config: TrainingConfig, concurrent_runs: int = 1, cpus_per_run_driver: float = 0.0) -> None:
    """Fail fast, with what to change, when ``concurrent_runs`` runs of ``config`` (each with a driver task of
    ``cpus_per_run_driver``, e.g. a Tune trial) cannot all get their resources on a cluster that cannot grow: fewer
    GPUs than their workers, or less than one whole CPU left for Ray Data's read tasks, which then wait forever.

    A cluster whose autoscaler can add nodes (:func:`~parabit.ray_runtime.cluster_can_grow`; e.g. the GPU workers of
    infra/aws and infra/k8s, which start or idle at zero nodes) is not held to the nodes it has now: the run only says
    what it lacks and goes on, and the :class:`PlacementWatch` bounds its wait. Nothing is asked of the autoscaler
    here: Ray Train's placement group for the workers is the demand it scales up for (``ray.autoscaler.sdk.
    request_resources`` would keep the cluster at that size after the run, and replace any other job's request)."""
    problem = _resource_problem(config, concurrent_runs, cpus_per_run_driver)
    if problem is None:
        return
    if cluster_can_grow():
        print(f"[{config.name}] {problem[0]}; the cluster's autoscaler can add nodes: waiting up to "
              f"scaling.placement_timeout_s={config.scaling.placement_timeout_s:g} s for them", flush=True)
        return
    raise ConfigError(f"{problem[0]}; {problem[1]}")


def _fitting_cpus(cpus: float, workers: int, drivers: float) -> float:
    """The largest ``cpus_per_worker`` (in hundredths, at least 0.1) that leaves a whole CPU beside the workers and
    the runs' drivers."""
    return max(math.floor((cpus - 1.0 - drivers) / workers * 100) / 100, 0.1)


def _resource_problem(config: TrainingConfig, concurrent_runs: int,
                      cpus_per_run_driver: float) -> tuple[str, str] | None:
    """What the cluster's nodes, as they are, lack for ``concurrent_runs`` runs of ``config``, and what to change."""
    scaling = config.scaling
    runs = f"{concurrent_runs} concurrent runs x " if concurrent_runs > 1 else ""
    workers = scaling.min_workers * concurrent_runs  # an elastic run starts with what the cluster has
    if scaling.use_gpu:
        gpus = ray.cluster_resources().get("GPU", 0)
        if gpus < workers:  # one GPU per worker of every run at once, as the CPU check counts (trials run together)
            return (f"scaling.use_gpu asks for {runs}{scaling.min_workers} GPU worker(s) but the Ray cluster has "
                    f"{gpus:g} GPU(s)",
                    "set scaling.use_gpu: false to train on CPU, or start Ray on GPU nodes"
                    + (", or lower the number of concurrent runs" if concurrent_runs > 1 else ""))
    cpus = available_cpus()
    wanted = workers * scaling.cpus_per_worker + concurrent_runs * cpus_per_run_driver
    if wanted > cpus - 1.0:  # Ray Data's split coordinator and the evaluation need a CPU beside the workers
        return (f"scaling asks for {runs}{scaling.min_workers} workers x {scaling.cpus_per_worker} CPU = "
                f"{wanted:g} of the cluster's {cpus:g} CPUs, leaving no whole CPU for Ray Data",
                f"lower scaling.cpus_per_worker (e.g. "
                f"{_fitting_cpus(cpus, workers, concurrent_runs * cpus_per_run_driver):g}), scaling.num_workers or "
                "the number of concurrent runs")
    return None
