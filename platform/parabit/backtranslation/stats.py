"""Stats: rows in/out/rejected per stage with reject reasons (from the stage manifests) and score histograms."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from parabit.backtranslation.stage import StageOutput

STATS_FILE, HISTOGRAM_FILE = "stats.json", "score_histograms.png"


def stage_stats(stages: Sequence[StageOutput]) -> dict:
    """Per stage: rows in/out/rejected, reject reasons, seconds, and whether the rows were conserved."""
    return {
        stage.name: {
            "rows_in": stage.rows_in, "rows_out": stage.rows_out, "rows_rejected": stage.rows_rejected,
            "conserved": stage.rows_in == stage.rows_out + stage.rows_rejected,
            "reject_reasons": stage.reject_reasons, "seconds": stage.seconds,
        }
        for stage in stages
    }


def plot_histograms(scores: pa.Table, columns: Sequence[str], path: Path, bins: int = 50) -> None:
    """One histogram per score column (finite values only) in a grid, saved as a PNG."""
    width = min(len(columns), 3)
    height = -(-len(columns) // width)
    # A Figure without pyplot draws headless with no global backend to choose, and matplotlib's import (~0.3 s)
    # stays out of the many processes that import this package (every training driver and worker) and never plot.
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4 * width, 3 * height))
    axes = figure.subplots(height, width, squeeze=False)
    for ax, name in zip(axes.flat, columns):
        values = scores[name].to_numpy()
        values = values[np.isfinite(values)]
        ax.hist(values, bins=bins, color="tab:blue")
        ax.set_title(f"{name} (n={len(values)})", fontsize=9)
    for ax in list(axes.flat)[len(columns):]:
        ax.axis("off")
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def write_stats(stages: Sequence[StageOutput], scored: StageOutput, score_columns: Sequence[str],
                folder: Path) -> dict:
    """Write ``stats.json`` and the score histograms PNG under ``folder`` (each renamed into place) and return the
    stats."""
    folder.mkdir(parents=True, exist_ok=True)
    stats = {"stages": stage_stats(stages), "score_columns": list(score_columns)}
    _replace(folder / STATS_FILE, lambda tmp: tmp.write_text(json.dumps(stats, indent=1)))
    table = scored.read_data(list(score_columns))
    _replace(folder / HISTOGRAM_FILE, lambda tmp: plot_histograms(table, score_columns, tmp))
    return stats


def _replace(path: Path, write) -> None:
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    write(tmp)
    os.replace(tmp, path)
