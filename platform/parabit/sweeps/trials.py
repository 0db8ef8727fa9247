"""A sweep's trials by name and folder, and what the sweep does with them once Tune has run them: the table of every
trial, their MLflow runs closed, the checkpoints of all but the best removed."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd
import ray
from mlflow.tracking import MlflowClient
from ray import tune
from ray.util.state import list_actors

from parabit.paths import output_root
from parabit.sweeps.space import SearchSpace
from parabit.tracking import RunTracker, tags
from parabit.training import Divergence
from parabit.training.run import run_directory

log = logging.getLogger(__name__)

FINAL_METRIC = tags.FINAL_SCORE
TRAIN_ACTORS = ("TrainController", "RayTrainWorker")
# A trial's own actor (Tune's wrapper of a function trainable) and the Ray Train actors it started.
TRIAL_ACTORS = ("ImplicitFunc", *TRAIN_ACTORS)
ACTORS_WAIT_S = 120


def trial_params(trial_config: dict) -> dict:
    """Grid and random trials carry their point under ``params``; Optuna's are flat (``path|condition``)."""
    return dict(trial_config["params"]) if "params" in trial_config else dict(trial_config)


def trial_name(space: SearchSpace, trial_id: str) -> str:
    return f"{space.name}-{trial_id}"


def sweep_directory(space: SearchSpace) -> Path:
    return output_root() / "sweeps" / space.name


def trials_directory(sweep: Path | str) -> Path:
    """Where the trials of the sweep in folder ``sweep`` keep their runs' folders (checkpoints, divergence)."""
    return Path(sweep) / "trials"


def trial_training_config(space: SearchSpace, result: tune.Result):
    """The training config a trial ran (its checkpoints are under ``run_directory`` of it)."""
    config = space.trial_config(trial_params(result.config), name=trial_name(space, result.metrics["trial_id"]))
    config.storage_path = str(trials_directory(sweep_directory(space)))
    return config


def remove_other_trials_checkpoints(space: SearchSpace, results: tune.ResultGrid, best: str) -> None:
    """Remove the Ray Train folder of every trial but ``best`` that ended without an error (a failed trial's folder
    holds what a resumed sweep reads, e.g. its divergence). First wait for the trials' Ray Train actors to end:
    ``fit()`` returns once Tune has stopped each trial, and the controller and workers a trial started end after it
    (a worker of a trial ASHA stopped may still be writing a checkpoint)."""
    if not actors_ended(TRAIN_ACTORS):
        log.warning("sweep %s: Ray Train actors were still alive %d s after the sweep ended; removing the other "
                    "trials' checkpoints anyway", space.name, ACTORS_WAIT_S)
    for result in results:
        if result.error is None and "trial_id" in (result.metrics or {}):
            if trial_name(space, result.metrics["trial_id"]) != best:
                shutil.rmtree(run_directory(trial_training_config(space, result)), ignore_errors=True)


def actors_ended(class_names: tuple[str, ...]) -> bool:
    """Whether this job has no actor of ``class_names`` alive, waiting up to ``ACTORS_WAIT_S`` for the last to end."""
    address, job_id = ray.get_runtime_context().gcs_address, ray.get_runtime_context().get_job_id()
    deadline = time.monotonic() + ACTORS_WAIT_S
    while time.monotonic() < deadline:
        try:
            actors = list_actors(address=address, timeout=10, limit=10_000, raise_on_missing_output=False,
                                 filters=[("job_id", "=", job_id), ("state", "=", "ALIVE")])
        except Exception:  # noqa: BLE001 - the state API can be slow on a loaded machine: ask again
            actors = None
        if actors is not None and not any(actor.class_name in class_names for actor in actors):
            return True
        time.sleep(1)
    return False


def stopped_by_interrupt(error: BaseException | None) -> bool:
    """Whether a trial ended because the sweep was interrupted (Ctrl-C reaches the trial's process too, which then
    fails with KeyboardInterrupt, possibly wrapped by Ray), not because of a fault of its own."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt) or "KeyboardInterrupt" in f"{type(error).__name__}: {error}":
            return True
        error = error.__cause__ or error.__context__
    return False


def close_trial_runs(uri: str, space: SearchSpace, results, interrupted: bool) -> None:
    """Close every trial's child run that its trial could not close. After an interruption every unfinished one is
    ``KILLED``, also one the interruption made fail on its way down (its trial resumes with the same command,
    reopening it), but a run that diverged stays ``FAILED``: its divergence record, which the resumed sweep reads
    to fail it again without training, decides, not its error (a trial stopped under its training may fail with any
    error). After a complete sweep a trial that errored is ``FAILED`` and one ASHA stopped is ``FINISHED`` (its last
    dev score is already in its run). Call it once the trials' actors have ended, so no trial closes its own run
    after this."""
    client = MlflowClient(uri)
    errored = {trial_name(space, r.metrics["trial_id"]) for r in results
               if r.error is not None and (r.metrics or {}).get("trial_id")}
    trials = trials_directory(sweep_directory(space))
    for run in client.search_runs(
        experiment_ids=[e.experiment_id for e in client.search_experiments()],
        filter_string=f"tags.`{tags.SWEEP}` = '{space.name}' and tags.`{tags.KIND}` = 'trial'",
    ):
        if interrupted and run.info.status in ("RUNNING", "FAILED"):
            status = "FAILED" if Divergence.load(trials / run.info.run_name) is not None else "KILLED"
            if run.info.status != status:
                client.set_terminated(run.info.run_id, status=status)
        elif not interrupted and run.info.status == "RUNNING":
            client.set_terminated(run.info.run_id, status="FAILED" if run.info.run_name in errored else "FINISHED")


def trials_table(results) -> pd.DataFrame:
    """One row per trial, a trial that failed before its first report too (Tune's ``get_dataframe`` leaves it out):
    its id and parameters, its last report's epoch, dev score, loss and final score, and its error (the last line
    of Tune's message, which names the exception)."""
    rows = []
    for result in results:
        metrics = result.metrics or {}
        error = str(result.error).strip().splitlines() if result.error is not None else []
        rows.append({"trial_id": metrics.get("trial_id"),
                     **{f"config/{key}": value for key, value in trial_params(result_config(result)).items()},
                     **{key: metrics.get(key) for key in ("epoch", "dev_score", "loss", FINAL_METRIC)},
                     "error": error[-1] if error else ""})
    return pd.DataFrame(rows)


def result_config(result) -> dict:
    """A trial's config: from its last report, else from the ``params.json`` Tune writes as the trial starts (a
    trial that never reported, restored from disk, has no report to carry it)."""
    if result.config:
        return result.config
    params = Path(result.path) / "params.json"
    return json.loads(params.read_text()) if params.is_file() else {}


def log_trials_table(parent: RunTracker, results) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "trials.csv"
        trials_table(results).to_csv(path, index=False)
        parent.log_artifact(path, "sweep")
