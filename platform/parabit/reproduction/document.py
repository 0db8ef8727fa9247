"""The reproduction document (``ReproduceConfig.document``): written from the results ledger, never by hand.

Every paper's part (:func:`paper_part`) is rendered from its results, which come from the ledger
(:mod:`parabit.reproduction.ledger`); :func:`assemble` joins the parts under one header and the findings of all
papers in one table. Nothing in it depends on the machine or the moment it is written (no date, host or load: those
belong to each record), so a checkout with the same ledger writes the same document byte for byte.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from parabit.markdown import table
from parabit.papers.cells import Cell, Group, Results
from parabit.papers.departures import GENUINE, NO_DIFFERENCE, Departure, cause
from parabit.papers.findings import (DEFAULT_MARGIN, FAILS, HOLDS, MIN_SEEDS, NOT_RUN, PAR_TOLERANCE, UNDECIDED,
                                     UNTESTABLE, Comparison)
from parabit.papers.metrics import Metric
from parabit.papers.plan import PaperPlan, Section
from parabit.reproduction.ledger import Ledger
from parabit.reproduction.timing import CellsLeft, PaperTime, hours

CELLS_HEADING = "Cells and their runs"
FINDINGS_HEADING = "Findings at a glance"
FOUND_HEADING = "What this reproduction found"


@dataclass
class PaperPart:
    """A paper's rendered part of the document, its findings as rows of the summary table, and its time."""

    key: str
    title: str
    markdown: str
    findings: list[dict] = field(default_factory=list)
    time: "PaperTime | None" = None
    finished: int = 0
    planned: int = 0
    scale: str = ""
    left: "CellsLeft | None" = None


def _write(path: Path, text: str) -> None:
    """Write aside and rename into place: a killed run never leaves half a document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(text)
    os.replace(scratch, path)


def primary_metrics(plan: PaperPlan) -> dict[str, Metric]:
    """The metric each group is first read with (findings first, then tables): what the cells table lists."""
    metrics: dict[str, Metric] = {}
    for finding in plan.findings():
        for group in finding.groups:
            metrics.setdefault(group, finding.metric)
    for table in plan.tables():
        for row in table.rows:
            for entry in row.entries:
                if entry.group is not None and entry.metric is not None:
                    metrics.setdefault(entry.group, entry.metric)
    return metrics


def findings_table(comparisons: list[Comparison], causes: list[str]) -> str:
    rows = []
    for c, why in zip(comparisons, causes):
        metric = f" ({c.finding.metric.label})" if c.finding.metric is not None else ""
        rows.append((f"{c.finding.claim}{metric}", c.finding.paper or "—", c.difference_text(), f"**{c.verdict}**",
                     c.reason, why or "—"))
    return table(("finding", "paper reports", "ours: better − worse (mean ± sd over seeds)", "verdict", "why",
                  "cause"), rows)


def departures_table(plan: PaperPlan, departures: list[Departure], results: Results, labels: dict[str, str]) -> str:
    """Every departure from the paper: what the paper does, what the cells do, and, where an ablation measured it,
    the other choice's effect on the headline metric (other − ours, per group it touches) and the paper's headline
    comparison under it."""
    headline = plan.headline()
    under = f"{headline.claim}, under the other choice" if headline is not None else "headline under it"
    metric = f" on {headline.metric.label}" if headline is not None else ""
    rows = []
    for departure in departures:
        effects, claim = "not measured: " + departure.unmeasured if not departure.measured else "—", "—"
        if departure.measured and headline is not None:
            measured = [(finding.worse, finding.compare(results))
                        for finding in departure.effects(headline.metric, list(dict.fromkeys(headline.groups)))]
            effects = "; ".join(f"{labels.get(group, group)}: {c.difference_text()}" for group, c in measured) or "—"
            swapped = departure.under(headline)
            if swapped is not None:
                comparison = swapped.compare(results)
                claim = f"{comparison.difference_text()}: **{comparison.verdict}**"
        rows.append((departure.aspect, departure.paper, departure.ours, departure.other or "—", effects, claim))
    return table(("aspect", "the paper", "these cells", "the other choice", f"its effect{metric} (other − ours)",
                  under), rows)


def cells_table(plan: PaperPlan, results: Results, planned: list[Cell], not_run: dict[str, str],
                stale: dict[str, str]) -> str:
    """Every planned cell: the number the tables read from its record, when and where it trained (or why it is
    missing)."""
    metrics = primary_metrics(plan)
    found = {(r.cell.group, r.cell.seed): r for r in results.all if r.ok}
    failed = {(r.cell.group, r.cell.seed): r for r in results.failed()}
    rows = []
    for cell in planned:
        metric = metrics.get(cell.group)
        key = metric.keys[0] if metric is not None and len(metric.keys) == 1 else (metric.label if metric else "—")
        result = found.get((cell.group, cell.seed))
        if result is not None:
            record = result.record
            value = metric.of(result.metrics) if metric is not None else None
            seconds = f"{result.seconds:.0f}" if result.seconds is not None else "—"
            commit = record.commit[:8] + (" (uncommitted changes)" if record.dirty else "")
            rows.append((cell.name, cell.seed, key, "—" if value is None else f"{value:.6f}", seconds,
                         record.finished[:10], commit, record.mlflow_run_id or "—"))
        else:
            why = failed[(cell.group, cell.seed)].error if (cell.group, cell.seed) in failed else \
                stale.get(cell.name) or not_run.get(cell.group, "not run yet")
            rows.append((cell.name, cell.seed, key, f"missing: {why}", "—", "—", "—", "—"))
    planned_groups = {cell.group for cell in planned}
    rows += [(f"{plan.key}-{group} (every seed)", "—", "—", f"missing: {why}", "—", "—", "—", "—")
             for group, why in not_run.items() if group not in planned_groups]
    return table(("cell (run name)", "seed", "metric", "value", "train s", "trained", "commit", "MLflow run id"),
                 rows)


def paper_part(plan: PaperPlan, results: Results, comparisons: list[Comparison], planned: list[Cell],
               not_run: dict[str, str], stale: dict[str, str], figure: Path | None, sections: list[Section],
               document: Path, ledger: Ledger, error: str | None = None, prepare_seconds: float = 0.0,
               labels: dict[str, str] | None = None, groups: list[Group] = ()) -> PaperPart:
    """The paper's part of the document (see the module docstring). ``groups``: the plan's groups, when its data is
    known (the cells left are estimated with them)."""
    left = CellsLeft.of(plan, groups, planned, results, ledger.cells(plan.key))
    finished = len(planned) - left.cells
    lines = [f"## {plan.title}", ""]
    status = f"Cells: {finished} of {len(planned)} finished"
    if stale:
        status += f"; {len(stale)} stale (recorded with settings that have changed since: trained again when run)"
    lines += [status + (f"; **stopped before training: {error}**" if error else "") + ".", ""]
    took = PaperTime.of(results, prepare_seconds)
    if took is not None:
        lines += [f"Time, from the ledger (`{_relative(ledger.path(plan.key), document)}`): {took.text()}.", ""]
    setup = plan.setup().strip()
    if setup:
        lines += ["### Setup", "", setup, ""]
    departures = plan.departures() if error is None else []
    causes = [cause(c, departures, results) for c in comparisons]
    lines += ["### Findings", "", findings_table(comparisons, causes), "",
              f"*Cause* of a finding that does not hold: the departures from the paper (below) under whose other "
              f"choice it holds; when no measured departure turns it, \"{NO_DIFFERENCE}\" if its difference is "
              f"within seed noise, \"{GENUINE}\" if it is reversed.", ""]
    if figure is not None:
        lines += [f"![{plan.key} findings]({_relative(figure, document)})", ""]
    if departures:
        lines += ["### Departures from the paper", "", departures_table(plan, departures, results, labels or {}), "",
                  "Effects are the other choice's cells against these cells, seed by seed (mean ± sd, n seeds); a "
                  "difference under the margin (an effect, or the headline under the other choice) trains 3 seeds, "
                  "as a finding's does.", ""]
    for table in plan.tables():
        lines += [f"### {table.title}", "", table.markdown(results), ""]
        if table.note:
            lines += [table.note, ""]
    for section in sections:
        lines += [f"### {section.title}", "", section.body.strip(), ""]
        lines += [f"![{section.title}]({_relative(path, document)})" for path in section.figures]
        lines += [""] if section.figures else []
    lines += [f"### {CELLS_HEADING}", "", cells_table(plan, results, planned, not_run, stale), ""]
    rows = [{"paper": plan.key, "claim": c.finding.claim, "metric": c.finding.metric.label if c.finding.metric else "",
             "reported": c.finding.paper, "ours": c.difference_text(), "verdict": c.verdict, "why": c.reason,
             "cause": why} for c, why in zip(comparisons, causes)]
    return PaperPart(plan.key, plan.title, "\n".join(lines), rows, took, finished, len(planned), plan.scale(), left)


def _relative(path: Path, document: Path) -> str:
    try:
        return str(path.resolve().relative_to(document.parent.resolve()))
    except ValueError:
        return str(path.resolve())


def assemble(parts: dict[str, PaperPart | None], titles: dict[str, str], *, seeds: list[int], quick: bool,
             ledger: str) -> str:
    """The whole document: header, every finding in one table, then each paper's part (or why it is absent)."""
    times = [part.time for part in parts.values() if part is not None and part.time is not None]
    total = ""
    if times:
        total = (f" All papers together: {hours(sum(t.busy + t.prepare for t in times))} of wall time "
                 f"({sum(t.cells for t in times)} cells; their own times add up to "
                 f"{hours(sum(t.cell + t.prepare for t in times))}).")
    lefts = [part.left for part in parts.values() if part is not None and part.left is not None]
    if lefts and sum(left.cells for left in lefts):
        total += (f" Left: {sum(left.cells for left in lefts)} cells, about "
                  f"{hours(sum(left.seconds for left in lefts))} of cell time (each estimated from its group's "
                  "newest record; the column *left* below).")
    lines = [
        "# Reproducing the seed papers",
        "",
        f"Generated by `parabit reproduce` from the results ledger (the files `<paper>.jsonl` in [{ledger}]({ledger}) "
        "beside this document, one line per finished cell); do not edit by hand. A checkout with the ledger writes this document again without "
        "training anything; a cell missing from the ledger (or whose settings changed since its record) trains "
        "when the command runs." + total,
        "",
        f"Mode: **{'quick (small slices, 1 epoch: checks the machinery, not the papers)' if quick else 'full'}**; "
        f"training seeds {', '.join(map(str, seeds))}.",
        "",
        "How to read: every number of ours is read from its cell's record (the metrics its MLflow run logged; the "
        "run ids are listed under each paper); table entries are *ours* as mean ± standard deviation over the "
        "training seeds that finished, the paper's number in brackets. A finding compares two groups of cells "
        f"seed by seed (better − worse). Verdict: a difference of at least {DEFAULT_MARGIN} (five points of r or "
        f"accuracy) decides by its sign; a smaller one needs ≥ {MIN_SEEDS} seeds and holds only if its 95 % t-interval "
        f"excludes 0 (*undecided* with fewer seeds); \"on par\" claims hold within {PAR_TOLERANCE} or when no "
        "difference is significant. *Not testable here* says why.",
        "",
        f"## {FOUND_HEADING}",
        "",
        found_summary(parts, titles),
        "",
        "## What has run",
        "",
        status_table(parts, titles),
        "",
        f"## {FINDINGS_HEADING}",
        "",
        all_findings_table(parts),
        "",
    ]
    for key, part in parts.items():
        if part is None:
            lines += [f"## {titles[key]}", "", "Not run yet: `parabit reproduce --seed-paper "
                      f"{key}{' --quick' if quick else ''}` writes this part.", ""]
        else:
            lines += [part.markdown, ""]
    return "\n".join(lines).rstrip() + "\n"


def all_findings_table(parts: dict[str, PaperPart | None]) -> str:
    """Every paper's findings in one table, each as its part keeps it (:attr:`PaperPart.findings`)."""
    rows = []
    for key, part in parts.items():
        for row in part.findings if part is not None else []:
            metric = f" ({row['metric']})" if row["metric"] else ""
            rows.append((key, f"{row['claim']}{metric}", row["reported"] or "—", row["ours"], f"**{row['verdict']}**",
                         row["cause"] or "—"))
    return table(("paper", "finding", "paper reports", "ours: better − worse", "verdict", "cause"), rows)


def found_summary(parts: dict[str, PaperPart | None], titles: dict[str, str]) -> str:
    """A few sentences per paper, from its findings' verdicts: which of its claims hold here, which do not and why
    (each cause without its detail, which the findings table holds), and how many are still open."""
    paragraphs = []
    for key, part in parts.items():
        title = _authors_and_year(titles[key])
        if part is None or not part.findings:
            paragraphs.append(f"**{title}**: not run yet.")
            continue
        by_verdict: dict[str, list[dict]] = {}
        for row in part.findings:
            by_verdict.setdefault(row["verdict"], []).append(row)
        holding = by_verdict.get(HOLDS, [])
        sentences = [f"**{title}**: {len(holding)} of its {len(part.findings)} claims hold here"
                     + (": " + "; ".join(f"*{row['claim']}*" for row in holding) if holding else "") + "."]
        failing = by_verdict.get(FAILS, [])
        if failing:
            causes: dict[str, list[str]] = {}
            for row in failing:
                causes.setdefault(_short_cause(row["cause"] or row["why"]), []).append(f"*{row['claim']}*")
            sentences.append(f"{len(failing)} do not, by cause: " + "; ".join(
                f"{reason}: {', '.join(claims)}" for reason, claims in causes.items()) + ".")
        still = [f"{len(by_verdict[v])} {label}" for v, label in
                 ((UNDECIDED, f"undecided (a difference under the margin, fewer than {MIN_SEEDS} seeds yet)"),
                  (NOT_RUN, "not run yet"), (UNTESTABLE, "not testable here")) if v in by_verdict]
        if still:
            sentences.append("Of the rest, " + ", ".join(still) + ".")
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def _short_cause(cause: str) -> str:
    """A finding's cause without its parenthesised detail ("no difference at this scale (not measured: …)")."""
    return cause.split(" (", 1)[0].strip() or "no cause found"


def _left(part: PaperPart | None) -> str:
    return part.left.text() if part is not None and part.left is not None else "—"


def _authors_and_year(title: str) -> str:
    return re.match(r"^(.*?\d{4})", title).group(1)


def status_table(parts: dict[str, PaperPart | None], titles: dict[str, str]) -> str:
    """One row per paper: its cells finished of planned, at which scale, and the time and cores it took."""
    rows = []
    for key, part in parts.items():
        title = _authors_and_year(titles[key])
        if part is None or part.time is None:
            rows.append((title, f"{part.finished if part else 0} of {part.planned if part else '—'}", _left(part),
                         part.scale if part else "—", "not run yet", "—"))
            continue
        took = part.time
        hosts = ", ".join(f"{host}: {cpus} CPUs" for host, cpus in sorted(took.machines.items()))
        rows.append((title, f"{part.finished} of {part.planned}", _left(part), part.scale or "—",
                     hours(took.busy + took.prepare), hosts))
    return table(("paper", "cells finished", "left (cell time)", "scale", "wall time (cells + data step)", "machines"),
                 rows)


def write_document(config, parts: dict[str, PaperPart | None], titles: dict[str, str], ledger: Ledger,
                   tracker=None) -> Path:
    """Assemble ``parts`` into ``config.document_path`` (and the reproduction's MLflow run, when there is one)."""
    path = config.document_path
    text = assemble(parts, titles, seeds=config.seeds, quick=config.quick,
                    ledger=_relative(ledger.folder, path) + "/")
    _write(path, text)
    if tracker is not None:
        tracker.log_text(text, "reproduction.md")
    return path
