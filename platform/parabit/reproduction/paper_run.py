"""One paper in a reproduction (:class:`PaperRun`): its plan, groups, planned cells and results, and which groups still
need further seeds (the passes of :mod:`parabit.reproduction.reproduce`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from parabit.papers.cells import Cell, Group, Results
from parabit.papers.findings import Finding
from parabit.papers.plan import PaperPlan
from parabit.paths import local, portable


@dataclass
class PaperRun:
    """One paper's state: its plan, groups and planned cells, and the results found or trained."""

    plan: PaperPlan
    groups: list[Group] = field(default_factory=list)
    results: Results = field(default_factory=Results)
    planned: list[Cell] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    stale: dict[str, str] = field(default_factory=dict)  # cell name -> its stale record, described
    error: str | None = None
    data_digest: str = ""
    restored: bool = False  # prepared data taken from the ledger (not built here)
    started: bool = False  # anything of it is known (prepared, or recorded cells)
    step_began: float = 0.0  # when this run's data step began, and the wall seconds it spent on cells since its
    step_cell_seconds: float = 0.0  # last record (counted as those cells' own time, not the data step's)

    def prepared_facts(self) -> dict:
        """What the ledger's prepared record of this paper holds: the plan's facts and the groups its data step could
        not prepare, paths written :func:`~parabit.paths.portable`."""
        return portable({"missing": dict(self.plan.missing), **self.plan.facts()})

    def restore(self, facts: dict) -> None:
        """Take back what :meth:`prepared_facts` returned (as read from the ledger) instead of running the data
        step; a record that lacks what this code's plan keeps raises ``KeyError``, ``TypeError`` or ``ValueError``."""
        facts = local(facts)
        self.plan.missing = dict(facts.get("missing", {}))
        self.plan.restore(facts)

    @property
    def selected(self) -> list[Group]:
        return [g for g in self.groups if g.key not in self.skipped]

    def compared(self) -> set[str]:
        """Groups that train with every seed: those some finding compares, and the ablation groups whose first
        seeds leave a departure's effect (its other choice against ours) or the headline under its other choice
        below the margin: a small difference needs 3 seeds, a large one is decided by one; and the groups the plan
        trains with every seed whatever their difference (:meth:`PaperPlan.every_seed`)."""
        return ({key for finding in self.plan.findings() for key in finding.groups} | self._close_departures()
                | self.plan.every_seed())

    def undecided(self) -> set[str]:
        """Groups of findings (and of departures' effects and claims) whose difference so far is below the margin
        (or, for a finding, not measured)."""
        groups = self._close_departures()
        for finding in self.plan.findings():
            mean = finding.compare(self.results).mean
            if mean is None or abs(mean) < finding.margin:
                groups.update(finding.groups)
        return groups

    def _close_departures(self) -> set[str]:
        return self._close(self.plan.departure_effects() + self.plan.departure_claims())

    def _close(self, findings: list[Finding]) -> set[str]:
        """The groups of ``findings`` measured with a difference below their margin."""
        groups = set()
        for finding in findings:
            mean = finding.compare(self.results).mean
            if mean is not None and abs(mean) < finding.margin:
                groups.update(finding.groups)
        return groups

    def done(self, cell: Cell) -> bool:
        return any(r.ok and r.cell.seed == cell.seed for r in self.results.of(cell.group))
