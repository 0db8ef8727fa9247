"""A paper's time from its records: wall time counts overlapping cells once; the cells it still lacks are estimated by
the plan's speed model, else by their group's newest record."""

from __future__ import annotations

from types import SimpleNamespace

from parabit.papers.cells import CellResult, Results
from parabit.papers.records import CellRecord
from parabit.reproduction.timing import CellsLeft, PaperTime

from ..conftest import finished_record as record


def test_wall_time_counts_overlapping_cells_once(sick_cell):
    cells = [sick_cell, sick_cell.renamed("b"), sick_cell.renamed("c")]
    results = Results([
        CellResult(cells[0], record(cells[0], "2026-11-25T10:00:00Z", "2026-11-25T10:10:00Z", 600.0)),
        CellResult(cells[1], record(cells[1], "2026-11-25T10:05:00Z", "2026-11-25T10:15:00Z", 600.0)),
        CellResult(cells[2], record(cells[2], "2026-11-26T09:00:00Z", "2026-11-26T09:05:00Z", 300.0)),
    ])
    took = PaperTime.of(results, prepare=60.0)
    assert took.busy == 20 * 60  # 10:00-10:15 and a day later 5 minutes; the gap between sessions is not counted
    assert took.cell == 1500 and took.most_at_once == 2 and took.cells == 3 and took.prepare == 60.0
    assert "at most 2 at once" in took.text() and "vm (2 CPUs)" in took.text()


def test_the_cells_left_are_estimated_by_the_plan_else_by_their_groups_newest_record():
    def group_record(group: str, seed: int, seconds: float, finished: str) -> CellRecord:
        return CellRecord(f"{group}-s{seed}", "alpha", group, seed, "d", "c", {}, seconds, {}, {}, finished, finished)

    class Plan:  # the one plan hook CellsLeft asks: a speed model for the group "modelled" only
        def cell_seconds(self, group, results):
            return 30.0 if group.key == "modelled" else None

    planned = [SimpleNamespace(group=g, seed=s) for g, seeds in (("modelled", 3), ("recorded", 2), ("never", 1))
               for s in range(1, seeds + 1)]
    done = Results([CellResult(planned[0], group_record("modelled", 1, 60.0, "2026-12-06T00:00:00Z"))])
    ledger = [group_record("recorded", 1, 500.0, "2026-11-29T00:00:00Z"),
              group_record("recorded", 2, 100.0, "2026-12-01T00:00:00Z")]

    groups = [SimpleNamespace(key=key) for key in ("modelled", "recorded", "never")]
    left = CellsLeft.of(Plan(), groups, planned, done, ledger)
    assert (left.cells, left.seconds, left.unestimated) == (5, 2 * 30.0 + 2 * 100.0, 1)  # the newest record: 100 s
    assert left.text() == "5 (about 4 min + 1 never trained)"
    assert CellsLeft.of(Plan(), groups, planned[:1], done, ledger).text() == "none"
    assert CellsLeft.of(Plan(), [], planned, done, ledger).seconds == 2 * 60.0 + 2 * 100.0  # groups not known yet
