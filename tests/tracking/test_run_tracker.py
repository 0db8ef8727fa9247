"""RunTracker against a real SQLite store, and against a tracking server that is not there."""

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE
from mlflow.tracking import MlflowClient

from parabit.cli import cli, run_command
from parabit.evaluation.report import EvaluationReport, Score
from parabit.tracking import RunTracker, flatten_params
from parabit.tracking.outage import TrackingRefused, is_refusal
from parabit.tracking.store import tracking_uri


def test_flatten_params():
    assert flatten_params({"model": {"dim": 50, "encoder": "avg"}, "seed": 1}) == {
        "model.dim": "50", "model.encoder": "avg", "seed": "1"}


def test_logs_params_metrics_and_artifacts_to_the_store(tmp_path):
    tracker = RunTracker("test-tracker", "unit", tags={"parabit.kind": "test"})
    run_id = tracker.start()
    tracker.log_params({"a": {"b": 1}})
    tracker.log_metrics({"loss": 0.5}, step=1)
    tracker.log_metrics({"loss": 0.25}, step=2)
    (tmp_path / "note.txt").write_text("hello")
    tracker.log_artifact(tmp_path / "note.txt", "notes")
    assert tracker.finish() is True
    client = MlflowClient(tracking_uri())
    run = client.get_run(run_id)
    assert run.data.params == {"a.b": "1"} and run.data.tags["parabit.kind"] == "test"
    assert [m.value for m in client.get_metric_history(run_id, "loss")] == [0.5, 0.25]
    assert [a.path for a in client.list_artifacts(run_id, "notes")] == ["notes/note.txt"]
    assert run.info.status == "FINISHED"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_server_never_raises_and_nothing_is_lost(monkeypatch, tmp_path, isolated_mlflow_store):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path))
    tracker = RunTracker("test-tracker", "offline")
    assert tracker.start() is None
    tracker.log_params({"lr": 0.1})
    for step in range(3):
        tracker.log_metrics({"loss": 1.0 / (step + 1)}, step=step)
    (tmp_path / "table.txt").write_text("scores")
    tracker.log_artifact(tmp_path / "table.txt", "evaluation")
    (tmp_path / "table.txt").unlink()  # the caller's copy may go away; the queued one must not
    assert tracker.pending == 5  # params, three metric batches, the artifact
    assert tracker.finish() is False
    spools = list((tmp_path / "mlflow-spool").glob("offline-*.json"))
    assert len(spools) == 1

    # The server is "back" (here: the real store of this test session): replaying delivers every call.
    monkeypatch.setenv("MLFLOW_TRACKING_URI", isolated_mlflow_store)
    replayed = RunTracker.replay(spools[0])
    client = MlflowClient(isolated_mlflow_store)
    assert [m.value for m in client.get_metric_history(replayed.run_id, "loss")] == pytest.approx([1.0, 0.5, 1 / 3])
    assert client.get_run(replayed.run_id).data.params == {"lr": "0.1"}
    assert [a.path for a in client.list_artifacts(replayed.run_id, "evaluation")] == ["evaluation/table.txt"]
    assert client.get_run(replayed.run_id).info.status == "FINISHED"
    assert not spools[0].exists()


def test_default_store_is_the_project_sqlite_file(monkeypatch):
    from parabit.paths import PROJECT_ROOT

    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    assert tracking_uri() == f"sqlite:///{PROJECT_ROOT / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////elsewhere/m.db")
    assert tracking_uri() == "sqlite:////elsewhere/m.db"


def test_a_refused_write_fails_loudly_and_is_never_spooled(tmp_path, monkeypatch, isolated_mlflow_store):
    """A param logged again with another value is the caller's bug, not an outage: no queue, no spool, no replay."""
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path))
    tracker = RunTracker("test-tracker", "refused")
    tracker.start()
    tracker.log_params({"best": 1})
    with pytest.raises(TrackingRefused, match=r"MLflow refused log_batch on run [0-9a-f]{32}: .*Changing param values"):
        tracker.log_params({"best": 2})
    assert tracker.pending == 0
    tracker.log_metrics({"after": 1.0})  # the tracker still works for the calls that are right
    assert tracker.finish() is True and not (tmp_path / "mlflow-spool").exists()
    run = MlflowClient(isolated_mlflow_store).get_run(tracker.run_id)
    assert run.data.params == {"best": "1"} and run.data.metrics == {"after": 1.0}


def test_outages_and_refusals_are_told_apart():
    outage = MlflowException("API request to http://127.0.0.1:9/... failed with exception HTTPConnectionPool")
    refusal = MlflowException("Changing param values is not allowed", error_code=INVALID_PARAMETER_VALUE)
    assert not is_refusal(outage) and is_refusal(refusal) and not is_refusal(ConnectionError("down"))


def test_closing_marks_the_run_by_how_the_block_ended(isolated_mlflow_store):
    client = MlflowClient(isolated_mlflow_store)
    statuses = {}
    for name, error in (("ok", None), ("failed", ValueError), ("stopped", KeyboardInterrupt), ("killed", SystemExit)):
        tracker = RunTracker("test-tracker", name)
        tracker.start()
        with contextlib.suppress(BaseException), tracker.closing():
            if error is not None:
                raise error
        statuses[name] = client.get_run(tracker.run_id).info.status
    assert statuses == {"ok": "FINISHED", "failed": "FAILED", "stopped": "KILLED", "killed": "KILLED"}


def test_a_reopened_run_is_running_again(isolated_mlflow_store):
    first = RunTracker("test-tracker", "reopened")
    first.start()
    first.finish("KILLED")
    again = RunTracker("test-tracker", "reopened", run_id=first.run_id)
    again.start()
    assert MlflowClient(isolated_mlflow_store).get_run(first.run_id).info.status == "RUNNING"
    again.finish()


def test_every_run_carries_the_system_tags_and_its_input_dataset(isolated_mlflow_store):
    tracker = RunTracker("test-tracker", "lineage")
    tracker.start()
    tracker.log_dataset("pairs_parquet", digest="abc123", source="/data/pairs.parquet",
                        profile={"rows": 10, "pipeline_runs": ["r1"]})
    tracker.finish()
    run = MlflowClient(isolated_mlflow_store).get_run(tracker.run_id)
    assert len(run.data.tags["mlflow.source.git.commit"]) == 40
    assert run.data.tags["parabit.git.dirty"] in ("true", "false") and run.data.tags["mlflow.user"]
    assert run.data.tags["parabit.command"] and run.data.tags["mlflow.source.type"] == "LOCAL"
    (dataset,) = run.inputs.dataset_inputs
    assert (dataset.dataset.name, dataset.dataset.digest) == ("pairs_parquet", "abc123")
    assert json.loads(dataset.dataset.profile) == {"rows": 10, "pipeline_runs": ["r1"]}
    assert json.loads(dataset.dataset.source) == {"uri": "/data/pairs.parquet"}


def test_two_runs_declaring_one_new_dataset_at_once_both_get_it(isolated_mlflow_store):
    """The store's check-then-insert of a dataset races when two runs (concurrent trials or reproduction cells)
    declare the same new one: the later insert breaks the unique key. Here the other run wins the race in between."""
    first, second = RunTracker("test-tracker", "race-a"), RunTracker("test-tracker", "race-b")
    first.start()
    second.start()
    log_inputs = second.client.log_inputs
    calls = []

    def lose_the_race(run_id, inputs):
        calls.append(run_id)
        if len(calls) == 1:  # the other run inserts the dataset between our check and our insert
            first.client.log_inputs(first.run_id, inputs)
            raise MlflowException("(sqlite3.IntegrityError) UNIQUE constraint failed: datasets.experiment_id, "
                                  "datasets.name, datasets.digest", INVALID_PARAMETER_VALUE)
        return log_inputs(run_id, inputs)

    second.client.log_inputs = lose_the_race
    second.log_dataset("shared", digest="d1", source="/data/shared.parquet", profile={"rows": 1})
    for tracker in (first, second):
        tracker.finish()
        (dataset,) = MlflowClient(isolated_mlflow_store).get_run(tracker.run_id).inputs.dataset_inputs
        assert (dataset.dataset.name, dataset.dataset.digest) == ("shared", "d1")
    assert calls == [second.run_id, second.run_id]


def test_log_history_writes_only_the_missing_steps(isolated_mlflow_store):
    """The driver's catch-up after live logging: every epoch ends up in the run exactly once."""
    tracker = RunTracker("test-tracker", "history")
    run_id = tracker.start()
    history = [{"epoch": e, "loss": 1.0 / e} for e in (1, 2, 3, 4)]
    tracker.log_metrics(history[0], step=1)   # logged live
    tracker.log_metrics(history[2], step=3)   # logged live; epochs 2 and 4 were lost with a worker
    tracker.log_history(history)
    tracker.log_history(history)  # idempotent
    assert tracker.finish() is True
    client = MlflowClient(isolated_mlflow_store)
    assert sorted(m.step for m in client.get_metric_history(run_id, "loss")) == [1, 2, 3, 4]
    assert sorted(m.step for m in client.get_metric_history(run_id, "epoch")) == [1, 2, 3, 4]
    assert tracker.logged_steps("loss") == {1, 2, 3, 4}


def test_logged_before_sums_what_earlier_attempts_of_a_resumed_run_logged(isolated_mlflow_store):
    """A resumed run's total time counts the epochs its killed first attempt trained (their logged seconds)."""
    first = RunTracker("test-tracker", "resumed")
    run_id = first.start()
    for epoch, seconds in ((1, 30.0), (2, 32.0)):
        first.log_metrics({"epoch_seconds": seconds, "dev_seconds": 2.0}, step=epoch)
    time.sleep(0.01)  # metric stamps are milliseconds
    resumed_at = time.time()
    time.sleep(0.01)
    resumed = RunTracker("test-tracker", "resumed", run_id=run_id)
    resumed.start()
    resumed.log_metrics({"epoch_seconds": 31.0, "dev_seconds": 2.0}, step=3)
    assert resumed.logged_before(("epoch_seconds", "dev_seconds"), resumed_at) == 66.0
    assert resumed.logged_before(("epoch_seconds", "dev_seconds"), time.time() + 1) == 99.0
    assert RunTracker("test-tracker", "new").logged_before(("epoch_seconds",), time.time()) == 0.0


def test_a_down_server_is_retried_after_a_pause_not_on_every_call(monkeypatch, tmp_path):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path))
    tracker = RunTracker("test-tracker", "paused", uri=f"http://127.0.0.1:{_closed_port()}")
    attempts, connect = [], tracker._ensure_run
    monkeypatch.setattr(tracker, "_ensure_run", lambda: attempts.append(1) or connect())  # counts real attempts
    tracker.log_metrics({"loss": 1.0}, step=1)  # fails: the next automatic attempt waits RETRY_INTERVAL_S
    for step in range(2, 6):
        tracker.log_metrics({"loss": 1.0}, step=step)
        tracker.flush()
    assert len(attempts) == 1 and tracker.pending == 5
    assert tracker.finish() is False and len(attempts) == 2  # finish always tries


def test_a_report_logged_again_adds_no_metric_value(isolated_mlflow_store):
    """A job re-run after a crash evaluates again: its report lands in the run once (artifacts overwritten)."""
    report = EvaluationReport([Score("sts2016", "mean", "pearson", 0.5, 10), Score("sts2016", "news", "pearson", 0.4, 5)])
    tracker = RunTracker("test-tracker", "report-twice")
    run_id = tracker.start()
    tracker.log_report(report)
    assert tracker.logged_value("sts2016/mean/pearson") == 0.5
    tracker.log_metrics_once({"sts2016/news/pearson": 0.9, "final": 1.0})  # only the missing metric is written
    tracker.log_report(report)
    assert tracker.finish() is True
    client = MlflowClient(isolated_mlflow_store)
    assert {key: [m.value for m in client.get_metric_history(run_id, key)]
            for key in ("sts2016/mean/pearson", "sts2016/news/pearson", "final")} == {
        "sts2016/mean/pearson": [0.5], "sts2016/news/pearson": [0.4], "final": [1.0]}
    assert {a.path for a in client.list_artifacts(run_id, "evaluation")} == {
        "evaluation/table.txt", "evaluation/scores.csv", "evaluation/summary.png"}
    assert tracker.logged_value("never-logged") is None


def _store_refusing_uploads(tmp_path, experiment: str):
    """Experiment ``experiment`` in the real MLflow store of the test, with an artifact location that cannot be
    written (a file stands where its folder must be): every upload fails. Deleting the returned file mends it."""
    blocker = tmp_path / "artifacts-blocked"
    blocker.write_text("a file where the artifact folder must be")
    MlflowClient(tracking_uri()).create_experiment(experiment, artifact_location=(blocker / "runs").as_uri())
    return blocker


def test_an_upload_that_had_to_wait_leaves_no_copy_once_it_lands(tmp_path, monkeypatch, isolated_mlflow_store):
    staging = tmp_path / "tmp"
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))  # where the tracker stages its copies
    blocker = _store_refusing_uploads(tmp_path, "uploads-refused-then-mended")
    tracker = RunTracker("uploads-refused-then-mended", "lands-later")
    run_id = tracker.start()
    (tmp_path / "table.txt").write_text("scores")
    tracker.log_artifact(tmp_path / "table.txt", "evaluation")
    assert [path.name for path in staging.glob("parabit-artifact-*/*")] == ["table.txt"]  # refused: staged

    blocker.unlink()  # the store takes uploads again
    assert tracker.finish() is True
    assert [a.path for a in MlflowClient(isolated_mlflow_store).list_artifacts(run_id, "evaluation")] == [
        "evaluation/table.txt"]
    assert not list(staging.iterdir())  # landed: its copy is gone


def test_an_upload_that_cannot_land_before_the_process_exits_is_reported_with_its_replay_command(
        tmp_path, monkeypatch, isolated_mlflow_store):
    """A process that ends with an upload the store refused (here without closing its run, as a crash would) leaves
    one line naming the `parabit replay` command, and no copy in the temporary directory; that command lands it."""
    blocker = _store_refusing_uploads(tmp_path, "uploads-refused")
    staging, outputs = tmp_path / "tmp", tmp_path / "outputs"
    staging.mkdir()
    (tmp_path / "summary.png").write_bytes(b"png")
    script = textwrap.dedent("""
        import sys
        from parabit.output import configure_output
        from parabit.tracking import RunTracker

        configure_output(verbose=False)
        tracker = RunTracker("uploads-refused", "never-lands")
        tracker.start()
        tracker.log_artifact(sys.argv[1], "evaluation")
    """)
    env = {**os.environ, "MLFLOW_TRACKING_URI": isolated_mlflow_store, "PARABIT_OUTPUT": str(outputs),
           "TMPDIR": str(staging)}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "summary.png")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    (report,) = [line for line in done.stderr.splitlines() if "parabit replay" in line]
    (spool,) = (outputs / "mlflow-spool").glob("never-lands-*.json")
    assert report.endswith(f"land them with `parabit replay {spool}` once the store is back")
    assert not list(staging.iterdir())  # the copy waits beside its spool file, not in the temporary directory

    blocker.unlink()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", isolated_mlflow_store)
    assert run_command(cli, ["replay", str(spool)]) == 0
    assert not list((outputs / "mlflow-spool").iterdir())  # spool file and copy gone once landed
    client = MlflowClient(isolated_mlflow_store)
    (run,) = client.search_runs([client.get_experiment_by_name("uploads-refused").experiment_id])
    assert [a.path for a in client.list_artifacts(run.info.run_id, "evaluation")] == ["evaluation/summary.png"]
