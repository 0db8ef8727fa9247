"""Wieting, Mallinson & Gimpel (2017) reproduced on the shipped data (see :mod:`parabit.papers.wieting`):
:class:`WietingPlan`, which holds what its data step computed (:class:`~parabit.papers.wieting.data.PreparedData`)
and delegates: the data step to :mod:`~parabit.papers.wieting.data`, the groups to
:mod:`~parabit.papers.wieting.groups`, the tables and prose to :mod:`~parabit.papers.wieting.report`, the findings
and departures to :mod:`~parabit.papers.wieting.findings`; its settings are
:class:`~parabit.papers.wieting.settings.WietingSettings`.
"""

from __future__ import annotations

from parabit.config import load_config
from parabit.backtranslation import PipelineConfig
from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.papers.cells import Group
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.plan import PaperPlan, Section
from parabit.papers.tables import PaperTable
from parabit.papers.wieting import analyses, report
from parabit.papers.wieting.data import PreparedData, prepare_data
from parabit.papers.wieting.facts import WietingFacts
from parabit.papers.wieting.findings import paper_departures, paper_findings
from parabit.papers.wieting.groups import cell_groups
from parabit.papers.wieting.settings import WietingSettings


class WietingPlan(PaperPlan):
    key = "wieting"
    title = "Wieting, Mallinson & Gimpel 2017, paraphrastic embeddings from back-translated bitext"
    settings_model = WietingSettings
    settings: WietingSettings

    def __init__(self, context):
        super().__init__(context)
        self.prepared = PreparedData()

    # -- the data step and the ledger's prepared record -----------------------------------------------------------
    def reused(self) -> list[str]:
        tuned = self.prepared.tuned
        return [f"the threshold sweeps of {len(tuned)} filters ({', '.join(tuned)})"] if tuned else []

    def prepare(self, groups: set[str] | None = None) -> None:
        prepare_data(self, self.prepared, groups)

    def data_fingerprint(self):
        """The settings, the pipeline configs and the training config (threshold tuning trains with it)."""
        return {"settings": self.settings, "quick": self.quick,
                "backtranslate": load_config(PipelineConfig, project_path(self.settings.backtranslate)),
                "roundtrip": load_config(PipelineConfig, project_path(self.settings.roundtrip)),
                "train": load_run_config(project_path(self.settings.train))}

    def facts(self) -> dict:
        return self.prepared.facts(self.settings.seed).ledger()

    def restore(self, facts: dict) -> None:
        """Take back the facts of a prepared record, of any version (:class:`WietingFacts` migrates older ones)."""
        self.prepared.restore(WietingFacts.model_validate(facts))

    def _comparisons(self) -> dict[str, analyses.Comparison]:
        return self.prepared.comparisons(self.settings.seed)

    # -- groups, tables, findings and text ---------------------------------------------------------------------
    def groups(self) -> list[Group]:
        return cell_groups(self.settings, self.quick, self.prepared.paths, self.prepared.sizes["main"])

    def tables(self) -> list[PaperTable]:
        return report.tables(self.settings, self.prepared)

    def findings(self) -> list[Finding]:
        return paper_findings(self.settings, self._comparisons())

    def departures(self) -> list[Departure]:
        return paper_departures()

    def scale(self) -> str:
        return report.scale(self.settings, self.quick, self.prepared.sizes)

    def setup(self) -> str:
        return report.setup(self.settings, self.quick, self.prepared.sizes)

    def sections(self, results) -> list[Section]:
        return report.sections(self.prepared.tuned, list(self._comparisons().values()),
                               self.context.config.figures_path)
