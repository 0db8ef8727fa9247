"""One MLflow run, logged so that a failing tracking server never stops the work being tracked.

Every call is attempted at once; if MLflow raises (server down, network, database locked), the call is kept
in order in a replay queue, a warning is logged, and the caller carries on. ``flush()`` (called again by
``finish()``) replays the queue, creating the run first if even that had failed. Nothing is lost as long as the
server is back before the process ends; what is still queued then is written to a JSON spool file whose path
is logged, so it can be replayed by hand.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from parabit.paths import output_root
from parabit.tracking.store import ensure_experiment, tracking_uri

log = logging.getLogger(__name__)

MAX_PARAM_LENGTH = 6000


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

    # -- life cycle -----------------------------------------------------------------------------------------
    def start(self) -> str | None:
        """Create (or re-open) the run; returns its id, or None if the store is unreachable for now."""
        self._ensure_run()
        return self.run_id

    def _ensure_run(self) -> bool:
        if self.run_id is not None:
            return True
        try:
            experiment_id = ensure_experiment(self.experiment, self.uri)
            run = self.client.create_run(experiment_id, run_name=self.run_name, tags=self.tags)
        except Exception as err:  # noqa: BLE001 - any tracking failure must not stop the caller
            log.warning("MLflow tracking store %s unreachable (%s); logging is queued and retried.", self.uri, err)
            return False
        self.run_id = run.info.run_id
        return True

    def finish(self, status: str = "FINISHED") -> bool:
        """Replay anything queued and close the run. Returns True when everything reached the store."""
        self._call("set_terminated", status=status)
        delivered = self.flush()
        if not delivered:
            self._spool()
        return delivered

    # -- logging --------------------------------------------------------------------------------------------
    def log_params(self, params: Mapping[str, Any]) -> None:
        flat = flatten_params(params)
        self._call("log_batch", params=[Param(k, v) for k, v in flat.items()])

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
            staged = Path(tempfile.mkdtemp(prefix="parabit-artifact-")) / Path(path).name
            shutil.copy2(path, staged)
            self._pending[-1][2]["local_path"] = str(staged)

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

    def flush(self) -> bool:
        """Deliver queued calls in order; stop at the first failure and keep the rest. True if none is left."""
        if not self._pending:
            return True
        if not self._ensure_run():
            return False
        while self._pending:
            method, args, kwargs = self._pending[0]
            try:
                getattr(self.client, method)(self.run_id, *args, **kwargs)
            except Exception as err:  # noqa: BLE001
                log.warning("MLflow %s failed (%s); %d call(s) queued for retry.", method, err, len(self._pending))
                return False
            self._pending.pop(0)
        return True

    def _spool(self) -> None:
        spool = output_root() / "mlflow-spool" / f"{self.run_name or 'run'}-{int(time.time())}.json"
        spool.parent.mkdir(parents=True, exist_ok=True)
        calls = [{"method": m, "kwargs": {k: _to_json(v) for k, v in kw.items()}} for m, _, kw in self._pending]
        payload = {"experiment": self.experiment, "run_name": self.run_name, "run_id": self.run_id, "calls": calls}
        spool.write_text(json.dumps(payload, indent=1))
        log.warning(
            "MLflow unreachable at the end of the run: %d call(s) saved to %s; replay with "
            "`python -m parabit.tracking.replay %s` once the server is back.", len(calls), spool, spool,
        )

    @classmethod
    def replay(cls, spool: str | Path, uri: str | None = None) -> "RunTracker":
        """Deliver the calls saved in a spool file (see :meth:`finish`) to the tracking store."""
        payload = json.loads(Path(spool).read_text())
        tracker = cls(payload["experiment"], payload["run_name"], run_id=payload["run_id"], uri=uri)
        for call in payload["calls"]:
            kwargs = {k: _from_json(v) for k, v in call["kwargs"].items()}
            tracker._pending.append((call["method"], (), kwargs))
        if not tracker.flush():
            raise ConnectionError(f"tracking store {tracker.uri} still unreachable; {spool} kept")
        Path(spool).unlink()
        return tracker


_ENTITIES = {"metric": Metric, "param": Param, "tag": RunTag}


def _to_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    for kind, entity in _ENTITIES.items():
        if isinstance(value, entity):
            fields = ("key", "value", "timestamp", "step") if kind == "metric" else ("key", "value")
            return {"__entity__": kind, **{f: getattr(value, f) for f in fields}}
    return value


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if isinstance(value, dict) and "__entity__" in value:
        fields = dict(value)
        return _ENTITIES[fields.pop("__entity__")](**fields)
    return value
