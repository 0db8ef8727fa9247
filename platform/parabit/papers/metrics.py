"""How a number is read from a cell's MLflow run: a :class:`Metric` names the run's metric(s) and how to print it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Metric:
    """The mean of the run metrics ``keys`` (one key: that metric), shown as ``label``.

    ``scale`` multiplies the value for display only (100 for a fraction shown as %); ``digits`` are the decimals
    shown. Comparisons (:mod:`parabit.papers.findings`) use the unscaled value, so a margin of 0.05 means five
    points of Pearson r or of accuracy alike."""

    label: str
    keys: tuple[str, ...]
    scale: float = 1.0
    digits: int = 3

    @classmethod
    def named(cls, key: str, label: str | None = None, **display) -> "Metric":
        return cls(label or key, (key,), **display)

    def under(self, prefix: str) -> "Metric":
        """The same metric as the same cells logged it under an evaluation variant (``<prefix>/<key>``: e.g.
        ``untrained``, the cells' model before the first step)."""
        return replace(self, keys=tuple(f"{prefix}/{key}" for key in self.keys))

    def of(self, metrics: Mapping[str, float]) -> float | None:
        """The value in a run's ``metrics``; None when any key is missing or not finite (a cell that did not
        produce the number never counts as zero)."""
        values = [metrics.get(key) for key in self.keys]
        if any(value is None or not math.isfinite(value) for value in values):
            return None
        return sum(values) / len(values)

    def format(self, value: float | None, signed: bool = False) -> str:
        if value is None or not math.isfinite(value):
            return "—"
        return format(value * self.scale, f"{'+' if signed else ''}.{self.digits}f")
