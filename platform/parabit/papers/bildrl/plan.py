"""Chen et al. (2019) reproduced on an aligned target space: Table 3 (reverse-dictionary retrieval of held-out
words: BOW, CNN, GRU, ATT per direction, GRU/ATT multi-task, ATT joint, and the mono baselines) and Table 4
(bilingual paraphrase identification), with the paper's findings.

:class:`BilDRLPlan` is what the reproduction runs; each part it declares lives beside it in this folder:

* :mod:`~parabit.papers.bildrl.settings`: its settings (:class:`BilDRLSettings`, the reproduction config's
  ``bildrl:`` section) and what the other modules read of the plan;
* :mod:`~parabit.papers.bildrl.data`: the data step (the aligned spaces, the dictionaries and the paraphrase set
  rebuilt against them, the mono baselines' dictionary; all under the reproduction's output folder, each built once)
  and the facts it measures;
* :mod:`~parabit.papers.bildrl.stages`: which built stages a cell reads, so that a stage whose format changed makes
  stale only the cells that read it (:meth:`BilDRLPlan.cells_fingerprint`);
* :mod:`~parabit.papers.bildrl.groups`: the cell groups and each cell's config;
* :mod:`~parabit.papers.bildrl.tables` and :mod:`~parabit.papers.bildrl.findings`: Tables 3 and 4, the findings;
* :mod:`~parabit.papers.bildrl.departures`: the Setup text and the departures from the paper;
* :mod:`~parabit.papers.bildrl.sections`: the analyses beside the tables;
* :mod:`~parabit.papers.bildrl.paper`: the paper's numbers, and the directions and models of its Table 3 built here;
* :mod:`~parabit.papers.bildrl.mono`: the mono baselines' dictionary.
"""

from __future__ import annotations

from parabit.papers.bildrl.data import Measured, prepare_dictionaries
from parabit.papers.bildrl.departures import all_departures, scale_text, setup_text
from parabit.papers.bildrl.facts import BilDRLFacts
from parabit.papers.bildrl.findings import all_findings
from parabit.papers.bildrl.groups import all_groups, keys_needing
from parabit.papers.bildrl.sections import all_sections
from parabit.papers.bildrl.settings import BilDRLSettings
from parabit.papers.bildrl.stages import changed_formats, stages_read
from parabit.papers.bildrl.tables import all_tables
from parabit.papers.cells import Group, Results
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.plan import PaperPlan, Section
from parabit.papers.tables import PaperTable
from parabit.recipes.bildrl.aligned_space import space_report
from parabit.recipes.bildrl.config import DictionaryBuildConfig


class BilDRLPlan(PaperPlan):
    """The BilDRL reproduction: its folders and builds, with what its data step measured (``measured``); the parts
    it declares come from the modules beside it."""

    key = "bildrl"
    title = "Chen et al. 2019, BilDRL: learning to represent bilingual dictionaries (Tables 3 and 4)"
    settings_model = BilDRLSettings
    settings: BilDRLSettings

    def __init__(self, context):
        super().__init__(context)
        self.spaces = {lang: self.workdir / f"space-en-{lang}" for lang in ("es", "fr")}
        self._space_reports: dict[str, dict] | None = None
        self.measured = Measured()
        self.build = DictionaryBuildConfig(spaces={k: str(v) for k, v in self.spaces.items()},
                                           output_dir=str(self.workdir / "data"),
                                           test_words=self.settings.quick_test_words if self.quick
                                           else self.settings.test_words)
        self.splits = ("strict",) if self.quick else tuple(dict.fromkeys(("strict", *self.settings.splits)))
        self.builds = {split: self.build if split == "strict" else self.build.model_copy(update={
            "split": split, "output_dir": str(self.workdir / f"data-{split}")}) for split in self.splits}

    # -- data ------------------------------------------------------------------------------------------------
    def prepare(self, groups: set[str] | None = None) -> None:
        self._space_reports = None
        prepare_dictionaries(self.measured, self.spaces, self.builds, self.settings.space, self.settings.mono,
                             self.quick)
        if self.quick:
            self.missing.update({key: "quick mode builds no en-es dictionary (its Apertium translation of "
                                 "117k definitions takes minutes)" for key in keys_needing("en-es")})

    def data_fingerprint(self):
        # The authors' split is built from the same settings (the strict build's, with split: authors), and its
        # cells name its folder: adding it leaves the strict cells' digests as they were.
        settings = self.settings.model_copy(update={"splits": BilDRLSettings.model_fields["splits"].default})
        return {"settings": settings, "build": self.build, "quick": self.quick}

    def cells_fingerprint(self, group: Group):
        """The data fingerprint, and the formats of the changed stages the group's cells read (none: the data
        fingerprint alone, so a cell that reads no changed stage keeps its digest)."""
        formats = changed_formats(stages_read(group.config))
        return {**self.data_fingerprint(), "formats": formats} if formats else self.data_fingerprint()

    def facts(self) -> dict:
        """The spaces' reports and what the data step measured (:meth:`Measured.facts`)."""
        return self.measured.facts(self.space_reports()).ledger()

    def restore(self, facts: dict) -> None:
        """Take back the facts of a prepared record, of any version (:class:`BilDRLFacts` migrates older ones)."""
        recorded = BilDRLFacts.model_validate(facts)
        self._space_reports = {lang: report.model_dump() for lang, report in recorded.spaces.items()}
        self.measured.restore(recorded)

    def space_reports(self) -> dict[str, dict]:
        """Each aligned space's report (sizes, BLI before and after the map): read from the built spaces, or the
        ledger's copy when this checkout never built them."""
        if self._space_reports is None:
            self._space_reports = {lang: space_report(path) for lang, path in self.spaces.items()
                                   if (path / "space.json").is_file()}
        return self._space_reports

    # -- what the plan declares ------------------------------------------------------------------------------
    def groups(self) -> list[Group]:
        return all_groups(self)

    def tables(self) -> list[PaperTable]:
        return all_tables(self)

    def findings(self) -> list[Finding]:
        return all_findings(self)

    def departures(self) -> list[Departure]:
        return all_departures(self)

    def scale(self) -> str:
        return scale_text(self)

    def setup(self) -> str:
        return setup_text(self)

    def sections(self, results: Results) -> list[Section]:
        return all_sections(self, results)
