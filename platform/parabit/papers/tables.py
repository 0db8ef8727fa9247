"""A seed paper's table with the paper's numbers beside ours: :class:`PaperTable` of :class:`Row`\\ s of
:class:`Entry`\\ s, each naming the group whose cells it shows (mean ± standard deviation over seeds)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parabit.markdown import table
from parabit.papers.cells import Results
from parabit.papers.metrics import Metric


BELOW_START = "▼"  # marks a trained number below its cells' own untrained start


@dataclass(frozen=True)
class Entry:
    """One table cell: ``metric`` of ``group``'s cells (None: not measured here) beside the ``paper``'s value.
    ``value``: a number of ours computed from the data rather than by cells (then ``group`` is None). ``start``:
    the evaluation variant (a metric prefix, e.g. ``untrained``) holding the same cells' untrained start: a trained
    number below it (mean over seeds) is marked :data:`BELOW_START`."""

    group: str | None
    metric: Metric | None
    paper: float | None = None
    value: float | None = None
    start: str = ""

    def below_start(self, results: Results) -> bool:
        """Whether training left this entry's cells below their untrained start (False when not measured)."""
        if not self.start or self.group is None or self.metric is None:
            return False
        trained = list(results.values(self.group, self.metric).values())
        start = list(results.values(self.group, self.metric.under(self.start)).values())
        return bool(trained and start) and float(np.mean(trained)) < float(np.mean(start))

    def text(self, results: Results) -> str:
        ours = "—"
        if self.value is not None and self.metric is not None:
            ours = self.metric.format(self.value)
        elif self.group is not None and self.metric is not None:
            values = list(results.values(self.group, self.metric).values())
            if values:
                ours = self.metric.format(float(np.mean(values)))
                if len(values) > 1:
                    ours += f" ± {self.metric.format(float(np.std(values, ddof=1)))}"
                if self.below_start(results):
                    ours += f" {BELOW_START}"
        if self.paper is None:
            return ours
        digits = self.metric.digits if self.metric is not None else 2
        scale = self.metric.scale if self.metric is not None else 1.0
        return f"{ours} ({self.paper * scale:.{digits}f})"


@dataclass(frozen=True)
class Row:
    label: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class PaperTable:
    """A table in the paper's layout: ``columns`` (after the row label), ``rows``, and a ``note`` under it."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    note: str = ""
    corner: str = ""

    @property
    def groups(self) -> set[str]:
        return {e.group for row in self.rows for e in row.entries if e.group is not None}

    def markdown(self, results: Results) -> str:
        return table((self.corner, *self.columns),
                     [(row.label, *(e.text(results) for e in row.entries)) for row in self.rows])
