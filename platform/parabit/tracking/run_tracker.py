"""One MLflow run, logged so that a failing tracking server never stops the work being tracked.

Every call is attempted at once; while the store cannot be reached (an outage, :mod:`parabit.tracking.outage`), the
call waits in order in a replay queue and the caller carries on. A call the store *refuses* is a bug in the caller:
it raises :class:`~parabit.tracking.outage.TrackingRefused` at once and is never spooled. A server that refuses the
login or the user (:mod:`parabit.tracking.access`) before the run exists raises
:class:`~parabit.tracking.access.TrackingAccessDenied` from :meth:`RunTracker.start`: nothing was written, and nothing
has been trained yet; once the run exists (a password changed, a role taken away mid-run) such calls are queued and
spooled like an outage, so ``parabit replay`` lands them with a login that may write. ``flush()`` (called again by
``finish()``) replays the queue, creating the run first if even that had failed; after a failure, automatic retries
wait :data:`~parabit.tracking.outage.RETRY_INTERVAL_S` (a down server costs seconds per attempt, and the work must not
pay that every step), while ``finish()`` always tries. Nothing is lost as long as the server is back before the
process ends; what is still queued then is written to a JSON spool file, reported in one line with the command that
lands it (``parabit replay SPOOL``).

An artifact whose upload has to wait is copied first (:mod:`parabit.tracking.spool`), so the caller may delete its
own file. Each copy is deleted as soon as its upload lands; at the end of the process (a
run left without ``finish()`` included) every copy still waiting is tried once more, and what cannot land then moves
beside its spool file and is reported with it: no copy is left behind unreported.

Per-step metrics that other processes log live (Ray Train's rank-0 worker) can be lost with those processes, or
logged twice when a killed worker repeats an epoch; :meth:`RunTracker.log_history` is the driver's catch-up: it
writes exactly the steps the run does not have yet, when the store is reachable, so each epoch appears once.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import shutil
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from parabit.paths import output_root
from parabit.tracking import tags as tag_names
from parabit.tracking.access import access_denied, is_access_error
from parabit.tracking.lineage import system_tags
from parabit.tracking.outage import (RETRY_INTERVAL_S, TrackingRefused, brief, is_refusal, store_reached,
                                     store_unreachable)
from parabit.tracking.spool import (STAGED_PREFIX, discard_staged, is_staged, read_spool, spooled_artifacts,
                                    write_spool)
from parabit.tracking.store import ensure_experiment, tracking_uri

if TYPE_CHECKING:
    from parabit.evaluation.report import EvaluationReport

log = logging.getLogger(__name__)

MAX_PARAM_LENGTH = 6000

# Two runs declaring one new dataset at once (concurrent trials or reproduction cells) race in the store's
# check-then-insert: the second insert breaks the datasets table's key, as SQLite and as PostgreSQL word it.
DATASET_KEY_VIOLATIONS = ("UNIQUE constraint failed: datasets", 'violates unique constraint "dataset_pk"')


def flatten_params(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested config to MLflow params: ``{"model": {"dim": 50}}`` → ``{"model.dim": "50"}``."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_params(value, prefix=f"{name}."))
        else:
            flat[name] = str(value)[:MAX_PARAM_LENGTH]
    return flat


class RunTracker:
    """Logs params, metrics, tags and artifacts to one MLflow run without ever raising.

    Create it with an experiment name (and optionally an existing ``run_id`` to continue a run), call
    ``start()``, log, then ``finish()``. ``run_id`` is None only while the tracking store is unreachable.
    """

    def __init__(
        self,
        experiment: str,
        run_name: str | None = None,
        *,
        run_id: str | None = None,
        tags: Mapping[str, str] | None = None,
        parent_run_id: str | None = None,
        uri: str | None = None,
    ):
        self.experiment = experiment
        self.run_name = run_name
        self.run_id = run_id
        self.tags = dict(tags or {})
        if parent_run_id:
            self.tags["mlflow.parentRunId"] = parent_run_id
        self.uri = uri or tracking_uri()
        self.client = MlflowClient(self.uri)
        self._pending: list[tuple[str, tuple, dict]] = []
        self._retry_at = 0.0  # no automatic delivery attempt before this time.monotonic()
        self.spool_file: Path | None = None  # where finish() saved what the store did not take, if it had to

    # -- life cycle -----------------------------------------------------------------------------------------
    def start(self) -> str | None:
        """Create the run, or re-open the one given (marked ``RUNNING`` again: a re-run takes over the run a killed
        process left behind); returns its id, or None if the store is unreachable for now."""
        if self.run_id is not None:
            self._call("update_run", status="RUNNING")
        self._ensure_run()
        return self.run_id

    def _ensure_run(self) -> bool:
        if self.run_id is not None:
            return True
        try:
            experiment_id = ensure_experiment(self.experiment, self.uri)
            run = self.client.create_run(experiment_id, run_name=self.run_name, tags={**system_tags(), **self.tags})
        except Exception as err:  # noqa: BLE001 - any tracking failure must not stop the caller, but a refused login
            if is_access_error(err):
                raise access_denied(self.uri, err.error_code, f"create runs in experiment {self.experiment!r}") \
                    from None
            store_unreachable(self.uri, err, len(self._pending))
            self._retry_at = time.monotonic() + RETRY_INTERVAL_S
            return False
        store_reached(self.uri)
        self.run_id = run.info.run_id
        return True

    @contextlib.contextmanager
    def closing(self):
        """Close the run however the block ends: ``FINISHED``, ``KILLED`` on Ctrl-C / SIGTERM (``KeyboardInterrupt``,
        ``SystemExit``), ``FAILED`` on any other exception (which is re-raised). No exit leaves it ``RUNNING``."""
        try:
            yield self
        except (KeyboardInterrupt, SystemExit):
            self.finish("KILLED")
            raise
        except BaseException:
            self.finish("FAILED")
            raise
        self.finish()

    def finish(self, status: str = "FINISHED") -> bool:
        """Replay anything queued and close the run. Returns True when everything reached the store; otherwise the
        rest is saved to :attr:`spool_file` and reported in one line with its ``parabit replay`` command."""
        self._call("set_terminated", status=status)
        delivered = self.flush(force=True)
        if not delivered:
            self._spool()
        return delivered

    # -- logging --------------------------------------------------------------------------------------------
    def log_params(self, params: Mapping[str, Any]) -> None:
        flat = flatten_params(params)
        self._call("log_batch", params=[Param(k, v) for k, v in flat.items()])

    def log_history(self, history: list[Mapping[str, float]], step_key: str = "epoch") -> None:
        """Log each entry of ``history`` (one dict of metrics per step, the step in ``entry[step_key]``) for the
        metrics and steps the run does not have yet: idempotent, so it completes whatever live logging missed
        without repeating a step. Deferred like any call while the store is unreachable (and spooled with it)."""
        self._call("log_missing_steps", history=[dict(entry) for entry in history], step_key=step_key)

    def log_metrics_once(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Like :meth:`log_metrics`, for the metrics the run does not hold at ``step`` yet: a result logged again
        (a job re-run after a crash evaluates again) is not duplicated. Deferred like any call."""
        self._call("log_missing_metrics", metrics={k: float(v) for k, v in metrics.items()}, step=step or 0)

    def logged_value(self, key: str) -> float | None:
        """The latest value of metric ``key`` in the run; None if it has none, or that cannot be known now."""
        data = self._run_data()
        return data.metrics.get(key) if data is not None else None

    def logged_tag(self, key: str) -> str | None:
        """Tag ``key`` of the run; None if it has none, or that cannot be known now."""
        data = self._run_data()
        return data.tags.get(key) if data is not None else None

    def pipeline_runs(self, output: str) -> list[str]:
        """The ids of the pipeline runs in this store whose output is ``output`` (tag ``parabit.pipeline_output``):
        lineage from a run's data back to the runs that made it. Empty while the store is down (best effort)."""
        try:
            experiments = [e.experiment_id for e in self.client.search_experiments()]
            runs = self.client.search_runs(experiments, f"tags.`{tag_names.PIPELINE_OUTPUT}` = '{output}'") \
                if experiments else []
        except Exception as err:  # noqa: BLE001 - lineage is best effort while the store is down
            store_unreachable(self.uri, err, len(self._pending))
            log.info("could not look up the pipeline run of %s (%s)", output, brief(err))
            return []
        return [run.info.run_id for run in runs]

    def _run_data(self):
        if self.run_id is None or not self.flush(force=True):
            return None
        try:
            return self.client.get_run(self.run_id).data
        except Exception as err:  # noqa: BLE001
            store_unreachable(self.uri, err, len(self._pending))
            return None

    def logged_before(self, keys: Sequence[str], before: float) -> float:
        """The sum of metrics ``keys`` over the steps the run logged before ``before`` (``time.time()`` seconds),
        each step's last value: what earlier processes recorded of a resumed run. 0.0 when it has none, or that cannot
        be known now."""
        total = 0.0
        for key in keys:
            history = self._metric_history(key)
            if history is None:
                return 0.0
            last = {m.step: m.value for m in sorted(history, key=lambda m: m.timestamp) if m.timestamp < before * 1000}
            total += sum(last.values())
        return total

    def logged_steps(self, key: str) -> set[int] | None:
        """The steps at which metric ``key`` is already in the run; None if that cannot be known now."""
        history = self._metric_history(key)
        return {metric.step for metric in history} if history is not None else None

    def _metric_history(self, key: str) -> list[Metric] | None:
        if self.run_id is None:
            return None
        try:
            return self.client.get_metric_history(self.run_id, key)
        except Exception as err:  # noqa: BLE001
            store_unreachable(self.uri, err, len(self._pending))
            return None

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        stamp = int(time.time() * 1000)
        batch = [Metric(k, float(v), stamp, step or 0) for k, v in metrics.items()]
        # MLflow accepts at most 1000 metrics per batch call.
        for start in range(0, len(batch), 1000):
            self._call("log_batch", metrics=batch[start:start + 1000])

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        self._call("log_batch", tags=[RunTag(k, str(v)) for k, v in tags.items()])

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        """Upload a file. If it has to wait for the store, a private copy is queued (callers may delete theirs)."""
        if not self._call("log_artifact", local_path=str(path), artifact_path=artifact_path):
            staged = Path(tempfile.mkdtemp(prefix=STAGED_PREFIX)) / Path(path).name
            shutil.copy2(path, staged)
            self._pending[-1][2]["local_path"] = str(staged)
            _STAGING.add(self)

    def log_dataset(self, name: str, digest: str, source: str, profile: Mapping[str, Any],
                    context: str = "training") -> None:
        """Declare a dataset the run read (``mlflow.log_input``): MLflow's UI then shows dataset → run. ``source``
        is where it lives, ``profile`` what it holds (rows, the run that produced it, ...)."""
        self._call("log_dataset_input", name=name, digest=digest, source=source, profile=dict(profile),
                   context=context)

    def log_report(self, report: "EvaluationReport", *, step: int | None = None, folder: str = "evaluation",
                   title: str = "") -> None:
        """Every score as a metric (``sts2012/MSRpar/pearson`` ...), plus ``table.txt``, ``scores.csv`` and
        ``summary.png`` under ``folder/`` in the run's artifacts. Idempotent: logging the report again at the same
        step (a job re-run after a crash evaluates again) adds no metric value and overwrites the artifacts."""
        with tempfile.TemporaryDirectory() as scratch:
            metrics, files = report.metrics(), report.write(scratch, title=title)
            self.log_metrics_once(metrics, step=step)
            for path in files:
                self.log_artifact(path, folder)

    def log_text(self, text: str, artifact_file: str) -> None:
        self._call("log_text", text=text, artifact_file=artifact_file)

    def log_dict(self, payload: dict, artifact_file: str) -> None:
        self._call("log_dict", dictionary=payload, artifact_file=artifact_file)

    @property
    def pending(self) -> int:
        """How many calls are waiting for the tracking store."""
        return len(self._pending)

    # -- delivery -------------------------------------------------------------------------------------------
    def _call(self, method: str, **kwargs) -> bool:
        """Queue a client call behind any earlier ones and try to deliver; True if it reached the store."""
        self._pending.append((method, (), kwargs))
        return len(self._pending) == 1 and self.flush()

    def flush(self, force: bool = False) -> bool:
        """Deliver queued calls in order; stop at the first failure and keep the rest. True if none is left.

        Within :data:`~parabit.tracking.outage.RETRY_INTERVAL_S` of a failure nothing is attempted unless ``force``."""
        if not self._pending:
            return True
        if not force and time.monotonic() < self._retry_at:
            return False
        if not self._ensure_run():
            return False
        while self._pending:
            method, args, kwargs = self._pending[0]
            target = self if method in self._OWN_CALLS else self.client
            try:
                getattr(target, method)(self.run_id, *args, **kwargs)
            except Exception as err:  # noqa: BLE001 - an outage is queued; a refusal re-raised below
                if is_refusal(err) and not is_access_error(err):
                    self._pending.pop(0)
                    if method == "log_artifact":
                        discard_staged(kwargs["local_path"])
                    raise TrackingRefused(f"MLflow refused {method} on run {self.run_id}: {err}") from err
                store_unreachable(self.uri, err, len(self._pending))
                self._retry_at = time.monotonic() + RETRY_INTERVAL_S
                return False
            self._pending.pop(0)
            if method == "log_artifact":
                discard_staged(kwargs["local_path"])
        store_reached(self.uri)
        return True

    @property
    def staged(self) -> list[Path]:
        """The copies of artifacts waiting for the store (see the module docstring)."""
        return [Path(kwargs["local_path"]) for method, _, kwargs in self._pending
                if method == "log_artifact" and is_staged(kwargs["local_path"])]

    # Queued calls carried out by the tracker itself (a few client calls each), not by the MLflow client.
    _OWN_CALLS = frozenset({"log_missing_steps", "log_missing_metrics", "log_dataset_input"})

    def log_dataset_input(self, run_id: str, name: str, digest: str, source: str, profile: dict,
                          context: str) -> None:
        dataset = Dataset(name=name, digest=digest, source_type="local", source=json.dumps({"uri": source}),
                          profile=json.dumps(profile))
        inputs = [DatasetInput(dataset, [InputTag("mlflow.data.context", context)])]
        try:
            self.client.log_inputs(run_id, inputs)
        except MlflowException as err:
            # The race of DATASET_KEY_VIOLATIONS: both runs saw the dataset missing. By now it exists: link to it.
            if not any(violation in str(err) for violation in DATASET_KEY_VIOLATIONS):
                raise
            self.client.log_inputs(run_id, inputs)

    def log_missing_steps(self, run_id: str, history: list[dict], step_key: str) -> None:
        self._log_missing(run_id, [(int(entry[step_key]), entry) for entry in history])

    def log_missing_metrics(self, run_id: str, metrics: dict, step: int) -> None:
        self._log_missing(run_id, [(step, metrics)])

    def _log_missing(self, run_id: str, rows: list[tuple[int, Mapping[str, float]]]) -> None:
        """Log each (step, metrics) row's metrics that the run does not hold at that step."""
        stamp = int(time.time() * 1000)
        present = self.client.get_run(run_id).data.metrics  # a metric never logged needs no history call
        keys = sorted({key for _, metrics in rows for key in metrics} & present.keys())
        have = {key: {m.step for m in self.client.get_metric_history(run_id, key)} for key in keys}
        missing = [Metric(key, float(value), stamp, step)
                   for step, metrics in rows for key, value in metrics.items() if step not in have.get(key, ())]
        for start in range(0, len(missing), 1000):
            self.client.log_batch(run_id, metrics=missing[start:start + 1000])

    def _spool(self) -> None:
        """Save the queue to a spool file (:func:`~parabit.tracking.spool.write_spool`) and report it in one line
        with the command that lands it."""
        spool = output_root() / "mlflow-spool" / f"{self.run_name or 'run'}-{int(time.time())}.json"
        staged = len(self.staged)
        header = {"experiment": self.experiment, "run_name": self.run_name, "run_id": self.run_id, "tags": self.tags}
        calls = write_spool(spool, header, self._pending)
        self._pending.clear()
        self.spool_file = spool
        artifacts = f", {staged} artifact file(s) among them," if staged else ""
        log.warning("MLflow run %s (%s) did not reach %s: %d call(s)%s saved to %s; land them with `parabit replay "
                    "%s` once the store is back", self.run_name, self.run_id or "not created", self.uri, calls,
                    artifacts, spool, spool)

    @classmethod
    def replay(cls, spool: str | Path, uri: str | None = None) -> "RunTracker":
        """Deliver the calls saved in a spool file (see :meth:`finish`) to the tracking store."""
        header, calls = read_spool(Path(spool))
        tracker = cls(header["experiment"], header["run_name"], run_id=header["run_id"], tags=header.get("tags"),
                      uri=uri)
        tracker._pending.extend(calls)
        if not tracker.flush(force=True):
            raise ConnectionError(f"tracking store {tracker.uri} still unreachable; {spool} kept")
        Path(spool).unlink()
        shutil.rmtree(spooled_artifacts(Path(spool)), ignore_errors=True)  # its copies, each deleted as it landed
        return tracker


# The trackers that staged an artifact copy: at the end of the process each copy still waiting lands or is reported.
_STAGING: "weakref.WeakSet[RunTracker]" = weakref.WeakSet()


@atexit.register
def _land_staged_artifacts() -> None:
    """Before the process exits: every tracker still holding staged copies (a run never finished, or one whose
    store came back since) tries its queue once more; what cannot land is spooled and reported (:meth:`_spool`)."""
    for tracker in list(_STAGING):
        if not tracker.staged:
            continue
        try:
            if not tracker.flush(force=True):
                tracker._spool()
        except Exception as err:  # noqa: BLE001 - one tracker's refusal must not stop the others' copies landing
            log.warning("MLflow run %s: its staged artifacts could not be delivered (%s)", tracker.run_name, err)
            tracker._spool()
