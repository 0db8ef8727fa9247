"""Evaluation results: tidy rows for MLflow and DataFrames, a table in the seed papers' layout, and a plot."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class Score:
    """One number: e.g. benchmark "sts2014", subset "deft-forum", metric "pearson", value 0.31, over n pairs.

    Year averages use subset "mean" (unweighted, as the seed tables) and "wmean" (weighted by pairs).
    """

    benchmark: str
    subset: str
    metric: str
    value: float
    n: int

    @property
    def name(self) -> str:
        """The MLflow metric name, e.g. ``sts2012/MSRpar/pearson``."""
        return f"{self.benchmark}/{self.subset}/{self.metric}"


class EvaluationReport:
    """The scores of one evaluation run, in the order they were produced."""

    def __init__(self, scores: list[Score]):
        self.scores = list(scores)

    def prefixed(self, prefix: str) -> "EvaluationReport":
        """The same scores under ``<prefix>/<benchmark>`` (a variant's metrics beside the run's own)."""
        return EvaluationReport([replace(s, benchmark=f"{prefix}/{s.benchmark}") for s in self.scores])

    def metrics(self) -> dict[str, float]:
        """``{"sts2012/MSRpar/pearson": 0.42, ...}``, ready for ``mlflow.log_metrics``."""
        return {score.name: score.value for score in self.scores}

    def frame(self) -> pd.DataFrame:
        """One row per score: benchmark, subset, metric, value, n."""
        return pd.DataFrame([asdict(s) for s in self.scores], columns=["benchmark", "subset", "metric", "value", "n"])

    def value(self, benchmark: str, subset: str, metric: str) -> float:
        for score in self.scores:
            if (score.benchmark, score.subset, score.metric) == (benchmark, subset, metric):
                return score.value
        raise KeyError(f"no score {benchmark}/{subset}/{metric} in this report")

    def wide(self) -> pd.DataFrame:
        """Rows = benchmark and subset (year averages after their subsets), columns = metrics, plus n."""
        frame = self.frame()
        if frame.empty:
            return frame
        order = list(dict.fromkeys(zip(frame.benchmark, frame.subset)))
        table = frame.pivot_table(index=["benchmark", "subset"], columns="metric", values="value", sort=False)
        table = table.reindex(pd.MultiIndex.from_tuples(order, names=["benchmark", "subset"]))
        table["n"] = frame.groupby(["benchmark", "subset"], sort=False)["n"].max()
        return table

    def table(self, digits: int = 2) -> str:
        """A plain-text table in the seed tables' layout: subsets, then each year's mean, then SICK and MSRP."""
        wide = self.wide()
        if wide.empty:
            return "(no scores)"
        metric_columns = [c for c in wide.columns if c != "n"]
        header = ["benchmark", "subset", *metric_columns, "n"]
        body = []
        for (benchmark, subset), row in wide.iterrows():
            label = f"{benchmark} avg" if subset in ("mean", "wmean") else benchmark
            cells = ["" if pd.isna(row[c]) else f"{row[c]:.{digits}f}" for c in metric_columns]
            body.append([label, subset, *cells, str(int(row["n"]))])
        widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]
        render = lambda line: "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip()
        rule = "-" * len(render(header))
        return "\n".join([render(header), rule, *(render(line) for line in body)])

    def summary(self) -> dict[str, float]:
        """The headline numbers: each STS year's mean Pearson, SICK Pearson, MSRP accuracy (where present)."""
        return {
            score.name: score.value
            for score in self.scores
            if (score.subset == "mean" and score.metric == "pearson")
            or (score.benchmark == "sick" and score.metric == "pearson")
            or (score.benchmark == "msrp" and score.metric == "accuracy")
        }

    def plot(self, path: str | Path, title: str = "") -> Path:
        """Bar chart of the headline numbers (per-year STS means, SICK, MSRP) as a PNG."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        summary = self.summary()
        labels = [name.rsplit("/", 2)[0] if "/mean/" in name else name.split("/")[0] for name in summary]
        fig, ax = plt.subplots(figsize=(1.1 * max(len(summary), 4) + 1, 3.2))
        bars = ax.bar(labels, list(summary.values()), color="#4c72b0")
        ax.bar_label(bars, fmt="%.2f", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_ylabel("Pearson r / accuracy")
        ax.set_title(title or "parabit evaluation")
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path

    def write(self, folder: str | Path, title: str = "") -> list[Path]:
        """The report as files in ``folder``: ``table.txt`` (:meth:`table`), ``scores.csv`` (:meth:`frame`) and
        ``summary.png`` (:meth:`plot`); returns their paths."""
        folder = Path(folder)
        table, scores = folder / "table.txt", folder / "scores.csv"
        table.write_text(self.table())
        self.frame().to_csv(scores, index=False)
        return [table, scores, self.plot(folder / "summary.png", title=title)]
