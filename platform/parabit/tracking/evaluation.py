"""Logging an :class:`~parabit.evaluation.EvaluationReport` to an MLflow run: metrics, table, CSV and a plot."""

from __future__ import annotations

import tempfile
from pathlib import Path

from parabit.evaluation.report import EvaluationReport
from parabit.tracking.run_tracker import RunTracker


def log_report(tracker: RunTracker, report: EvaluationReport, *, step: int | None = None, folder: str = "evaluation",
               title: str = "") -> None:
    """Every score as a metric (``sts2012/MSRpar/pearson`` ...), plus ``table.txt``, ``scores.csv`` and
    ``summary.png`` under ``folder/`` in the run's artifacts. Idempotent: logging the report again at the same step
    (a job re-run after a crash evaluates again) adds no metric value and overwrites the artifacts."""
    tracker.log_metrics_once(report.metrics(), step=step)
    tracker.log_text(report.table(), f"{folder}/table.txt")
    with tempfile.TemporaryDirectory() as scratch:
        csv = Path(scratch) / "scores.csv"
        report.frame().to_csv(csv, index=False)
        tracker.log_artifact(csv, folder)
        tracker.log_artifact(report.plot(Path(scratch) / "summary.png", title=title), folder)
