"""Real sweeps on the local Ray: MLflow parent/child runs, a killed sweep driver restored to completion, a sweep of
another recipe (Siamese) with its own final score. (A trial that diverges while the rest of its sweep goes on is
checked by the sweep job of tests/infra/test_local_cluster.py.)"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from ray import tune

from parabit.recipes.bildrl.config import BilDRLConfig
from parabit.recipes.bildrl.recipe import BilDRLRecipe
from parabit.evaluation.report import EvaluationReport, Score
from parabit.recipes.pairs.config import PairsConfig
from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.paths import PROJECT_ROOT
from parabit.recipes.siamese.config import SiameseConfig, SiameseDataConfig
from parabit.recipes.siamese.recipe import SiameseRecipe
from parabit.sweeps.space import load_space
from parabit.sweeps.sweep import run_sweep
from parabit.sweeps.trials import FINAL_METRIC, close_trial_runs, sweep_directory
from parabit.tracking import tags
from parabit.tracking.store import ensure_experiment
from parabit.training import Divergence, TrainingDiverged


def _runs(client, sweep):
    experiment = client.get_experiment_by_name("sweep-tests")
    if experiment is None:  # a sweep being polled has not created it yet
        return []
    return client.search_runs([experiment.experiment_id], filter_string=f"tags.`parabit.sweep` = '{sweep}'")


@pytest.mark.slow
def test_an_optuna_sweep_with_asha_logs_one_parent_two_children_and_registers_the_top_scorer(
        ray_session, write_space, isolated_mlflow_store):
    path = write_space("two-trials", {"objective.margin": [1.0, 10.0]},
                       search={"algorithm": "optuna", "num_samples": 4, "max_concurrent_trials": 2, "seed": 1},
                       scheduler={"name": "asha", "grace_period": 1, "reduction_factor": 2})
    space = load_space(path, num_samples=2)  # --num-samples: fewer trials than the space says
    summary = run_sweep(space)
    assert summary.trials == 2 and summary.errors == 0
    # Only the registered trial keeps its checkpoints (keep_checkpoints: best), even one ASHA stopped mid-run.
    trials = sweep_directory(space) / "trials"
    assert {folder.name for folder in trials.iterdir() if folder.is_dir()} == {summary.best_trial}
    assert _checkpointed(trials / summary.best_trial)

    client = MlflowClient(isolated_mlflow_store, registry_uri=isolated_mlflow_store)
    runs = _runs(client, "two-trials")
    parents = [r for r in runs if r.data.tags["parabit.kind"] == "sweep"]
    children = [r for r in runs if r.data.tags["parabit.kind"] == "trial"]
    assert len(parents) == 1 and len(children) == 2
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    last_dev = {}
    for child in children:
        assert child.info.status == "FINISHED"  # a trial ASHA stops early ends FINISHED too, with its last dev score
        steps = [m.step for m in client.get_metric_history(child.info.run_id, "dev_score")]
        assert steps[0] == 0 and steps == sorted(steps) and len(steps) in (2, 3)  # untrained, then per epoch
        ran_all_epochs = len(steps) == 3
        assert ("sts2016/mean/pearson" in child.data.metrics) == ran_all_epochs  # the final table of finished ones
        last_dev[child.info.run_name] = (client.get_metric_history(child.info.run_id, "dev_score")[-1].value,
                                         float(child.data.params["objective.margin"]))
    best_score = max(score for score, _ in last_dev.values())
    assert summary.best_dev_score == pytest.approx(best_score)  # the top scorer (Optuna may draw a margin twice: a tie)
    assert last_dev[summary.best_trial][0] == pytest.approx(best_score)
    assert summary.best_params == {"objective.margin": last_dev[summary.best_trial][1]}
    assert summary.model_uri == "models:/parabit-two-trials/1"
    assert str(client.get_model_version_by_alias("parabit-two-trials", "candidate").version) == "1"
    assert parents[0].data.metrics["trials"] == 2
    assert "sweep/trials.csv" in {a.path for a in client.list_artifacts(parents[0].info.run_id, "sweep")}


def _wait_for(condition, what: str, process: subprocess.Popen, seconds: float = 300, poll: float = 0.5,
              stderr_file: Path | None = None) -> None:
    """Wait until ``condition()``; fail with the process's stderr (piped, or written to ``stderr_file``) when it
    ends first."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        if process.poll() is not None:
            _, stderr = process.communicate()
            stderr = stderr_file.read_text() if stderr_file is not None else stderr or ""
            pytest.fail(f"the sweep ended (exit {process.returncode}) before {what}:\n{stderr[-3000:]}")
        time.sleep(poll)
    pytest.fail(f"not within {seconds} s: {what}")


def _checkpointed(run_folder) -> bool:
    return any(folder.is_dir() for folder in run_folder.glob("checkpoint_*"))


def _trials(client, sweep, status=None):
    return [r for r in _runs(client, sweep) if r.data.tags["parabit.kind"] == "trial"
            and (status is None or r.info.status == status)]


EPOCHS = 12  # per trial (~0.5 s each): Ctrl-C, sent within a poll of a trial's first checkpoint, lands mid-trial


def _sweep_process(write_space, tmp_path, name: str, parameters: dict):
    """A grid sweep over ``parameters``, one trial at a time of EPOCHS short epochs, to run as a process of its own
    with its own MLflow store and outputs: its command, environment, the store's client and the trials' folder."""
    path = write_space(name, parameters, search={"algorithm": "grid", "max_concurrent_trials": 1},
                       scheduler={"name": "fifo"},
                       fixed={"optim.epochs": EPOCHS, "optim.batch_size": 8})  # small batches: epochs last ~0.5 s
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    outputs = tmp_path / "outputs"
    env = {**os.environ, "MLFLOW_TRACKING_URI": store, "PARABIT_OUTPUT": str(outputs)}
    env.pop("RAY_ADDRESS", None)
    command = [sys.executable, str(PROJECT_ROOT / "tuning" / "sweep.py"), "--space", path]
    return command, env, MlflowClient(store, registry_uri=store), outputs / "sweeps" / name / "trials"


def _ctrl_c_once(command: list[str], env: dict, ready, what: str, seconds: float = 300) -> subprocess.CompletedProcess:
    """Start the sweep, send it Ctrl-C (SIGINT) once ``ready()`` (within ``seconds``), and wait for it to end."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        _wait_for(ready, what, process, seconds=seconds, poll=0.1)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


# Over 120 s (~3 min in the full suite on 2 cores): three sweep processes, each with its own Ray, and two trials of
# EPOCHS epochs, each a Ray Train run with ~15-20 s of start-up. Ctrl-C lands in the first trial, so the second is left
# for the run after the SIGKILL; fewer epochs let a trial finish between the poll that sees its first checkpoint and
# the Ctrl-C.
@pytest.mark.slow
def test_a_sweep_stopped_with_ctrl_c_then_killed_resumes_to_one_registered_best(write_space, tmp_path):
    """Ctrl-C (SIGINT) stops the sweep with exit 130, nothing registered and no run left RUNNING; the same command
    resumes it (a trial continues from its checkpoint, not from scratch); killed again (SIGKILL, which nothing can
    catch) once that trial has finished, the same command still completes: every trial once (the finished one not
    trained or evaluated again), one model version, the summary up to date."""
    command, env, client, trial_storage = _sweep_process(write_space, tmp_path, "restored",
                                                         {"objective.margin": [1.0, 10.0]})
    outputs = tmp_path / "outputs"

    # 1. Ctrl-C once the first trial has checkpointed an epoch. The trial folders, not MLflow, are polled: they are
    # cheap to look at, so the Ctrl-C lands early in the trial even on a fast machine.
    first = _ctrl_c_once(command, env, lambda: any(_checkpointed(folder) for folder in trial_storage.glob("*")),
                         "a trial checkpointed an epoch")
    stderr = first.stderr
    assert first.returncode == 130, stderr[-3000:]
    assert re.search(r"interrupted: sweep restored interrupted after [01] of 2 trials; its state is saved", stderr)
    # The trials Ctrl-C stopped mid-way (with a checkpoint): they must continue from it, not start over.
    interrupted = [run.info.run_name for run in _trials(client, "restored", "KILLED")
                   if _checkpointed(trial_storage / run.info.run_name)
                   and len(client.get_metric_history(run.info.run_id, "loss")) < EPOCHS]
    assert interrupted, {run.info.run_name: (run.info.status, len(client.get_metric_history(run.info.run_id, "loss")))
                         for run in _trials(client, "restored")}
    (parent,) = [r for r in _runs(client, "restored") if r.data.tags["parabit.kind"] == "sweep"]
    assert parent.info.status == "KILLED"
    assert not client.search_model_versions("name = 'parabit-restored'")  # nothing registered from a partial sweep
    assert not [r for r in _runs(client, "restored") if r.info.status == "RUNNING"]

    # 2. The same command resumes; killed with SIGKILL once the interrupted trial has finished (the other is left).
    # Its stderr goes to a file, not a pipe nobody reads while it runs (a full pipe would stall it).
    second_stderr = tmp_path / "second.stderr"
    with second_stderr.open("w") as stderr:
        second = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    try:
        _wait_for(lambda: len(_trials(client, "restored", "FINISHED")) >= 1, "the interrupted trial finished", second,
                  stderr_file=second_stderr)
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        second.wait()

    # 3. And again: it completes.
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "resuming the interrupted sweep" in rerun.stdout and "2 trials (0 errors)" in rerun.stdout

    trials = _trials(client, "restored")
    assert sorted(r.info.status for r in trials) == ["FINISHED"] * 2
    assert len({r.data.tags["parabit.run_name"] for r in trials}) == 2  # each trial's run continued, never doubled
    for trial in trials:
        # Each epoch once (live logging skips an epoch the run already has, so this alone cannot tell a restart)...
        assert sorted(m.step for m in client.get_metric_history(trial.info.run_id, "loss")) == list(
            range(1, EPOCHS + 1))
        # ...and its final evaluation once, even for the trial whose evaluation a killed driver may have left
        # unsaved in Tune's state.
        for key in ("sts2016/mean/pearson", FINAL_METRIC):
            assert len(client.get_metric_history(trial.info.run_id, key)) == 1, (trial.info.run_name, key)
    # The trials stopped by Ctrl-C continued from their checkpoints: their last epoch was trained by a resumed worker.
    for resumed in [t for t in trials if t.info.run_name in interrupted]:
        assert max(m.value for m in client.get_metric_history(resumed.info.run_id, "resumes")) >= 1

    # One model version, from the best trial, promoted to @candidate; the summary names that trial.
    (version,) = client.search_model_versions("name = 'parabit-restored'")
    assert str(client.get_model_version_by_alias("parabit-restored", "candidate").version) == str(version.version)
    last_dev = {t.info.run_name: client.get_metric_history(t.info.run_id, "dev_score")[-1].value for t in trials}
    parent = client.get_run(parent.info.run_id)
    assert parent.info.status == "FINISHED" and parent.data.metrics["trials"] == 2
    (best,) = [t for t in trials if t.info.run_name == parent.data.tags["parabit.sweep.best_trial"]]
    assert last_dev[best.info.run_name] == pytest.approx(max(last_dev.values()))  # the summary names the top scorer
    assert parent.data.metrics["best/dev_score"] == pytest.approx(
        client.get_metric_history(best.info.run_id, "dev_score")[-1].value)
    assert json.loads(parent.data.tags["parabit.sweep.best_params"]) == {
        "objective.margin": float(best.data.params["objective.margin"])}
    assert version.run_id == parent.info.run_id
    assert not list((outputs / "mlflow-spool").glob("*.json"))  # no write was refused or left undelivered


def test_each_recipe_takes_its_final_score_from_its_own_report():
    """Pairs: the mean over STS years of each year's mean Pearson r; Siamese: the test split's Pearson r (SICK) or
    accuracy (MSRP), not the selected epoch's dev score; BilDRL: held-out P@1 over the directions it trains. NaN when
    the report lacks it (a pairs run evaluated without STS)."""
    def report(*rows):
        return EvaluationReport([Score(benchmark, subset, metric, value, 10)
                                 for benchmark, subset, metric, value in rows])

    sts = report(("sts2015", "mean", "pearson", 0.5), ("sts2016", "mean", "pearson", 0.7),
                 ("sts2016", "wmean", "pearson", 0.9), ("sts2016", "mean", "spearman", 0.9),
                 ("sick", "test", "pearson", 0.1))
    assert PairsRecipe(PairsConfig()).final_score(sts) == pytest.approx(0.6)
    assert math.isnan(PairsRecipe(PairsConfig()).final_score(report(("sick", "test", "pearson", 0.1))))

    sick = report(("sick-en", "test", "pearson", 0.6), ("sick-en", "test", "mse", 0.3),
                  ("sick-en", "dev", "pearson", 0.8))
    assert SiameseRecipe(SiameseConfig()).final_score(sick) == pytest.approx(0.6)
    msrp = report(("msrp", "test", "accuracy", 0.7), ("msrp", "test", "f1", 0.8), ("msrp", "dev", "accuracy", 0.75))
    assert SiameseRecipe(SiameseConfig(data=SiameseDataConfig(task="msrp"))).final_score(msrp) == pytest.approx(0.7)

    retrieval = report(("en-es", "test", "p_at_1", 0.2), ("es-en", "test", "p_at_1", 0.4),
                       ("es-en", "test", "mrr", 0.5), ("es-en", "seen", "p_at_1", 0.9),
                       ("fr-en", "test", "p_at_1", 0.99))  # fr-en: evaluated, not trained
    assert BilDRLRecipe(BilDRLConfig(directions=("en-es", "es-en"))).final_score(retrieval) == pytest.approx(0.3)


@pytest.mark.slow
def test_a_siamese_sweep_selects_on_dev_and_reports_the_sick_test_pearson_as_its_final_score(
        ray_session, isolated_mlflow_store):
    """The shipped Table II space, cut to one point (SiaLSTM, 15 tokens), one epoch and 100 SICK pairs per split: its
    recipe reports SICK scores and no STS, so the final score (the STS mean before) comes from the recipe."""
    space = load_space(PROJECT_ROOT / "tuning" / "spaces" / "siamese_sick_en.yaml", name="siamese-small",
                       overrides={"optim.epochs": 1, "data.max_pairs_per_split": 100,
                                  "tracking.experiment": "sweep-tests"})
    for parameter in space.parameters:
        parameter.values = parameter.values[:1]
    summary = run_sweep(space)

    assert summary.trials == 1 and summary.errors == 0
    assert math.isfinite(summary.best_dev_score) and math.isfinite(summary.best_final_score)
    assert summary.best_final_score == pytest.approx(summary.best_report.value("sick-en", "test", "pearson"))
    assert summary.best_dev_score == pytest.approx(summary.best_report.value("sick-en", "dev", "pearson"))
    client = MlflowClient(isolated_mlflow_store)
    (trial,) = _trials(client, "siamese-small")
    assert trial.info.status == "FINISHED" and trial.data.params["model.variant"] == "sialstm"
    assert trial.data.metrics[FINAL_METRIC] == pytest.approx(trial.data.metrics["sick-en/test/pearson"])
    (parent,) = [r for r in _runs(client, "siamese-small") if r.data.tags["parabit.kind"] == "sweep"]
    assert parent.data.metrics[FINAL_METRIC] == pytest.approx(summary.best_final_score)


def test_an_interrupted_sweep_closes_each_unfinished_trial_run_killed_unless_its_trial_diverged(
        write_space, isolated_mlflow_store, outputs, tmp_path):
    """Ctrl-C can make a trial fail with any error on its way down (its training stopped under it): its run is closed
    KILLED, for the resumed sweep to reopen, not left FAILED as if it failed of its own fault. Only a run with a
    divergence record (which the resumed sweep reads to fail it again without training) stays FAILED, its end time
    untouched; a run still RUNNING is closed KILLED; a finished one is left as it is."""
    space = load_space(write_space("closing", {"optim.lr": [0.1, 0.2, 0.3, 0.4]}))
    client = MlflowClient(isolated_mlflow_store)
    experiment = ensure_experiment("sweep-tests", isolated_mlflow_store)

    def trial_run(trial_id: str, status: str) -> str:
        run = client.create_run(experiment, run_name=f"closing-{trial_id}",
                                tags={tags.SWEEP: "closing", tags.KIND: "trial"})
        if status != "RUNNING":
            client.set_terminated(run.info.run_id, status=status)
        return run.info.run_id

    runs = {"stopped under its training": trial_run("a", "FAILED"), "diverged": trial_run("b", "FAILED"),
            "still running": trial_run("c", "RUNNING"), "finished": trial_run("d", "FINISHED")}
    divergence = Divergence(epoch=1, step=3, tensor="loss")
    divergence.save(sweep_directory(space) / "trials" / "closing-b")
    diverged_end = client.get_run(runs["diverged"]).info.end_time
    results = [tune.Result(metrics={"trial_id": "a"}, checkpoint=None, path=str(tmp_path),
                           error=RuntimeError("the Ray Train controller of the trial died")),
               tune.Result(metrics={"trial_id": "b"}, checkpoint=None, path=str(tmp_path),
                           error=TrainingDiverged(divergence.message("closing-b")))]

    close_trial_runs(isolated_mlflow_store, space, results, interrupted=True)

    assert {what: client.get_run(run_id).info.status for what, run_id in runs.items()} == {
        "stopped under its training": "KILLED", "diverged": "FAILED", "still running": "KILLED",
        "finished": "FINISHED"}
    assert client.get_run(runs["diverged"]).info.end_time == diverged_end


# Two sweep processes, each with its own Ray: lr 1e37 diverges in the first trial's first epoch, before its first
# report; Ctrl-C lands in the second trial, which the same command then finishes.
@pytest.mark.slow
def test_a_trial_that_diverged_before_ctrl_c_stays_failed_is_not_trained_again_and_is_in_trials_csv(
        write_space, tmp_path):
    """Ctrl-C after a trial diverged leaves that trial's run FAILED (only the runs the interruption stopped become
    KILLED); the resumed sweep does not train it again (its run is not reopened: its end time stays) and counts it
    as an error; trials.csv has a row for it, with its parameters and why it failed, though it never reported."""
    command, env, client, trial_storage = _sweep_process(write_space, tmp_path, "diverged-then-stopped",
                                                         {"optim.lr": [1e37, 0.005]})

    def diverged_run():
        return [r for r in _trials(client, "diverged-then-stopped") if float(r.data.params.get("optim.lr", "nan")) == 1e37]

    def the_other_trial_checkpointed():
        failed = [r.info.run_name for r in diverged_run() if r.info.status == "FAILED"]
        return failed and any(_checkpointed(folder) for folder in trial_storage.glob("*") if folder.name != failed[0])

    first = _ctrl_c_once(command, env, the_other_trial_checkpointed,
                         "the first trial diverged and the second checkpointed", seconds=600)
    assert first.returncode == 130, first.stderr[-3000:]
    (stopped,) = diverged_run()
    assert stopped.info.status == "FAILED"  # it failed of its own fault before the Ctrl-C
    assert [r.info.status for r in _trials(client, "diverged-then-stopped") if r.info.run_id != stopped.info.run_id
            ] == ["KILLED"], first.stderr[-6000:]

    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "resuming the interrupted sweep" in rerun.stdout and "2 trials (1 error)" in rerun.stdout
    (after,) = diverged_run()
    assert after.info.status == "FAILED" and after.info.end_time == stopped.info.end_time  # never reopened
    assert after.data.tags["mlflow.note.content"].startswith(f"training run {after.info.run_name} diverged at epoch 1")

    (parent,) = [r for r in _runs(client, "diverged-then-stopped") if r.data.tags["parabit.kind"] == "sweep"]
    table = pd.read_csv(client.download_artifacts(parent.info.run_id, "sweep/trials.csv", str(tmp_path)))
    assert sorted(table["config/optim.lr"]) == [0.005, 1e37]
    (failed_row,) = table[table["config/optim.lr"] == 1e37].to_dict("records")
    assert "diverged at epoch 1" in failed_row["error"] and math.isnan(failed_row["dev_score"])
