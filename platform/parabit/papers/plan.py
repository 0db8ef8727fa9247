"""What a seed paper's reproduction declares (:class:`PaperPlan`) and what it may use while doing so
(:class:`PlanContext`).

A plan says which data it needs (:meth:`PaperPlan.prepare`: pipelines, spaces, tuning; each step resumable), which
groups of cells it trains (:meth:`PaperPlan.groups`), its tables with the paper's numbers
(:meth:`PaperPlan.tables`), its headline findings (:meth:`PaperPlan.findings`) and any analyses that are not
training runs (:meth:`PaperPlan.sections`). The reproduction (:mod:`parabit.reproduction.reproduce`) decides the
seeds, runs the cells and writes the document.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from parabit.config import Config, ConfigError
from parabit.paths import output_root
from parabit.papers.cells import Group, Results
from parabit.papers.records import CellRecord
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.tables import PaperTable

if TYPE_CHECKING:
    from parabit.tracking import RunTracker

PipelineRunner = Callable[[Any], Any]
"""Runs a named pipeline (``backtranslate``, ``phrases``) on its config and returns its result. The pipelines are
defined above the library (the ``pipelines`` package), so the command that starts the reproduction hands them in."""


class ReproductionSettings(Protocol):
    """What a plan reads of the reproduction's config (:class:`parabit.reproduction.config.ReproduceConfig`, which
    lives above the papers and holds each paper's section as the attribute named by its ``key``)."""

    quick: bool
    experiment: str

    @property
    def prefix(self) -> str: ...

    @property
    def figures_path(self) -> Path: ...


@dataclass(frozen=True)
class Section:
    """An analysis a plan adds to its part of the document: a markdown ``body`` and figure files (PNG) shown
    under it."""

    title: str
    body: str
    figures: tuple[Path, ...] = ()


CellTrainer = Callable[["PaperPlan", list[Group]], Results]
"""Finds or trains the first-seed cells of a data step's own groups (recorded in the ledger as every cell is)."""


@dataclass
class PlanContext:
    """What every plan may use: the reproduction's config (quick mode, seeds, names), the pipelines, the parent
    MLflow run, a working folder per paper, and, while the reproduction runs, cells for its data step
    (:meth:`train_cells`) and a way to record a long data step's progress (:meth:`record_progress`)."""

    config: ReproductionSettings
    pipelines: Mapping[str, PipelineRunner] = field(default_factory=dict)
    tracker: "RunTracker | None" = None
    cells: CellTrainer | None = None
    progress: Callable[["PaperPlan"], None] | None = None
    history: Callable[[str], list[CellRecord]] | None = None

    def recorded(self, paper: str) -> list[CellRecord]:
        """Every cell record of ``paper`` in the ledger, stale ones included (what its cells have cost on which
        machines: the basis of a plan's estimate of hours); empty without a ledger."""
        return self.history(paper) if self.history is not None else []

    @property
    def quick(self) -> bool:
        return self.config.quick

    def workdir(self, paper: str) -> Path:
        """``<outputs>/reproduction/<prefix>/<paper>``: a plan's own derived data (selections, spaces, analyses)."""
        folder = output_root() / "reproduction" / self.config.prefix / paper
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def train_cells(self, plan: "PaperPlan", groups: list[Group]) -> Results:
        """The first-seed cells of ``groups``, which ``plan``'s data step needs trained (e.g. tuning at the cells'
        own scale): found in the ledger or trained, and recorded, as every cell is (so a step resumed elsewhere
        finds them). The groups must be among :meth:`PaperPlan.groups` too, so the document lists them."""
        if self.cells is None:
            raise RuntimeError(f"{plan.key}'s data step trains cells: run it through `parabit reproduce`, which "
                               "provides them")
        return self.cells(plan, groups)

    def record_progress(self, plan: "PaperPlan") -> None:
        """Record what ``plan``'s data step has computed so far (its :meth:`PaperPlan.facts`), so that a run that
        stops before the step ends goes on from there (nothing is recorded outside a reproduction)."""
        if self.progress is not None:
            self.progress(plan)

    def pipeline(self, name: str, config: Any) -> Any:
        if name not in self.pipelines:
            raise RuntimeError(f"the reproduction was started without the {name!r} pipeline; run it through "
                               "`parabit reproduce`, which provides every pipeline")
        return self.pipelines[name](config)


class PaperPlan(ABC):
    """One seed paper's reproduction (see the module docstring). ``key`` names it on the command line
    (``--seed-paper``), in run names and as its section of the reproduction config; ``title`` heads its part of the
    document. A new paper is its package and one line in :data:`parabit.reproduction.plans.PLANS`: the reproduction
    config takes the paper's section from :attr:`settings_model`."""

    key: ClassVar[str]
    title: ClassVar[str]
    settings_model: ClassVar[type[Config]]
    """The model of this paper's section of the reproduction config (``<key>:``, read as :attr:`settings`): the
    config files it trains from and its own settings."""

    def __init__(self, context: PlanContext):
        self.context = context
        self.missing: dict[str, str] = {}  # groups that could not be prepared here, and why (shown as missing)

    @property
    def quick(self) -> bool:
        return self.context.quick

    @property
    def settings(self) -> Any:
        """This paper's section of the reproduction config (``config.<key>``); a :class:`ConfigError` when the
        config has none (a plan is only built for a paper whose section is given)."""
        section = getattr(self.context.config, self.key)
        if section is None:
            raise ConfigError(f"the reproduction config has no `{self.key}:` section: {self.key}'s plan needs its "
                              "settings (the config files it trains from)")
        return section

    @cached_property
    def workdir(self) -> Path:
        """This paper's working folder (created on first use)."""
        return self.context.workdir(self.key)

    def prepare(self, groups: set[str] | None = None) -> None:
        """Build what the cells read (resumable: a finished step is skipped); ``groups``: only what these groups need
        (None: every group; a plan may build more). A plan restored from the ledger (:meth:`restore`) takes what its
        facts hold instead of computing it again where the digest allows (:meth:`reused`). Default: nothing."""

    def reused(self) -> list[str]:
        """What a data step run again takes from the restored facts rather than computing (e.g. sweeps whose choice
        the record holds), in a few words each. Default: nothing."""
        return []

    def data_fingerprint(self) -> Any:
        """What :meth:`prepare` depends on (its settings, the pipeline configs it runs), JSON-able; None when the
        paper prepares nothing. Its digest keys the paper's prepared record in the ledger and is part of every
        cell's digest, so changed data settings make the cells trained on the old data stale."""
        return None

    def cells_fingerprint(self, group: Group) -> Any:
        """What the cells of ``group`` read of the prepared data: the data part of their digest. Default: the whole
        :meth:`data_fingerprint`. A plan narrows it to what a group's cells read (leaving out, e.g., the settings
        of a tuning step whose choice is already in the cells' own training config, or a dictionary the group never
        reads), so a change to its data step makes stale exactly the cells whose inputs it changes."""
        return self.data_fingerprint()

    def facts(self) -> dict[str, Any]:
        """What :meth:`prepare` computed that :meth:`groups`, :meth:`tables` and :meth:`sections` read (sizes,
        paths, tuned thresholds, analyses), JSON-able; kept in the ledger, so the document is written again in a
        checkout that never ran :meth:`prepare`: the JSON of the paper's versioned facts model
        (:class:`~parabit.papers.facts.PaperFacts`). Default: nothing beyond :attr:`missing`."""
        return {}

    def restore(self, facts: dict[str, Any]) -> None:
        """Take back what :meth:`facts` returned (instead of running :meth:`prepare`), as any version of it wrote
        it: the paper's facts model validates the record, migrating an older shape to its own."""

    @abstractmethod
    def groups(self) -> list[Group]:
        """Every group of cells this reproduction trains (called after :meth:`prepare`)."""

    def cell_seconds(self, group: Group, results: Results) -> float | None:
        """The estimated training seconds of one cell of ``group``, when the plan has a model of its speed (None:
        the document takes the group's newest record)."""
        return None

    @abstractmethod
    def tables(self) -> list[PaperTable]:
        """The paper's tables with the entries our groups fill."""

    @abstractmethod
    def findings(self) -> list[Finding]:
        """The paper's headline findings, each with a verdict rule."""

    def deferred(self) -> set[str]:
        """Groups that train last, after every seed of every other group (costly table-only groups no finding or
        departure needs). Default: none."""
        return set()

    def departures(self) -> list[Departure]:
        """Every way the cells differ from the paper, measured or not (the document's departures table). Default:
        none listed."""
        return []

    def every_seed(self) -> set[str]:
        """Groups no finding compares that still train with every seed (e.g. ablations whose effect a reader weighs
        whatever its size). Default: none."""
        return set()

    def headline(self) -> Finding | None:
        """The paper's central comparison, shown under each departure: the first finding measured by cells."""
        return next((f for f in self.findings() if f.groups and f.metric is not None and f.reference is None), None)

    def departure_effects(self) -> list[Finding]:
        """Each measured departure's other choice against ours, on the headline's metric and groups: what decides
        how many seeds an ablation group trains (as a finding's groups: 3 where the difference is under the margin)."""
        headline = self.headline()
        if headline is None:
            return []
        groups = list(dict.fromkeys(headline.groups))
        return [effect for departure in self.departures() for effect in departure.effects(headline.metric, groups)]

    def departure_claims(self) -> list[Finding]:
        """The headline as read under each measured departure's other choice (the departures table's last column):
        a verdict the document reports, so its ablation groups train 3 seeds too where its difference is under the
        margin."""
        headline = self.headline()
        if headline is None:
            return []
        return [claim for departure in self.departures() if (claim := departure.under(headline)) is not None]

    def setup(self) -> str:
        """Markdown: what was run, on which data, and how it differs from the paper."""
        return ""

    def scale(self) -> str:
        """A few words on the scale its cells train at (the document's overview table)."""
        return ""

    def sections(self, results: Results) -> list[Section]:
        """Analyses beyond the tables (measured after the cells ran). Default: none."""
        return []

    def quick_groups(self) -> set[str]:
        """The groups a ``--quick`` run trains: those of the first finding all of whose groups this run can train
        (quick data may leave some out; every table and finding is still written, the others marked not run)."""
        available = {group.key for group in self.groups()}
        for finding in self.findings():
            if finding.groups and set(finding.groups) <= available:
                return set(finding.groups)
        return set()
