"""Elgohary & Carpuat (2017) reproduced as the paper writes it: Table 3 (AVG with J_bi and J_pa on bilingual
sentences, bilingual phrases and monolingual phrases), Table 4 (undertrained words), Table 5 (pairs sharing a SICK
bigram removed) and Table 6 (bilingual phrases by number of pairs), with the paper's findings, each condition's
untrained start, and an ablation per departure from the paper (:meth:`ElgoharyPlan.departures`).

Built as the paper (and, where it is silent, Hermann & Blunsom's BiCVM code that it modified): eq. (1)'s sum
composition, a random row of its own for each test word training never saw, the phrase table unpruned, the J_bi
choices the paper states (§3.2: k at the top of the grid for the bilingual conditions; Euclidean for sentences and
monolingual phrases, cosine for bilingual phrases, which §4 contradicts: that reading is an ablation), and what the
paper leaves open (δ, λ, batch, the project's or BiCVM's optimiser and initial scale) tuned per condition on the
paper's dev set: a sweep at the paper's proxy scale, whose best points are then trained at the cells' own scale and
the best on dev taken. The phrase data comes from the ``phrases`` pipeline (the config's ``phrases_config``), run
first (resumable).

The plan runs the data step; what the step records is :mod:`~parabit.papers.elgohary.data`'s, and what the plan
declares from it is in modules of its own: the J_bi tuning (:mod:`~parabit.papers.elgohary.tuning`), the groups of
cells and ablations (:mod:`~parabit.papers.elgohary.groups`), the tables (:mod:`~parabit.papers.elgohary.tables`),
the findings (:mod:`~parabit.papers.elgohary.findings`), the departures (:mod:`~parabit.papers.elgohary.departures`),
the compute estimate (:mod:`~parabit.papers.elgohary.compute`) and the document's prose and sections
(:mod:`~parabit.papers.elgohary.report`).
"""

from __future__ import annotations

from pydantic import NonNegativeInt, PositiveInt

from parabit.config import Config, ConfigFile
from parabit.papers.cells import Group, Results
from parabit.papers.departures import Departure
from parabit.papers.elgohary.analyses import pairs_available
from parabit.papers.elgohary.compute import cell_seconds
from parabit.papers.elgohary.config import MAIN, Condition, phrase_data_paths
from parabit.papers.elgohary.data import ElgoharyData, tuning_key
from parabit.papers.elgohary.departures import paper_departures
from parabit.papers.elgohary.findings import paper_findings
from parabit.papers.elgohary.groups import ablation_config, cell_groups, deferred_groups, every_seed_groups
from parabit.papers.elgohary.paper import TABLE6_SIZES
from parabit.papers.elgohary.report import report_sections, scale_text, setup_text
from parabit.papers.elgohary.tables import paper_tables
from parabit.papers.elgohary.tuning import rescore_tuning, run_tuning_sweep
from parabit.papers.findings import Finding
from parabit.papers.plan import Section
from parabit.papers.tables import PaperTable


class ElgoharySettings(Config):
    """Elgohary & Carpuat's runs: ``config`` (a :class:`~parabit.papers.elgohary.config.ReproductionConfig` YAML:
    conditions, objectives, settings, analyses, ablations; no default: the reproduction config names it, a relative
    path is read from the project folder). ``jbi_sweep``: the sweep space (a ``parabit sweep --space`` YAML) run on
    the paper's dev set (STS 2012 SMT-europarl train) once per J_bi condition, over that condition's pairs, whose
    best point gives the condition's J_bi cells their settings, as the paper tuned each condition (null, the
    default: no sweep, the config's ``jbi`` as given); its trials and choices are part of the paper's prepared
    record in the ledger. ``rescore``: how many of each sweep's best points (at least one of each optimiser) are
    then trained at the cells' own scale (their pairs and epochs, the first seed) and scored on the dev set, the
    best there giving the condition's cells their settings (0: the sweep's own best point). The sweep runs at the
    paper's proxy scale (its J_pa speed-up), which a point's rank need not survive: these runs are cells of their
    own (``<condition>-jbi-rescore<i>``), recorded in the ledger. ``--quick``: ``quick_conditions`` only (no phrase
    pipeline), ``quick_pairs`` pairs each,
    one epoch, no analyses or ablations."""

    config: ConfigFile
    """The paper's reproduction config (a :class:`~parabit.papers.elgohary.config.ReproductionConfig` YAML):
    conditions, objectives, settings, analyses, ablations. A relative path is read from the project folder."""
    jbi_sweep: ConfigFile | None = None
    """A sweep space (`parabit sweep --space` YAML) run on the paper's dev set once per J_bi condition, whose best
    point sets that condition's J_bi cells, as the paper tuned each condition. None: no sweep, the config's `jbi`."""
    rescore: NonNegativeInt = 0
    """How many of each sweep's best points (the best of each optimiser among them) are retrained at the cells' own
    scale, first seed, and compared on dev, since a rank at the sweep's proxy scale need not hold; 0: the sweep's own
    best point."""
    quick_pairs: PositiveInt = 2000
    """With `--quick`: training pairs of each condition (one epoch, no sweep, analyses or ablations)."""
    quick_conditions: tuple[Condition, ...] = ("bilingual_sentences", "ppdb")
    """With `--quick`: the conditions trained, in place of the config's; the default needs no phrase pipeline."""


class ElgoharyPlan(ElgoharyData):
    key = "elgohary"
    title = "Elgohary & Carpuat 2017, monolingual representations via bilingual supervision (Tables 3–6)"
    settings_model = ElgoharySettings

    def prepare(self, groups: set[str] | None = None) -> None:
        """The data step: the phrase tables, each tuning's sweep and re-scoring, the pairs each condition offers
        and Table 6's sizes, into :class:`~parabit.papers.elgohary.data.ElgoharyData`'s facts."""
        phrases = self.config.phrases()
        if self.config.needs_phrases:
            self.context.pipeline("phrases", phrases)
        self.data_paths = phrase_data_paths(phrases)
        europarl = self.config.europarl_phrases() if "data" in self.config.ablations else None
        if europarl is not None:
            self.context.pipeline("phrases", europarl)
            self.europarl_paths = phrase_data_paths(europarl)
        # A sweep or a re-scoring restored from the ledger is not run again: its trials and choice are recorded.
        if self.settings.jbi_sweep and not self.quick and "jbi" in self.config.objectives:
            for condition, reading in self.tunings():
                if tuning_key(condition, reading) not in self.sweeps:
                    self.sweeps[tuning_key(condition, reading)] = run_tuning_sweep(self, condition, reading)
                    self.context.record_progress(self)
            for condition, reading in self.tunings() if self.settings.rescore else ():
                if "choice" not in self.rescored.get(tuning_key(condition, reading), {}):
                    rescore_tuning(self, condition, reading)
                    self.context.record_progress(self)
        if self.has_sizes or "memorisation" in self.config.analyses:
            # Counted from the main cells' own prepared data (a capped sample counts what it left out too).
            self.available = {c: pairs_available(self.training_config(c, "jbi").data) for c in self.config.conditions}
        if "data" in self.config.ablations:
            self.europarl_available = {c: pairs_available(ablation_config(self, c, "data").data) for c in MAIN
                                       if c in self.config.conditions}
        if self.has_sizes:
            whole = self.available["bilingual_phrases"]
            sizes = {min(n, whole): label for n, label in zip(self.config.size_pairs, TABLE6_SIZES)}
            if "bilingual_sentences" in self.available:  # the paper's equal-size comparison with sentences
                sizes.setdefault(min(self.available["bilingual_sentences"], whole), "= BiSent")
            self.sizes = dict(sorted(sizes.items()))

    # -- what the plan declares (each in its own module) -------------------------------------------------------
    def groups(self) -> list[Group]:
        return cell_groups(self)

    def every_seed(self) -> set[str]:
        return every_seed_groups()

    def deferred(self) -> set[str]:
        return deferred_groups(self)

    def cell_seconds(self, group: Group, results: Results) -> float | None:
        return cell_seconds(self, group, results)

    def tables(self) -> list[PaperTable]:
        return paper_tables(self)

    def findings(self) -> list[Finding]:
        return paper_findings(self)

    def departures(self) -> list[Departure]:
        return paper_departures(self)

    def scale(self) -> str:
        return scale_text(self)

    def setup(self) -> str:
        return setup_text(self)

    def sections(self, results: Results) -> list[Section]:
        return report_sections(self, results)
