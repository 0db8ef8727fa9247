"""Bao et al.'s Table I and Table II from the finished runs in MLflow (the latest run of each name)."""

from __future__ import annotations

from mlflow.tracking import MlflowClient

from parabit.tracking.store import tracking_uri

MODELS = (("sialstm", "SiaLSTM (Baseline1)"), ("siabilstm", "SiaBiLSTM (Baseline2)"), ("attsialstm", "AttSiaLSTM"),
          ("attsiabilstm", "AttSiaBiLSTM"))
BASELINE = {"attsialstm": "sialstm", "attsiabilstm": "siabilstm"}


def finished_runs(experiment: str = "parabit-siamese", uri: str | None = None) -> dict[str, dict[str, float]]:
    """``{run name: metrics}`` of the finished runs of ``experiment`` (the newest run of a name wins)."""
    client = MlflowClient(uri or tracking_uri())
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return {}
    runs = client.search_runs([found.experiment_id], "attributes.status = 'FINISHED'", order_by=["start_time ASC"])
    return {run.info.run_name: run.data.metrics for run in runs}


def _value(runs: dict, name: str, metric: str) -> float | None:
    return runs.get(name, {}).get(metric)


def _cell(value: float | None, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def table_one(runs: dict, prefix: str = "siamese") -> str:
    """Pearson r and MSE ([0, 1] scale, as the paper) on SICK EN / ES / EN-ES test; MSRP test accuracy and F1; the
    gain of each attentive model over its baseline."""
    columns = [("sick-en", "EN"), ("sick-es", "ES"), ("sick-en-es", "EN-ES")]
    header = ("| model | " + " | ".join(f"{c} r | {c} MSE" for _, c in columns)
              + " | MSRP acc | MSRP F1 |\n|---|" + "---|" * (2 * len(columns) + 2))
    lines = [header]
    for variant, label in MODELS:
        cells = []
        for task, _ in columns:
            name = f"{prefix}-{task}-{variant}"
            cells += [_cell(_value(runs, name, f"{task}/test/pearson"), ".4f"),
                      _cell(_value(runs, name, f"{task}/test/mse01"), ".4f")]
        accuracy = _value(runs, f"{prefix}-msrp-{variant}", "msrp/test/accuracy")
        cells += [_cell(None if accuracy is None else 100 * accuracy, ".2f") + ("%" if accuracy is not None else ""),
                  _cell(_value(runs, f"{prefix}-msrp-{variant}", "msrp/test/f1"), ".3f")]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for variant, baseline in BASELINE.items():
        cells = []
        for task, _ in columns:
            ours = _value(runs, f"{prefix}-{task}-{variant}", f"{task}/test/pearson")
            base = _value(runs, f"{prefix}-{task}-{baseline}", f"{task}/test/pearson")
            cells += [_cell(None if ours is None or base is None else ours - base, "+.4f"), ""]
        ours = _value(runs, f"{prefix}-msrp-{variant}", "msrp/test/accuracy")
        base = _value(runs, f"{prefix}-msrp-{baseline}", "msrp/test/accuracy")
        cells += [_cell(None if ours is None or base is None else 100 * (ours - base), "+.2f"), ""]
        lines.append(f"| increase {dict(MODELS)[variant]} over {dict(MODELS)[baseline]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table_two(runs: dict, task: str = "sick-en", lengths: tuple[int, ...] = (15, 20, 25), default: int = 25,
              prefix: str = "siamese") -> str:
    """Test Pearson r by maximum sentence length (the runs named ``...-len<L>``; ``default`` is the plain run)."""
    lines = ["| model | " + " | ".join(f"len {length}" for length in lengths) + " |\n|---|" + "---|" * len(lengths)]
    for variant, label in MODELS:
        cells = []
        for length in lengths:
            name = f"{prefix}-{task}-{variant}" + ("" if length == default else f"-len{length}")
            cells.append(_cell(_value(runs, name, f"{task}/test/pearson"), ".4f"))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
