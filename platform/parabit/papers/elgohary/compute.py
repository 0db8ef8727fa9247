"""Elgohary & Carpuat's compute: each group's pairs, seeds and cell-hours, estimated from the speed of this paper's
newest recorded cells and spent as the records say (the document's compute table), and one cell's estimated
seconds."""

from __future__ import annotations

import numpy as np

from parabit.markdown import BLANK, table
from parabit.papers.cells import Group, Results
from parabit.papers.elgohary.data import ElgoharyData
from parabit.papers.elgohary.tuning import sweep_scale
from parabit.papers.findings import DEFAULT_MARGIN

RATE_CELLS = 20  # the estimate's cells: the ledger's newest, so a faster step shows in it once its cells are recorded


def compute_table(plan: ElgoharyData, results: Results) -> str:
    """Each group's pairs, seeds and hours: estimated from the pairs × epochs per second this paper's newest
    recorded cells trained at (the ledger's newest RATE_CELLS, stale ones included: what its cells cost here
    with the code that trains them now, not with an older, slower step), and spent, from the records (a record
    that finishes two cells counts once)."""
    timed = timed_records(plan, results)
    rate = cells_rate(plan, timed)
    compared = {key for finding in plan.findings() for key in finding.groups} | plan.every_seed()
    ablations = {group for departure in plan.departures() for group in departure.groups} - compared
    deferred = plan.deferred()
    rows = []
    total_estimated = total_spent = at_main_size = 0.0
    counted: set[str] = set()
    main = plan.main_pairs("bilingual_phrases") if "bilingual_phrases" in plan.available else None
    for group in plan.groups():
        pairs = group_pairs(plan, group, results)
        seeds = 3 if group.key in compared else 1
        estimate = pairs * plan.config.epochs * seeds / rate / 3600 if rate and pairs else 0.0
        mine = [r for r in results.of(group.key) if r.record.mlflow_run_id not in counted]
        counted |= {r.record.mlflow_run_id for r in mine}
        spent = sum(r.seconds or 0.0 for r in mine) / 3600
        total_estimated, total_spent = total_estimated + estimate, total_spent + spent
        at_main_size += estimate if pairs == main and group.key not in deferred else 0.0
        note = (f" (+2 if its effect, or the headline under it, is under {DEFAULT_MARGIN})" if group.key in ablations
                else " (last)" if group.key in deferred else "")
        shown = f"{estimate:.1f}" if rate and pairs else "—"
        counted_pairs = f"{pairs:,}" if pairs else "not counted yet"
        rows.append((group.title, counted_pairs, f"{seeds}{note}", shown,
                     f"{spent:.1f} ({len(results.of(group.key))})"))
    rows.append(("**all**", BLANK, BLANK, f"**{total_estimated:.1f}**", f"**{total_spent:.1f}**"))
    shown_table = table(("group", "pairs (at most)", "seeds", "estimated h", "spent h (cells)"), rows)
    if rate is None:
        return shown_table + "\n\nNo cell of this paper is recorded yet: no estimate."
    largest = max(plan.config.size_pairs)
    scaled = total_estimated + at_main_size * (largest / main - 1) if main else total_estimated
    unknown = "" if plan.available else ("\n\nThe data step has not counted every condition's pairs yet (it does "
                                         "after its sweeps): the groups marked so, and Table 6's, are not in the "
                                         "estimate.")
    at_scale = (f" Had every cell now at {main:,} pairs trained at {largest:,} instead, the plan would take about "
                f"{scaled:.0f} h: the main comparison runs at the largest of the paper's sizes at which 3 seeds of "
                "it and its ablations fit a few days of 2 cores.") if main else ""
    return (shown_table + unknown + f"\n\nEstimated at {rate:,.0f} pairs × epochs per second per cell (the "
            "median of "
            f"the {len(timed)} newest cells of this paper the ledger records, from {timed[0].finished[:10]} to "
            f"{timed[-1].finished[:10]}). Hours are cell-hours, as the spent "
            "column's sum of the cells' own times: cells trained side by side (`--parallel 2`) share the wall "
            "time; a group whose cells repeat another's training (the same settings and seed) spends nothing. "
            f"The J_bi sweeps ({sweep_scale(plan)} per trial) and the data step come on top.{at_scale}")


def timed_records(plan: ElgoharyData, results: Results) -> list:
    """The records the estimates take their speed from: the ledger's newest RATE_CELLS with a time and a count
    of pairs."""
    recorded = plan.context.recorded(plan.key) or [r.record for r in results.all if r.ok]
    return sorted((r for r in recorded if r.train_seconds and (r.data or {}).get("pairs_kept")),
                  key=lambda r: r.finished)[-RATE_CELLS:]


def group_pairs(plan: ElgoharyData, group: Group, results: Results) -> int | None:
    """How many pairs ``group``'s cells train on: as recorded, else as planned (None: not counted yet)."""
    trained = [r.record.data.get("pairs_kept") for r in results.of(group.key) if r.record.data]
    pairs = trained[0] if trained and trained[0] else \
        group.config.data.max_pairs or plan.available.get(group.config.data.condition)
    return min(pairs, plan.available.get(group.config.data.condition, pairs)) if pairs else None


def cells_rate(plan: ElgoharyData, timed: list) -> float | None:
    """The median pairs × epochs per second of ``timed`` (:func:`timed_records`; None without any)."""
    rates = [r.data["pairs_kept"] * plan.config.epochs / r.train_seconds for r in timed]
    return float(np.median(rates)) if rates else None


def cell_seconds(plan: ElgoharyData, group: Group, results: Results) -> float | None:
    """A cell of ``group`` at the speed of the compute table (its pairs × epochs at the newest records' median
    pairs × epochs per second)."""
    rate, pairs = cells_rate(plan, timed_records(plan, results)), group_pairs(plan, group, results)
    return pairs * plan.config.epochs / rate if rate and pairs else None
