"""What a :class:`~parabit.tracking.run_tracker.RunTracker` keeps while the store is down: private copies of
artifacts waiting to upload (one :data:`STAGED_PREFIX` folder each, in the temporary directory), and its queued calls
as JSON in a spool file, with the copies moved beside it (:func:`spooled_artifacts`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from mlflow.entities import Metric, Param, RunTag

# The folders (one per file, in the temporary directory) that hold the copy of an artifact whose upload waits.
STAGED_PREFIX = "parabit-artifact-"


def is_staged(path: str) -> bool:
    return Path(path).parent.name.startswith(STAGED_PREFIX)


def discard_staged(path: str) -> None:
    """Delete the staged copy ``path`` (its own folder), now that it has landed; a caller's own file is left alone."""
    if is_staged(path):
        shutil.rmtree(Path(path).parent, ignore_errors=True)


def spooled_artifacts(spool: Path) -> Path:
    """Where the staged artifact copies of spool file ``spool`` are kept until it is replayed."""
    return spool.with_name(f"{spool.stem}-artifacts")


_ENTITIES = {"metric": Metric, "param": Param, "tag": RunTag}


def to_json(value: Any) -> Any:
    """``value`` (a call's argument) as JSON; MLflow entities become ``{"__entity__": kind, ...}``."""
    if isinstance(value, list):
        return [to_json(v) for v in value]
    for kind, entity in _ENTITIES.items():
        if isinstance(value, entity):
            fields = ("key", "value", "timestamp", "step") if kind == "metric" else ("key", "value")
            return {"__entity__": kind, **{f: getattr(value, f) for f in fields}}
    return value


def from_json(value: Any) -> Any:
    """The inverse of :func:`to_json`."""
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if isinstance(value, dict) and "__entity__" in value:
        fields = dict(value)
        return _ENTITIES[fields.pop("__entity__")](**fields)
    return value


def write_spool(spool: Path, header: dict, pending: list[tuple[str, tuple, dict]]) -> int:
    """Write a tracker's queued calls (``(method, args, kwargs)``, in order) and its ``header`` (experiment, run
    name and id, tags) to ``spool``, moving each staged artifact copy beside it (a temporary directory may be emptied
    before the store is back); returns how many calls it saved."""
    spool.parent.mkdir(parents=True, exist_ok=True)
    for method, _, kwargs in pending:
        if method == "log_artifact" and is_staged(kwargs["local_path"]):
            folder = Path(kwargs["local_path"]).parent
            kept = spooled_artifacts(spool) / folder.name
            kept.parent.mkdir(exist_ok=True)
            shutil.move(folder, kept)
            kwargs["local_path"] = str(kept / Path(kwargs["local_path"]).name)
    calls = [{"method": m, "kwargs": {k: to_json(v) for k, v in kw.items()}} for m, _, kw in pending]
    spool.write_text(json.dumps({**header, "calls": calls}, indent=1))
    return len(calls)


def read_spool(spool: Path) -> tuple[dict, list[tuple[str, tuple, dict]]]:
    """The header and the queued calls of a spool file written by :func:`write_spool`."""
    payload = json.loads(spool.read_text())
    calls = [(call["method"], (), {k: from_json(v) for k, v in call["kwargs"].items()}) for call in payload["calls"]]
    return payload, calls
