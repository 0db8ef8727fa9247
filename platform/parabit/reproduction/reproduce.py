"""Running the reproduction: every chosen paper's data, cells, findings and analyses, then the document.

Cells run in three passes over all chosen papers, so a long run has a complete picture early and spends its
remaining time where the verdicts need it:

1. every paper's data (:meth:`~parabit.reproduction.plan.PaperPlan.prepare`), then every group with the first seed;
2. the further seeds of the groups whose findings are not yet decided by a difference of at least the margin
   (those need ≥ 3 seeds);
3. the further seeds of every other group a finding compares.

A cell whose MLflow run is FINISHED is skipped. After each paper in each pass its findings, figure, analyses and part
of the document are written again, so the document is useful at every stage and after a kill.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from parabit.ray_runtime import init_ray
from parabit.reproduction.cells import Cell, CellRunner, Group, Results, make_cell
from parabit.reproduction.config import ReproduceConfig
from parabit.reproduction.document import PaperPart, assemble, paper_part
from parabit.reproduction.figures import findings_figure
from parabit.reproduction.plan import PaperPlan, PipelineRunner, PlanContext, Section
from parabit.reproduction.plans import PLANS
from parabit.tracking import RunTracker, tags

log = logging.getLogger(__name__)

QUICK_SKIP = "quick mode trains only the groups of each paper's first finding"


def one_line(err: BaseException) -> str:
    return f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"


@dataclass
class PaperRun:
    """One paper's state across the passes."""

    plan: PaperPlan
    groups: list[Group] = field(default_factory=list)
    results: Results = field(default_factory=Results)
    planned: list[Cell] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    @property
    def selected(self) -> list[Group]:
        return [g for g in self.groups if g.key not in self.skipped]

    def compared(self) -> set[str]:
        """Groups some finding compares (they train with every seed)."""
        return {key for finding in self.plan.findings() for key in finding.groups}

    def undecided(self) -> set[str]:
        """Groups of findings whose difference so far is below the finding's margin (or not measured)."""
        groups = set()
        for finding in self.plan.findings():
            comparison = finding.compare(self.results)
            if finding.groups and (comparison.mean is None or abs(comparison.mean) < finding.margin):
                groups.update(finding.groups)
        return groups


class Reproduction:
    """The reproduction of ``config.papers`` (see the module docstring)."""

    def __init__(self, config: ReproduceConfig, pipelines: Mapping[str, PipelineRunner],
                 command: str = "parabit reproduce"):
        self.config = config
        self.pipelines = pipelines
        self.command = command

    def run(self):
        """Run everything and write the document; returns its path."""
        config = self.config
        init_ray()
        tracker = RunTracker(config.experiment, config.prefix, tags={tags.KIND: "reproduction",
                                                                      tags.REPRODUCTION: config.prefix})
        tracker.start()
        with tracker.closing():
            tracker.log_params({"papers": ",".join(config.papers), "seeds": ",".join(map(str, config.seeds)),
                                "quick": config.quick, "command": self.command})
            context = PlanContext(config, self.pipelines, tracker)
            runner = CellRunner(tracker.run_id)
            papers = [PaperRun(PLANS[key](context)) for key in config.papers]
            for paper in papers:
                self._prepare(paper)
                self._train(paper, runner, [self._cell(paper, g, config.seeds[0]) for g in paper.selected])
                self._write(paper, tracker)
            for urgent in (True, False):
                for paper in papers:
                    if paper.error is not None:
                        continue
                    wanted = paper.undecided() if urgent else paper.compared()
                    cells = [self._cell(paper, g, seed) for seed in config.seeds[1:] for g in paper.selected
                             if g.key in wanted]
                    if any(not self._done(paper, c) for c in cells):
                        self._train(paper, runner, cells)
                        self._write(paper, tracker)
        return config.document_path

    # -- steps -----------------------------------------------------------------------------------------------
    def _prepare(self, paper: PaperRun) -> None:
        try:
            paper.plan.prepare()
            paper.groups = paper.plan.groups()
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - the other papers still run; this one says what stopped it
            log.exception("%s: stopped before training", paper.plan.key)
            paper.error = one_line(err)
            return
        quick = paper.plan.quick_groups() if self.config.quick else None
        paper.skipped = {g.key: QUICK_SKIP for g in paper.groups if quick is not None and g.key not in quick}
        paper.skipped.update(paper.plan.missing)
        compared = paper.compared()
        paper.planned = [self._cell(paper, g, seed) for seed in self.config.seeds for g in paper.selected
                         if seed == self.config.seeds[0] or g.key in compared]

    def _cell(self, paper: PaperRun, group: Group, seed: int) -> Cell:
        return make_cell(self.config.prefix, self.config.experiment, paper.plan.key, group, seed)

    @staticmethod
    def _done(paper: PaperRun, cell: Cell) -> bool:
        return any(r.ok and r.cell.seed == cell.seed for r in paper.results.of(cell.group))

    def _train(self, paper: PaperRun, runner: CellRunner, cells: list[Cell]) -> None:
        for cell in cells:
            if not self._done(paper, cell):
                paper.results.add([runner.run(cell)])

    def _write(self, paper: PaperRun, tracker: RunTracker) -> None:
        """The paper's findings, figure, analyses and part; then the whole document again."""
        config, plan = self.config, paper.plan
        comparisons = [finding.compare(paper.results) for finding in plan.findings()] if paper.error is None else []
        labels = {g.key: g.title for g in paper.groups}
        figure = findings_figure(comparisons, labels, config.figures_path / f"{plan.key}-findings.png", plan.title)
        sections: list[Section] = []
        if paper.error is None:
            try:
                sections = plan.sections(paper.results)
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as err:  # noqa: BLE001 - a failed analysis must not lose the trained cells' tables
                log.exception("%s: analyses failed", plan.key)
                sections = [Section("Analyses", f"The analyses failed: {one_line(err)}")]
        for path in [figure, *(p for s in sections for p in s.figures)]:
            if path is not None:
                tracker.log_artifact(path, f"figures/{plan.key}")
        part = paper_part(plan, paper.results, comparisons, paper.planned, paper.skipped, figure, sections,
                          config.document_path, paper.error)
        part.save(config.parts_path)
        write_document(config, tracker, self.command)


def write_document(config: ReproduceConfig, tracker: RunTracker, command: str) -> None:
    parts = {key: PaperPart.load(config.parts_path, key) for key in PLANS}
    titles = {key: plan.title for key, plan in PLANS.items()}
    text = assemble(parts, titles, command=command, seeds=config.seeds, quick=config.quick,
                    experiment=config.experiment, parent_run_id=tracker.run_id)
    path = config.document_path
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(text)
    scratch.replace(path)
    tracker.log_text(text, "reproduction.md")


def reproduce(config: ReproduceConfig, pipelines: Mapping[str, PipelineRunner], command: str = "parabit reproduce"):
    """Run ``config.papers`` and write the document; returns its path."""
    return Reproduction(config, pipelines, command).run()
