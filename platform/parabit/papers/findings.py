"""Findings: a paper's headline claim as a comparison of two groups of cells, and the verdict our runs give it.

A :class:`Finding` says "``better`` beats ``worse`` on ``metric``" (or, with ``relation="not_worse"``, "is on par
with or better than"). :meth:`Finding.compare` pairs the two groups' values by training seed, takes the per-seed
differences, and decides (:func:`verdict`):

* a mean difference of at least ``margin`` (0.05 by default: five points of r or accuracy) decides by its sign
  with any number of seeds (one seed cannot move a difference that large here; see the seed spreads reported);
* a smaller difference needs at least :data:`MIN_SEEDS` seeds: the claim holds when a two-sided 95 % t-interval of
  the per-seed differences lies above zero, is reversed when it lies below, and otherwise does not hold (the
  difference is within seed noise); with fewer seeds it is *undecided*;
* a finding about the data rather than a trained model (``fixed``: the two values, computed from the training
  data) involves no seed and is decided by its sign;
* a finding against a ``reference`` computed from the data (an untrained baseline) compares each seed of
  ``better`` with that one value, under the same rule;
* a finding that cannot be measured on the shipped data says why (*not testable here*);
* a finding whose cells also score their own untrained start (``untrained``: the evaluation variant that holds it)
  is *not testable here* when training left both sides below their starts: a comparison of two models that
  training made worse says nothing of the paper's claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from parabit.papers.cells import Results
from parabit.papers.metrics import Metric

MIN_SEEDS = 3
PAR_TOLERANCE = 0.01  # "on par": within one point
DEFAULT_MARGIN = 0.05  # a mean difference that decides a finding by its sign alone: five points of r or accuracy

HOLDS = "holds"
FAILS = "does not hold"
UNDECIDED = "undecided"
UNTESTABLE = "not testable here"
NOT_RUN = "not run"
WITHIN_NOISE = "within seed noise"  # how a reason starts when a difference is no more than the seeds' spread
BOTH_BELOW_START = "training made both worse than their untrained start"


@dataclass(frozen=True)
class Finding:
    """A claim of the paper: ``better`` > ``worse`` (group keys of the same paper) on ``metric``. ``paper``: what
    the paper reports for it (text, e.g. ".7832 vs .7121"). ``fixed``: (better, worse) computed from data, not from
    cells; ``data_departures``: the aspects of the paper's departures that change that data (no ablation recomputes
    it, so a fixed finding that does not hold names them as not measured). ``reference``: the worse side is this
    value computed from data (``worse`` names it in the claim only). ``untestable``: why it cannot be measured here
    (then no groups are needed). ``worse_metric``: the metric the worse side is read with, when not ``metric`` (the
    same cells evaluated two ways). ``untrained``: the evaluation variant (metric prefix) in which the cells of both
    groups logged their untrained start (see the module docstring)."""

    claim: str
    better: str = ""
    worse: str = ""
    metric: Metric | None = None
    paper: str = ""
    relation: Literal["greater", "not_worse"] = "greater"
    margin: float = DEFAULT_MARGIN
    untestable: str | None = None
    fixed: tuple[float, float] | None = None
    reference: float | None = None
    worse_metric: Metric | None = None
    data_departures: tuple[str, ...] = ()
    untrained: str = ""

    @property
    def groups(self) -> tuple[str, ...]:
        if self.untestable or self.fixed:
            return ()
        return (self.better,) if self.reference is not None else (self.better, self.worse)

    def compare(self, results: Results) -> "Comparison":
        if self.untestable:
            return Comparison(self, {}, {}, [], UNTESTABLE, self.untestable)
        if self.fixed is not None:
            better, worse = self.fixed
            decision = HOLDS if better > worse else FAILS
            return Comparison(self, {}, {}, [better - worse], decision,
                              "computed from the training data (no training run, no seed involved)")
        better = results.values(self.better, self.metric)
        worse = ({seed: self.reference for seed in better} if self.reference is not None
                 else results.values(self.worse, self.worse_metric or self.metric))
        seeds = sorted(set(better) & set(worse))
        differences = [better[s] - worse[s] for s in seeds]
        decision, reason = verdict(differences, self.relation, self.margin, self.metric.scale)
        if not differences:
            missing = [g for g, v in ((self.better, better), (self.worse, worse)) if not v and g in self.groups]
            reason = f"no finished cell of {', '.join(missing) or 'a common seed'}"
        below = self.below_start(results) if differences else []
        if len(below) == 2:
            decision, reason = UNTESTABLE, f"{BOTH_BELOW_START} ({'; '.join(below)})"
        elif below:
            reason += f" ({below[0]})"
        return Comparison(self, better, worse, differences, decision, reason)

    def below_start(self, results: Results) -> list[str]:
        """Each side whose cells trained to below their own untrained start (mean over seeds), as text; empty
        without ``untrained`` or for a side compared with a reference."""
        if not self.untrained or self.reference is not None:
            return []
        sides = []
        for group, metric in ((self.better, self.metric), (self.worse, self.worse_metric or self.metric)):
            trained = list(results.values(group, metric).values())
            start = list(results.values(group, metric.under(self.untrained)).values())
            if trained and start and np.mean(trained) < np.mean(start):
                sides.append(f"{group} {metric.format(float(np.mean(trained)))} < its start "
                             f"{metric.format(float(np.mean(start)))}")
        return sides


@dataclass(frozen=True)
class Comparison:
    """A finding measured: the two groups' values by seed, the per-seed differences and the verdict."""

    finding: Finding
    better: dict[int, float]
    worse: dict[int, float]
    differences: list[float]
    verdict: str
    reason: str

    @property
    def mean(self) -> float | None:
        return float(np.mean(self.differences)) if self.differences else None

    @property
    def within_noise(self) -> bool:
        """Whether the finding does not hold only because its difference is within the seeds' spread (no
        difference found), not because it is reversed."""
        return self.verdict == FAILS and self.reason.startswith(WITHIN_NOISE)

    @property
    def spread(self) -> float | None:
        """The standard deviation of the per-seed differences (None with fewer than two seeds)."""
        return float(np.std(self.differences, ddof=1)) if len(self.differences) > 1 else None

    def difference_text(self) -> str:
        metric = self.finding.metric
        if metric is None or self.mean is None:
            return "—"
        if self.finding.fixed is not None:
            return f"{metric.format(self.mean, signed=True)} (from the data)"
        spread = "" if self.spread is None else f" ± {metric.format(self.spread)}"
        return f"{metric.format(self.mean, signed=True)}{spread} (n={len(self.differences)})"


def verdict(differences: list[float], relation: str = "greater", margin: float = DEFAULT_MARGIN,
            scale: float = 1.0) -> tuple[str, str]:
    """The verdict on per-seed differences (better − worse) and why (see the module docstring); numbers in the
    reason are shown times ``scale`` (the metric's display scale, e.g. 100 for percentages)."""
    n = len(differences)
    if n == 0:
        return NOT_RUN, "no finished cells"
    mean = float(np.mean(differences))
    lower, upper = interval(differences)

    def shown(value: float, signed: bool = True) -> str:
        return format(value * scale, "+.3g" if signed else ".3g") if scale != 1.0 else format(
            value, "+.3f" if signed else ".3f")

    span = f"95% interval [{shown(lower)}, {shown(upper)}]"
    if relation == "not_worse":
        if mean >= -PAR_TOLERANCE:
            return HOLDS, f"difference {shown(mean)} ≥ −{shown(PAR_TOLERANCE, False)} (on par or better)"
        if mean <= -margin:
            return FAILS, f"worse by {shown(-mean, False)} ≥ {shown(margin, False)}"
        if n < MIN_SEEDS:
            return UNDECIDED, f"|difference| < {shown(margin, False)} needs ≥ {MIN_SEEDS} seeds (have {n})"
        if upper < 0:
            return FAILS, f"worse: {span} below 0"
        return HOLDS, f"on par: {span} includes 0"
    if mean >= margin:
        return HOLDS, f"difference ≥ {shown(margin, False)}"
    if mean <= -margin:
        return FAILS, f"reversed by ≥ {shown(margin, False)}"
    if n < MIN_SEEDS:
        return UNDECIDED, f"|difference| < {shown(margin, False)} needs ≥ {MIN_SEEDS} seeds (have {n})"
    if lower > 0:
        return HOLDS, f"{span} above 0"
    if upper < 0:
        return FAILS, f"reversed: {span} below 0"
    return FAILS, f"{WITHIN_NOISE}: {span} includes 0"


def interval(differences: list[float], level: float = 0.95) -> tuple[float, float]:
    """The two-sided t-interval of the mean difference (infinite with one value)."""
    n = len(differences)
    mean = float(np.mean(differences))
    if n < 2:
        return -math.inf, math.inf
    half = stats.t.ppf(0.5 + level / 2, n - 1) * float(np.std(differences, ddof=1)) / math.sqrt(n)
    return mean - half, mean + half
