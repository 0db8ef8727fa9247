"""How long a paper's cells took (:class:`PaperTime`) and how long those it still lacks will take
(:class:`CellsLeft`), from its ledger records: the document's "What has run" and compute lines."""

from __future__ import annotations

from dataclasses import dataclass

from parabit.papers.cells import Cell, Group, Results
from parabit.papers.plan import PaperPlan
from parabit.papers.records import CellRecord, utc_seconds


@dataclass(frozen=True)
class PaperTime:
    """How long a paper's results took, from its ledger records: ``busy`` seconds of wall time in which at least
    one of its cells was training (overlapping cells count once), the ``cell`` seconds summed over cells, the data
    step's ``prepare`` seconds, the most cells that ran at once, and the machines (host: CPUs)."""

    busy: float
    cell: float
    prepare: float
    most_at_once: int
    cells: int
    machines: dict[str, int]

    @classmethod
    def of(cls, results: Results, prepare: float = 0.0) -> "PaperTime | None":
        # A record that finishes two cells (the same training, e.g. a tuning step's run a table cell repeats)
        # counts once.
        records = list({(r.record.cell, r.record.finished): r.record for r in results.all if r.ok}.values())
        if not records:
            return None
        intervals = sorted((utc_seconds(r.started), utc_seconds(r.finished)) for r in records)
        busy, most, end = 0.0, 1, None
        for start, stop in intervals:
            if end is None or start >= end:
                busy += stop - start
                end = stop
            elif stop > end:
                busy += stop - end
                end = stop
        for start, _ in intervals:
            most = max(most, sum(1 for a, b in intervals if a <= start < b))
        machines = {}
        for r in records:
            machines[str(r.machine.get("host", "?"))] = int(r.machine.get("cpus") or 0)
        return cls(busy, sum(r.train_seconds or 0.0 for r in records), prepare, most, len(records), machines)

    def text(self) -> str:
        hosts = ", ".join(f"{host} ({cpus} CPUs)" for host, cpus in sorted(self.machines.items()))
        prepare = f" + data step {hours(self.prepare)}" if self.prepare else ""
        return (f"{self.cells} cells; wall time {hours(self.busy)} while cells trained{prepare} (the cells' own "
                f"times add up to {hours(self.cell)}; at most {self.most_at_once} at once) on {hosts}")


@dataclass(frozen=True)
class CellsLeft:
    """The planned cells a paper still lacks (missing or stale) and their estimated cell-seconds: each from the
    plan's model of its speed (:meth:`PaperPlan.cell_seconds`), else from the newest record of its group (any seed,
    stale ones too: the same training, timed by the newest code that ran it, so a group whose newest record
    predates a speed-up is over-estimated); ``unestimated``: cells of groups that never trained."""

    cells: int
    seconds: float
    unestimated: int

    @classmethod
    def of(cls, plan: PaperPlan, groups: list[Group], planned: list[Cell], results: Results,
           records: list[CellRecord]) -> "CellsLeft":
        done = {(r.cell.group, r.cell.seed) for r in results.all if r.ok}
        left = [cell for cell in planned if (cell.group, cell.seed) not in done]
        newest: dict[str, CellRecord] = {}
        # A group's own records, and those that finished its cells under another name (the same training).
        timed = [(record.group, record) for record in records] + [(r.cell.group, r.record) for r in results.all if r.ok]
        for group, record in timed:
            if record.train_seconds and (group not in newest or record.finished > newest[group].finished):
                newest[group] = record
        by_key = {group.key: group for group in groups}
        estimates = [plan.cell_seconds(by_key[cell.group], results) if cell.group in by_key else None
                     for cell in left]
        seconds = [estimate if estimate is not None else newest[cell.group].train_seconds
                   for cell, estimate in zip(left, estimates) if estimate is not None or cell.group in newest]
        return cls(len(left), float(sum(seconds)), len(left) - len(seconds))

    def text(self) -> str:
        if not self.cells:
            return "none"
        unknown = f" + {self.unestimated} never trained" if self.unestimated else ""
        return f"{self.cells} (about {hours(self.seconds)}{unknown})"


def hours(seconds: float) -> str:
    """``seconds`` as ``N min`` or ``H h MM min``."""
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"
