"""docs/reproduction.md: written by the reproduction, never by hand.

Each paper's part is rendered when that paper is run (:func:`paper_part`) and kept under the reproduction's
output folder, with its findings as JSON; :func:`assemble` joins the latest part of every paper under one header
and the findings of all papers in one table, so ``--seed-paper NAME`` refreshes one paper and keeps the others.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path

from parabit.reproduction.cells import Cell, Results
from parabit.reproduction.findings import MIN_SEEDS, PAR_TOLERANCE, Comparison
from parabit.reproduction.metrics import Metric
from parabit.reproduction.plan import PaperPlan, Section

CELLS_HEADING = "Cells and their MLflow runs"
FINDINGS_HEADING = "Findings at a glance"


@dataclass
class PaperPart:
    """A paper's rendered part of the document and its findings as rows of the summary table."""

    key: str
    title: str
    markdown: str
    findings: list[dict] = field(default_factory=list)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder / f"{self.key}.md", self.markdown)
        _write(folder / f"{self.key}.json", json.dumps({"title": self.title, "findings": self.findings}, indent=1))

    @classmethod
    def load(cls, folder: Path, key: str) -> "PaperPart | None":
        text, meta = folder / f"{key}.md", folder / f"{key}.json"
        if not (text.is_file() and meta.is_file()):
            return None
        data = json.loads(meta.read_text())
        return cls(key, data["title"], text.read_text(), data["findings"])


def _write(path: Path, text: str) -> None:
    """Write aside and rename into place: a killed run never leaves half a document."""
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


def findings_table(comparisons: list[Comparison]) -> str:
    lines = ["| finding | paper reports | ours: better − worse (mean ± sd over seeds) | verdict | why |",
             "|---|---|---|---|---|"]
    for c in comparisons:
        metric = f" ({c.finding.metric.label})" if c.finding.metric is not None else ""
        lines.append(f"| {c.finding.claim}{metric} | {c.finding.paper or '—'} | {c.difference_text()} | "
                     f"**{c.verdict}** | {c.reason} |")
    return "\n".join(lines)


def cells_table(plan: PaperPlan, results: Results, planned: list[Cell], not_run: dict[str, str]) -> str:
    """Every planned cell: its MLflow run and the number the tables read from it (or why it is missing)."""
    metrics = primary_metrics(plan)
    found = {(r.cell.group, r.cell.seed): r for r in results.all if r.ok}
    failed = {(r.cell.group, r.cell.seed): r for r in results.failed()}
    lines = ["| cell (MLflow run name) | seed | MLflow run id | metric | value | train s |", "|---|---|---|---|---|---|"]
    for cell in planned:
        metric = metrics.get(cell.group)
        key = metric.keys[0] if metric is not None and len(metric.keys) == 1 else (metric.label if metric else "—")
        result = found.get((cell.group, cell.seed))
        if result is not None:
            value = metric.of(result.metrics) if metric is not None else None
            seconds = f"{result.seconds:.0f}" if result.seconds is not None else "—"
            lines.append(f"| {cell.name} | {cell.seed} | {result.run_id} | {key} | "
                         f"{'—' if value is None else f'{value:.6f}'} | {seconds} |")
        else:
            why = failed[(cell.group, cell.seed)].error if (cell.group, cell.seed) in failed else \
                not_run.get(cell.group, "not run yet")
            lines.append(f"| {cell.name} | {cell.seed} | missing: {why} | {key} | — | — |")
    planned_groups = {cell.group for cell in planned}
    for group, why in not_run.items():
        if group not in planned_groups:
            lines.append(f"| {plan.key}-{group} (every seed) | — | missing: {why} | — | — | — |")
    return "\n".join(lines)


def paper_part(plan: PaperPlan, results: Results, comparisons: list[Comparison], planned: list[Cell],
               not_run: dict[str, str], figure: Path | None, sections: list[Section], document: Path,
               error: str | None = None) -> PaperPart:
    """The paper's part of the document (see the module docstring)."""
    finished = sum(1 for c in planned if any(r.ok and r.cell.seed == c.seed for r in results.of(c.group)))
    reused = sum(1 for r in results.all if r.ok and r.reused)
    lines = [f"## {plan.title}", ""]
    status = f"Cells: {finished} of {len(planned)} finished ({reused} found finished in MLflow, not retrained)"
    lines += [status + (f"; **stopped before training: {error}**" if error else "") + ".", ""]
    setup = plan.setup().strip()
    if setup:
        lines += ["### Setup", "", setup, ""]
    lines += ["### Findings", "", findings_table(comparisons), ""]
    if figure is not None:
        lines += [f"![{plan.key} findings]({_relative(figure, document)})", ""]
    for table in plan.tables():
        lines += [f"### {table.title}", "", table.markdown(results), ""]
        if table.note:
            lines += [table.note, ""]
    for section in sections:
        lines += [f"### {section.title}", "", section.body.strip(), ""]
        lines += [f"![{section.title}]({_relative(path, document)})" for path in section.figures]
        lines += [""] if section.figures else []
    lines += [f"### {CELLS_HEADING}", "", cells_table(plan, results, planned, not_run), ""]
    rows = [{"paper": plan.key, "claim": c.finding.claim, "metric": c.finding.metric.label if c.finding.metric else "",
             "reported": c.finding.paper, "ours": c.difference_text(), "verdict": c.verdict, "why": c.reason}
            for c in comparisons]
    return PaperPart(plan.key, plan.title, "\n".join(lines), rows)


def _relative(path: Path, document: Path) -> str:
    try:
        return str(path.resolve().relative_to(document.parent.resolve()))
    except ValueError:
        return str(path.resolve())


def assemble(parts: dict[str, PaperPart | None], titles: dict[str, str], *, command: str, seeds: list[int],
             quick: bool, experiment: str, parent_run_id: str | None) -> str:
    """The whole document: header, every finding in one table, then each paper's part (or why it is absent)."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "# Reproducing the seed papers",
        "",
        f"Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} "
        f"({platform.node()}, {os.cpu_count()} CPUs, load average {load}); do not edit by hand, run the command "
        "again (finished cells are found in MLflow and not retrained).",
        "",
        f"Mode: **{'quick (small slices, 1 epoch: checks the machinery, not the papers)' if quick else 'full'}**; "
        f"training seeds {', '.join(map(str, seeds))}; MLflow experiment `{experiment}`"
        + (f", last parent run `{parent_run_id}`" if parent_run_id else "") + ".",
        "",
        "How to read: every number of ours is read from its cell's MLflow run (listed under each paper); table "
        "entries are *ours* as mean ± standard deviation over the training seeds that finished, the paper's number "
        "in brackets. A finding compares two groups of cells seed by seed (better − worse). Verdict: a difference "
        "of at least 0.05 (five points of r or accuracy) decides by its sign; a smaller one needs "
        f"≥ {MIN_SEEDS} seeds and holds only if its 95 % t-interval excludes 0 (*undecided* with fewer seeds); "
        f"\"on par\" claims hold within {PAR_TOLERANCE} or when no difference is significant. *Not testable here* "
        "says why.",
        "",
        f"## {FINDINGS_HEADING}",
        "",
        "| paper | finding | paper reports | ours: better − worse | verdict |",
        "|---|---|---|---|---|",
    ]
    absent = []
    for key, part in parts.items():
        if part is None:
            absent.append(key)
            continue
        for row in part.findings:
            metric = f" ({row['metric']})" if row["metric"] else ""
            lines.append(f"| {key} | {row['claim']}{metric} | {row['reported'] or '—'} | {row['ours']} | "
                         f"**{row['verdict']}** |")
    lines.append("")
    for key in absent:
        lines += [f"## {titles[key]}", "", "Not run yet: `parabit reproduce --seed-paper "
                  f"{key}{' --quick' if quick else ''}` writes this part.", ""]
    for part in parts.values():
        if part is not None:
            lines += [part.markdown, ""]
    return "\n".join(lines).rstrip() + "\n"
