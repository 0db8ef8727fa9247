"""A paper table: our mean ± spread over seeds beside the paper's number, a dash where nothing was measured."""

from __future__ import annotations

from parabit.papers.cells import Cell, CellResult, Results
from parabit.papers.records import CellRecord
from parabit.papers.metrics import Metric
from parabit.papers.tables import Entry, PaperTable, Row

MSRPAR = Metric.named("sts2012/MSRpar/pearson", digits=2)
SICK = Metric.named("sick/test/pearson", digits=2)


def result(group: str, seed: int, metrics: dict[str, float], error: str | None = None) -> CellResult:
    record = None if error else CellRecord(
        cell=f"{group}-s{seed}", paper="elgohary", group=group, seed=seed, digest="d", commit="c", metrics=metrics,
        train_seconds=1.0, data={}, machine={}, started="2026-11-25T10:00:00Z", finished="2026-11-25T10:00:01Z")
    return CellResult(Cell("elgohary", group, seed, config=None), record, error=error)


def test_a_table_puts_the_paper_beside_our_mean_and_spread_over_seeds():
    results = Results([result("biph", 1, {MSRPAR.keys[0]: 0.40, SICK.keys[0]: 0.50}),
                       result("biph", 2, {MSRPAR.keys[0]: 0.44, SICK.keys[0]: float("nan")}),
                       result("ppdb", 1, {}, error="diverged")])
    table = PaperTable("Table 3", ("BiPh J_bi", "PPDB J_pa"), (
        Row("MSRpar", (Entry("biph", MSRPAR, 0.54), Entry("ppdb", MSRPAR, 0.42))),
        Row("SICK", (Entry("biph", SICK, 0.66), Entry(None, SICK, 0.62)))), corner="set")
    lines = table.markdown(results).splitlines()
    assert lines[:2] == ["| set | BiPh J_bi | PPDB J_pa |", "|---|---|---|"]
    # two seeds: mean ± sample standard deviation; a failed cell is a dash, never a zero
    assert lines[2] == "| MSRpar | 0.42 ± 0.03 (0.54) | — (0.42) |"
    # a non-finite value is left out rather than averaged in
    assert lines[3] == "| SICK | 0.50 (0.66) | — (0.62) |"
    assert table.groups == {"biph", "ppdb"}


def test_a_later_result_of_a_seed_replaces_an_earlier_failure():
    results = Results([result("biph", 1, {}, error="killed"), result("biph", 1, {MSRPAR.keys[0]: 0.4})])
    assert results.values("biph", MSRPAR) == {1: 0.4}
    assert results.failed() == []


def test_a_trained_number_below_its_cells_untrained_start_is_marked():
    from parabit.papers.tables import BELOW_START

    results = Results([result("broken", 1, {"sick/test/pearson": 0.40, "untrained/sick/test/pearson": 0.45}),
                       result("trained", 1, {"sick/test/pearson": 0.60, "untrained/sick/test/pearson": 0.45})])
    assert Entry("broken", SICK, 0.63, start="untrained").text(results) == f"0.40 {BELOW_START} (0.63)"
    assert Entry("trained", SICK, start="untrained").text(results) == "0.60"
    assert Entry("broken", SICK).text(results) == "0.40"  # no start named: nothing compared
