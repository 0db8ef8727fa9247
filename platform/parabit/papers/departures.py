"""Departures: where a reproduction's cells differ from the paper, and what each difference measurably does.

A :class:`Departure` names one aspect (data, scale, composition, optimiser, ...), what the paper (and, where it is
silent, the reference code it names) does and what the cells do. A departure is *measured* when the reproduction
also runs the other choice: as ablation groups (``variants``: a group built as the plan builds it → the same group
with this one aspect switched), or, for a choice made only when the model is evaluated, as the same cells read
under another evaluation variant's metrics (``prefix``). Its effect is then read from the ledger like any finding:

* :meth:`Departure.effects` — for each group it touches, the other choice against ours (ablation − ours) on the
  paper's headline metric; a difference under the finding margin needs 3 seeds, as a finding's does;
* :meth:`Departure.under` — a finding measured under the other choice (its groups swapped for their ablations), so
  the document shows the paper's headline comparison under each departure, and a finding that does not hold
  names the departure under which it does (:func:`cause`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from parabit.papers.cells import Results
from parabit.papers.findings import FAILS, HOLDS, Comparison, Finding
from parabit.papers.metrics import Metric

GENUINE = "no departure found at this scale: a genuine difference"
NO_DIFFERENCE = "no difference at this scale"  # the cause of a finding whose difference is within seed noise


@dataclass(frozen=True)
class Departure:
    """One way the cells differ from the paper (see the module docstring). ``other``: the choice an ablation
    measures (what the paper does where ours differs, or the alternative where the paper's documents disagree or
    are silent); ``unmeasured``: why no ablation measures it (then ``variants`` and ``prefix`` are empty).
    ``applies``: the groups whose cells make this choice (None: those in ``variants``); a finding is read under the
    other choice only when each of its groups the choice applies to has a variant, never one side under the other
    choice and the other side under ours."""

    aspect: str
    paper: str
    ours: str
    other: str = ""
    variants: Mapping[str, str] = field(default_factory=dict)
    prefix: str = ""
    unmeasured: str = ""
    applies: frozenset[str] | None = None

    @property
    def measured(self) -> bool:
        return bool(self.variants or self.prefix)

    @property
    def groups(self) -> set[str]:
        """The ablation groups this departure trains (none when it is read from evaluation variants)."""
        return set(self.variants.values())

    def metric(self, metric: Metric) -> Metric:
        """``metric`` as read under the other choice (its keys prefixed for an evaluation variant)."""
        return metric.under(self.prefix) if self.prefix else metric

    def under(self, finding: Finding) -> Finding | None:
        """``finding`` measured under the other choice; None when the departure touches none of its groups, when a
        group it applies to has no variant, or when the finding is not measured by cells."""
        if not self.measured or finding.metric is None or not finding.groups:
            return None
        if not self.prefix and (not self._touched(finding) or self.unmeasured_on(finding)):
            return None
        return replace(finding, better=self.variants.get(finding.better, finding.better),
                       worse=self.variants.get(finding.worse, finding.worse) if finding.worse else finding.worse,
                       metric=self.metric(finding.metric))

    def unmeasured_on(self, finding: Finding) -> bool:
        """Whether no ablation measures this choice on ``finding``'s cells: none measures it at all, or a group of
        the finding it applies to has no variant."""
        if not self.measured:
            return True
        return not self.prefix and not self._touched(finding) <= set(self.variants)

    def _touched(self, finding: Finding) -> set[str]:
        return set(finding.groups) & set(self.variants if self.applies is None else self.applies)

    def effects(self, metric: Metric, groups: list[str]) -> list[Finding]:
        """For each of ``groups`` this departure touches: the other choice against ours on ``metric``, as a finding
        (better = the other choice), so its difference and seeds are decided as any finding's are."""
        effects = []
        for group in groups:
            if self.prefix:
                effects.append(Finding(f"{self.aspect}: {self.other} on {group}", group, group, self.metric(metric),
                                       worse_metric=metric))
            elif group in self.variants:
                effects.append(Finding(f"{self.aspect}: {self.other} on {group}", self.variants[group], group, metric))
        return effects


def cause(comparison: Comparison, departures: list[Departure], results: Results) -> str:
    """Why a finding that does not hold does not: each measured departure under whose other choice it holds (with
    the difference there), else what the verdict's reason says: :data:`NO_DIFFERENCE` when its difference is
    within seed noise, :data:`GENUINE` when it is reversed (either naming the departures no ablation measures on its
    cells, or, for a finding computed from the data, the departures that change that data); empty for a finding that
    holds or was not measured."""
    finding = comparison.finding
    if comparison.verdict != FAILS:
        return ""
    if finding.fixed is not None:  # no ablation recomputes the data: the departures that change it go unmeasured
        unknown = set(finding.data_departures) - {d.aspect for d in departures}
        if unknown:
            raise ValueError(f"finding {finding.claim!r} names departures the paper does not have: {sorted(unknown)}")
        return GENUINE + (f" (not measured: {', '.join(finding.data_departures)})" if finding.data_departures else "")
    if not finding.groups:
        return ""
    reasons = []
    for departure in departures:
        swapped = departure.under(finding)
        if swapped is None:
            continue
        measured = swapped.compare(results)
        if measured.verdict == HOLDS:
            reasons.append(f"{departure.aspect}: holds with {departure.other} ({measured.difference_text()})")
    unmeasured = [d.aspect for d in departures if d.unmeasured_on(finding)]
    found = NO_DIFFERENCE if comparison.within_noise else GENUINE
    return "; ".join(reasons) or found + (f" (not measured: {', '.join(unmeasured)})" if unmeasured else "")
