"""Bar charts of a paper's findings: per finding, the two groups' means with error bars (standard deviation over
seeds) and every seed's value as a dot, titled with the verdict."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
import numpy as np  # noqa: E402

from parabit.papers.findings import Comparison  # noqa: E402

COLUMNS = 3


def findings_figure(comparisons: list[Comparison], labels: dict[str, str], path: Path, title: str) -> Path | None:
    """One subplot per measured finding; None (no file) when no finding has numbers yet."""
    measured = [c for c in comparisons if c.better or c.worse]
    if not measured:
        return None
    rows = math.ceil(len(measured) / COLUMNS)
    columns = min(COLUMNS, len(measured))
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False)
    for axis, comparison in zip(axes.flat, measured):
        finding = comparison.finding
        metric = finding.metric
        names = [labels.get(finding.better, finding.better), labels.get(finding.worse, finding.worse)]
        for x, values in enumerate((comparison.better, comparison.worse)):
            points = np.asarray(list(values.values()), dtype=float) * metric.scale
            if points.size == 0:
                continue
            spread = points.std(ddof=1) if points.size > 1 else 0.0
            axis.bar(x, points.mean(), yerr=spread, capsize=6, color=("tab:blue", "tab:gray")[x], alpha=0.75)
            axis.scatter(np.full(points.size, x) + np.linspace(-0.12, 0.12, points.size), points, color="black",
                         s=12, zorder=3)
        axis.set_xticks([0, 1], [_wrap(n) for n in names], fontsize=8)
        axis.set_ylabel(metric.label, fontsize=8)
        axis.set_title(f"{_wrap(finding.claim, 40)}\n{comparison.verdict}: {comparison.difference_text()}",
                       fontsize=8)
        low = min([v * metric.scale for v in (*comparison.better.values(), *comparison.worse.values())] + [0.0])
        axis.set_ylim(bottom=min(low * 1.1, 0.0))
    for axis in list(axes.flat)[len(measured):]:
        axis.axis("off")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _wrap(text: str, width: int = 22) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join([*lines, line][:3])
