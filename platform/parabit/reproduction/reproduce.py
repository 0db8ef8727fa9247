"""Running the reproduction: every chosen paper's data, cells, findings and analyses, then the document.

Results come from the ledger first (:mod:`parabit.reproduction.ledger`): a paper whose prepared record matches its
data settings is restored from it instead of preparing its data, and a cell whose record matches its digest is not
trained. Only what is missing runs, in three passes over the chosen papers, so a long run has a complete picture
early and spends its remaining time where the verdicts need it:

1. every paper's data, then every group with the first seed (but the groups a plan defers);
2. the further seeds of the groups whose findings (or departures' effects, or the headline under a departure's other
   choice) are not yet decided by a difference of at least the margin (those need ≥ 3 seeds);
3. the further seeds of every other group a finding compares;
4. the deferred groups (costly table-only cells, e.g. Elgohary & Carpuat's largest phrase-table sizes).

Each finished cell is appended to the ledger at once; after each paper in each pass the document is written again
from the ledger (every paper's part, chosen or not), so it is useful at every stage and after a kill, and a checkout
with the ledger writes the same document without training anything.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

from parabit.config import ConfigError
from parabit.papers.cells import Cell, CellResult, Group, Results, one_line
from parabit.papers.plan import PaperPlan, PipelineRunner, PlanContext, Section
from parabit.papers.records import PreparedRecord, Provenance, digest, machine, utc, utc_seconds
from parabit.paths import output_root, project_root
from parabit.ray_runtime import init_ray
from parabit.reproduction.cells import CellRunner, make_cell
from parabit.reproduction.config import ReproduceConfig
from parabit.reproduction.document import paper_part, write_document
from parabit.reproduction.figures import findings_figure
from parabit.reproduction.ledger import Ledger
from parabit.reproduction.paper_run import PaperRun
from parabit.reproduction.plans import PLANS
from parabit.tracking import RunTracker, tags
from parabit.tracking.lineage import checkout_commit, uncommitted_changes

log = logging.getLogger(__name__)

QUICK_SKIP = "quick mode trains only the groups of each paper's first finding"


class Reproduction:
    """The reproduction of ``config.papers`` (see the module docstring)."""

    def __init__(self, config: ReproduceConfig, pipelines: Mapping[str, PipelineRunner],
                 command: str = "parabit reproduce"):
        self.config = config
        self.pipelines = pipelines
        self.command = command
        self.ledger = Ledger(config.ledger_path)
        self.runner: CellRunner | None = None
        self.papers: list[PaperRun] = []
        self._views: dict[str, PaperRun] = {}  # papers not chosen, as the ledger has them

    def provenance(self) -> Provenance:
        """The code this reproduction's records name: the checkout's commit and its changed tracked files (the
        reproduction's own document, figures and ledger left out: writing them is what it does). Raises
        :class:`ConfigError` naming the changed files when the records would go to a ledger in the checkout from a
        changed tree, unless ``allow_dirty``."""
        config = self.config
        changed = uncommitted_changes(ignore=[config.ledger_path, config.document_path, config.figures_path])
        provenance = Provenance(checkout_commit(), tuple(changed or ()))
        ledger = config.ledger_path.resolve()
        in_checkout = project_root() in ledger.parents and output_root() not in ledger.parents
        if provenance.dirty and in_checkout and not config.allow_dirty:
            shown = ", ".join(provenance.changed[:5]) + (f" and {len(provenance.changed) - 5} more"
                                                         if len(provenance.changed) > 5 else "")
            raise ConfigError(f"the working tree has uncommitted changes ({shown}): ledger records must name code "
                              "that can be checked out. Commit them and run from a `git worktree` of the commit "
                              "(README: long reproductions), or pass --allow-dirty (the document flags those records)")
        return provenance

    def run(self):
        """Run everything that is not in the ledger yet, and write the document; returns its path."""
        config = self.config
        provenance = self.provenance()
        tracker = RunTracker(config.experiment, config.prefix, tags={tags.KIND: "reproduction",
                                                                      tags.REPRODUCTION: config.prefix})
        tracker.start()
        with tracker.closing():
            tracker.log_params({"papers": ",".join(config.papers), "seeds": ",".join(map(str, config.seeds)),
                                "quick": config.quick, "command": self.command})
            context = PlanContext(config, self.pipelines, tracker, cells=self._data_step_cells,
                                  progress=self._record_progress, history=self.ledger.cells)
            self.runner = CellRunner(self.ledger, tracker.run_id, parallel=config.parallel, provenance=provenance,
                                     keep_checkpoints=config.keep_checkpoints, in_process=config.cells_in_process,
                                     checkpoint_every=config.checkpoint_every)
            papers = self.papers = [PaperRun(PLANS[key](context)) for key in config.papers]
            for paper in papers:
                self.open(paper)
                deferred = paper.plan.deferred() if paper.error is None else set()
                self.train(paper, [self.cell(paper, g, config.seeds[0]) for g in paper.selected
                                   if g.key not in deferred])
                self.write(papers, tracker)
            for urgent in (True, False):
                for paper in papers:
                    if paper.error is not None:
                        continue
                    wanted = paper.undecided() if urgent else paper.compared()
                    cells = [self.cell(paper, g, seed) for seed in config.seeds[1:] for g in paper.selected
                             if g.key in wanted]
                    if any(not paper.done(c) for c in cells):
                        self.train(paper, cells)
                        self.write(papers, tracker)
            for paper in papers:
                if paper.error is None:
                    deferred = paper.plan.deferred()
                    cells = [self.cell(paper, g, config.seeds[0]) for g in paper.selected if g.key in deferred]
                    if any(not paper.done(c) for c in cells):
                        self.train(paper, cells)
                        self.write(papers, tracker)
            self.write(papers, tracker)
        return config.document_path

    def document(self):
        """Write the document from the ledger alone: nothing is prepared or trained (a paper whose data step has no
        record shows its cells as not run yet). Returns its path."""
        self.write([], None)  # every paper as the ledger has it
        return self.config.document_path

    @property
    def counts(self) -> dict[str, int]:
        """How many of the chosen papers' cells came from the ledger, from MLflow, were trained, or failed."""
        counts = {"ledger": 0, "mlflow": 0, "trained": 0, "failed": 0}
        for paper in self.papers:
            for result in paper.results.all:
                counts[result.source if result.ok else "failed"] += 1
        return counts

    # -- steps -----------------------------------------------------------------------------------------------
    def open(self, paper: PaperRun, prepare: bool = True) -> None:
        """The paper's data (restored from its prepared record, else prepared when ``prepare``), groups and planned
        cells, and every planned cell the ledger already has."""
        plan = paper.plan
        try:
            fingerprint = plan.data_fingerprint()
            paper.data_digest = digest(fingerprint) if fingerprint is not None else ""
            record = self.ledger.prepared(plan.key, paper.data_digest) if fingerprint is not None else None
            if record is not None and not self._restore(paper, record):
                record = None  # written by code that kept other facts: the data step runs again
            if record is not None:
                paper.restored = paper.started = True
            if (record is None or record.partial) and fingerprint is not None:
                if not prepare and record is None:
                    return
                if prepare:  # a partial record: the step goes on from its facts
                    self._prepare(paper)
            paper.groups = plan.groups()
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - the other papers still run; this one says what stopped it
            log.exception("%s: stopped before training", plan.key)
            paper.error = one_line(err)
            paper.started = True
            return
        quick = plan.quick_groups() if self.config.quick else None
        paper.skipped = {g.key: QUICK_SKIP for g in paper.groups if quick is not None and g.key not in quick}
        paper.skipped.update(plan.missing)
        seeds = self.config.seeds
        paper.planned = []
        # Twice: the first seed's records decide which ablation groups train further seeds (PaperRun.compared).
        for _ in range(2):
            compared = paper.compared()
            self.plan_cells(paper, [self.cell(paper, g, seed) for seed in seeds for g in paper.selected
                                    if seed == seeds[0] or g.key in compared])

    def plan_cells(self, paper: PaperRun, cells: list[Cell]) -> None:
        """Add ``cells`` to the paper's planned cells (those not planned yet), with any record the ledger has."""
        plan = paper.plan
        known = {cell.name for cell in paper.planned}
        new = [cell for cell in cells if cell.name not in known]
        paper.planned += new
        for cell in new:
            record = self.ledger.result(plan.key, cell.name, cell.digest)
            if record is not None:
                paper.results.add([CellResult(cell, record, source="ledger")])
                paper.started = True
            else:
                stale = self.ledger.stale(plan.key, cell.name, cell.digest)
                if stale is not None:
                    paper.stale[cell.name] = (f"stale: its record (commit {stale.commit[:8]}, {stale.finished[:10]}) "
                                              "was trained with other settings")
                    paper.started = True

    @staticmethod
    def _restore(paper: PaperRun, record: PreparedRecord) -> bool:
        """Restore the plan from its prepared record; False when the record lacks what this code's plan keeps."""
        try:
            paper.restore(record.facts)
            return True
        except (KeyError, TypeError, ValueError) as err:
            log.warning("%s: its prepared record (commit %s) has not the facts this code keeps (%s); preparing again",
                        paper.plan.key, record.commit[:8], one_line(err))
            return False

    def _prepare(self, paper: PaperRun, groups: set[str] | None = None, record: bool = True) -> None:
        """Run the plan's data step here (``groups``: only what they need) and, when ``record``, record what it
        computed."""
        plan = paper.plan
        began = paper.step_began = time.time()
        paper.step_cell_seconds = 0.0
        init_ray()
        plan.prepare(groups)
        if not record:
            return
        facts = paper.prepared_facts()
        known = self.ledger.prepared(plan.key, paper.data_digest)
        if known is not None and paper.restored and not known.partial:
            facts = self._keep_recorded(paper, known.facts, facts)
        paper.restored, paper.started = False, True
        if known is None or known.partial or known.facts != facts:
            self._append_prepared(paper, facts, began)

    def _append_prepared(self, paper: PaperRun, facts: dict, began: float, partial: bool = False) -> None:
        provenance = self.runner.provenance if self.runner is not None and self.runner.provenance else \
            self.provenance()
        recorded = [r.finished for r in self.ledger.preparations(paper.plan.key, paper.data_digest)]
        since = max([began, *(utc_seconds(stamp) for stamp in recorded)])  # a step's time is recorded once
        seconds = max(time.time() - since - paper.step_cell_seconds, 0.0)
        paper.step_cell_seconds = 0.0
        self.ledger.append(PreparedRecord(
            paper=paper.plan.key, digest=paper.data_digest, facts=facts, commit=provenance.commit,
            dirty=provenance.dirty, seconds=round(seconds, 1), machine=machine(), finished=utc(time.time()),
            partial=partial))

    def _paper(self, key: str) -> PaperRun:
        return next(paper for paper in self.papers if paper.plan.key == key)

    def _record_progress(self, plan: PaperPlan) -> None:
        """What a long data step has computed so far, recorded (:attr:`PreparedRecord.partial`), so that it goes
        on from there when it is run again, here or on another machine."""
        paper = self._paper(plan.key)
        self._append_prepared(paper, paper.prepared_facts(), paper.step_began, partial=True)

    def _data_step_cells(self, plan: PaperPlan, groups: list[Group]) -> Results:
        """Cells a data step needs (a tuning step at the cells' own scale), with the first seed: found in the
        ledger, else trained (``parallel`` at a time) and recorded, as any cell."""
        paper = self._paper(plan.key)
        began = time.time()
        init_ray()
        results = Results(self.runner.run_all([self.cell(paper, group, self.config.seeds[0]) for group in groups]))
        paper.step_cell_seconds += time.time() - began
        return results

    @staticmethod
    def _keep_recorded(paper: PaperRun, recorded: dict, fresh: dict) -> dict:
        """The facts in force after the data step ran again for a paper restored from the ledger: what its record
        holds stays, what it lacks comes from this run. The ledger's cells were planned from the record (Table 6's
        sizes are fractions of the phrase table), and a data step with a random part counts a little differently
        on each run (eflomal's sampler takes no seed)."""
        changed = sorted(key for key, value in recorded.items() if key in fresh and fresh[key] != value)
        if changed:
            log.warning("%s: the data step ran again for the missing cells; its %s differ from the record's, which "
                        "stay in force (each cell records the rows it trained on)", paper.plan.key, ", ".join(changed))
        facts = {**fresh, **recorded}
        paper.restore(facts)
        return facts

    def cell(self, paper: PaperRun, group: Group, seed: int) -> Cell:
        fingerprint = paper.plan.cells_fingerprint(group) if paper.data_digest else None
        data = digest(fingerprint) if fingerprint is not None else ""
        return make_cell(self.config.prefix, self.config.experiment, paper.plan.key, group, seed, data)

    def train(self, paper: PaperRun, cells: list[Cell]) -> None:
        """Find or train the cells not done yet. A paper restored from the ledger prepares its data for real
        first (the cells read it)."""
        missing = []
        for cell in cells:
            if paper.done(cell):
                continue
            found = self.runner.find(cell)
            if found is not None:
                paper.results.add([found])
            else:
                missing.append(cell)
        self.plan_cells(paper, cells)
        if not missing:
            return
        if paper.restored:
            try:
                self._prepare(paper)
                groups = {g.key: g for g in paper.plan.groups()}
                missing = [self.cell(paper, groups[c.group], c.seed) for c in missing if c.group in groups]
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as err:  # noqa: BLE001
                log.exception("%s: could not prepare the data its missing cells need", paper.plan.key)
                paper.results.add([CellResult(c, error=f"data step failed: {one_line(err)}") for c in missing])
                return
        init_ray()
        paper.results.add(self.runner.train_all(missing))

    def write(self, papers: list[PaperRun], tracker: RunTracker | None) -> None:
        """Every paper's findings, figure, analyses and part, then the whole document, from the ledger; the papers
        of this run with the errors it met."""
        running = {paper.plan.key: paper for paper in papers}
        context = papers[0].plan.context if papers else PlanContext(self.config, history=self.ledger.cells)
        parts = {}
        for key, plan_class in PLANS.items():
            paper = running.get(key) or self._views.get(key)
            if paper is None and not self.config.has_section(key):  # no settings to plan it with: "not run yet"
                parts[key] = None
                continue
            if paper is None:
                paper = self._views[key] = PaperRun(plan_class(context))
                self.open(paper, prepare=False)
            parts[key] = self.part(paper, tracker) if paper.started or key in running else None
        write_document(self.config, parts, {key: plan.title for key, plan in PLANS.items()}, self.ledger, tracker)

    def part(self, paper: PaperRun, tracker: RunTracker | None):
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
        if tracker is not None:
            for path in [figure, *(p for s in sections for p in s.figures)]:
                if path is not None:
                    tracker.log_artifact(path, f"figures/{plan.key}")
        preparations = self.ledger.preparations(plan.key, paper.data_digest) if paper.data_digest else []
        return paper_part(plan, paper.results, comparisons, paper.planned, paper.skipped, paper.stale, figure,
                          sections, config.document_path, self.ledger, paper.error,
                          sum(r.seconds or 0.0 for r in preparations), labels, paper.groups)

    # -- one cell again --------------------------------------------------------------------------------------
    def verify(self, name: str) -> tuple[CellResult | None, CellResult]:
        """Train the planned cell ``name`` again (under the run name ``<name>-verify-<time>``) and return its ledger
        result (None if it has none) beside the new one; the new one is not added to the ledger."""
        init_ray()
        context = PlanContext(self.config, self.pipelines)
        for key in self.config.papers:
            if not name.startswith(f"{self.config.prefix}-{key}-"):  # cell names: <prefix>-<paper>-<group>-s<seed>
                continue  # another paper's data step is never built for this cell
            paper = PaperRun(PLANS[key](context))
            self.open(paper, prepare=False)
            if paper.data_digest and not paper.restored:
                print(f"{name}: the ledger has no {key} data step for this code (data digest {paper.data_digest}): "
                      f"it runs here in full first (every group's data and sweeps), then {name} trains again",
                      flush=True)
                paper = PaperRun(PLANS[key](context))
                self.open(paper)
            cell = next((c for c in paper.planned if c.name == name), None)
            if cell is None:
                break
            recorded = next((r for r in paper.results.all if r.cell.name == name), None)
            print(self._verify_plan(paper, cell, recorded), flush=True)
            if paper.restored:
                # Only what this cell needs, taking what the record holds (e.g. sweeps' choices); nothing is recorded.
                self._prepare(paper, {cell.group}, record=False)
                groups = {g.key: g for g in paper.plan.groups()}
                cell = self.cell(paper, groups[cell.group], cell.seed)
            again = cell.renamed(f"{name}-verify-{time.strftime('%Y%m%d%H%M%S', time.gmtime())}")
            self.runner = CellRunner(Ledger(self.config.output_path / "verify-ledger"),
                                     in_process=self.config.cells_in_process,
                                     checkpoint_every=self.config.checkpoint_every)
            return recorded, self.runner.train_all([again])[0]
        planned = [c.name for key in self.config.papers for c in self._planned_names(key, context)]
        raise LookupError(f"no planned cell named {name!r}; planned cells: {', '.join(planned[:8])}"
                          + (f" and {len(planned) - 8} more" if len(planned) > 8 else ""))

    def _verify_plan(self, paper: PaperRun, cell: Cell, recorded: CellResult | None) -> str:
        """What ``--verify`` is about to do and about how long it takes, from the ledger's records."""
        trains = f"then trains {cell.name} again" + (
            f" (its record: {recorded.seconds:.0f} s of training on {recorded.record.machine.get('host', '?')}, "
            f"{recorded.record.machine.get('cpus', '?')} CPUs)" if recorded is not None and recorded.seconds else "")
        if not paper.restored:  # no data step (Bao), or the one that just ran in full
            return f"{cell.name}: {trains.removeprefix('then ')}"
        step = sum(r.seconds or 0.0 for r in self.ledger.preparations(paper.plan.key, paper.data_digest))
        reused = paper.plan.reused()
        return (f"{cell.name}: first the {paper.plan.key} data step, for this cell's group only (stages already built "
                f"here are skipped; the whole step took {step / 60:.0f} min when it was recorded)"
                + (f", taking {' and '.join(reused)} from the ledger instead of running them" if reused else "")
                + f"; {trains}")

    def _planned_names(self, key: str, context: PlanContext) -> list[Cell]:
        paper = PaperRun(PLANS[key](context))
        self.open(paper, prepare=False)
        return paper.planned


def reproduce(config: ReproduceConfig, pipelines: Mapping[str, PipelineRunner],
              command: str = "parabit reproduce") -> Reproduction:
    """Run ``config.papers`` and write the document; returns the finished reproduction (its ``counts`` say how
    many cells came from the ledger, from MLflow, were trained, or failed)."""
    reproduction = Reproduction(config, pipelines, command)
    reproduction.run()
    return reproduction
