"""Elgohary & Carpuat (2017) reproduced as the paper writes it: Table 3 (AVG with J_bi and J_pa on bilingual
sentences, bilingual phrases and monolingual phrases), Table 4 (undertrained words), Table 5 (pairs sharing a SICK
bigram removed) and Table 6 (bilingual phrases by number of pairs), with the paper's findings, each condition's
untrained start, and an ablation per departure from the paper (:meth:`ElgoharyPlan.departures`).

Built as the paper (and, where it is silent, Hermann & Blunsom's BiCVM code that it modified): eq. (1)'s sum
composition, a random row of its own for each test word training never saw, the phrase table unpruned, J_bi tuned
per condition on the paper's dev set over both distances and over the project's and BiCVM's optimiser and initial
scale. The phrase data comes from the ``phrases`` pipeline (the config's ``phrases_config``), run first (resumable).
"""

from __future__ import annotations

import numpy as np
from pydantic import PositiveInt

from parabit.config import Config, ConfigFile, load_config, read_yaml
from parabit.papers.elgohary.analyses import TEST_SETS, pairs_available, undertrained_ratios
from parabit.papers.elgohary.config import Condition, ReproductionConfig, phrase_data_paths, train_config
from parabit.papers.elgohary.paper import (CONDITION_LABELS, OBJECTIVE_LABELS, ROWS, TABLE4, TABLE5, TABLE6, TABLE6_SIZES,
                                    paper_value)
from parabit.paths import project_path
from parabit.papers.cells import Group
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.metrics import Metric
from parabit.papers.plan import PaperPlan, Section
from parabit.papers.tables import Entry, PaperTable, Row

YEARS = ("sts2012", "sts2013", "sts2014", "sts2015")
STS_AVG = Metric("STS 2012–2015 mean of yearly avg r", tuple(f"{y}/mean/pearson" for y in YEARS))
SICK = Metric.named("sick/test/pearson", "SICK test r")
UNDERTRAINED = Metric("undertrained-token ratio, mean of STS 2012–2015 and SICK", ("-",))
PAPER_TABLE4_COLUMN = {"ppdb": 0, "pivot_paraphrases": 0, "bilingual_phrases": 1, "bilingual_sentences": 2}
MONO = ("ppdb", "pivot_paraphrases")
MAIN = ("bilingual_sentences", "bilingual_phrases")  # the paper's central comparison, which every ablation repeats
OPTIMISER = "optim.name"
# Ablation group suffixes (run names: <prefix>-elgohary-<condition>-jbi-<suffix>-s<seed>).
ABLATION_SUFFIX = {"composition": "mean", "pruning": "pruned", "optimiser": "otheroptimiser", "data": "europarl",
                   "tuning": "earliertuning"}
# Pairs × epochs per second of a J_bi cell on 2 cores before this plan's own cells measure it: the earlier run's
# slowest bilingual-phrase J_bi cell (342,303 pairs × 10 epochs in 1,063 s, batch 25; docs/reproduction/elgohary.jsonl).
EARLIER_THROUGHPUT = 342_303 * 10 / 1063
ABLATION_LABELS = {"composition": "mean composition", "pruning": "count-pruned phrase table",
                   "optimiser": "the other optimiser", "data": "Europarl only", "tuning": "the earlier single setting"}


def sweep_trials(sweep: str, parameters: list[str], metric: str) -> list[dict]:
    """Every trial of ``sweep``: its parameters and last ``metric``, from its MLflow run (best first)."""
    from mlflow.tracking import MlflowClient

    from parabit.tracking import tags
    from parabit.tracking.store import tracking_uri

    client = MlflowClient(tracking_uri())
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()],
                              f"tags.`{tags.SWEEP}` = '{sweep}' and tags.`{tags.KIND}` = 'trial'")
    trials = [{"trial": run.info.run_name, "status": run.info.status,
               "params": {p: run.data.params.get(p) for p in parameters}, metric: run.data.metrics.get(metric),
               "epochs": run.data.metrics.get("epoch")} for run in runs]
    return sorted(trials, key=lambda t: -(t[metric] if t[metric] is not None else float("-inf")))


def typed_params(params: dict[str, str | None], values: dict[str, list]) -> dict:
    """A trial's parameters as MLflow keeps them (strings) turned back into the sweep space's values."""
    return {path: next((v for v in values[path] if str(v) == text), text) for path, text in params.items()}


def best_other(sweep: dict, parameter: str, chosen) -> dict | None:
    """The sweep's best trial (by dev score) whose ``parameter`` is not ``chosen``: the best of the other choice."""
    others = [t for t in sweep["trials"] if t["dev_score"] is not None and t["typed"].get(parameter) != chosen]
    return max(others, key=lambda t: t["dev_score"])["typed"] if others else None


def paper_sts_avg(condition: str, objective: str) -> float:
    values = [paper_value(year, "mean", condition, objective) for year in YEARS]
    return sum(values) / len(values)


class ElgoharySettings(Config):
    """Elgohary & Carpuat's runs: ``config`` (a :class:`~parabit.papers.elgohary.config.ReproductionConfig` YAML:
    conditions, objectives, settings, analyses, ablations; no default: the reproduction config names it, a relative
    path is read from the project folder). ``jbi_sweep``: the sweep space (a ``parabit sweep --space`` YAML) run on
    the paper's dev set (STS 2012 SMT-europarl train) once per J_bi condition, over that condition's pairs, whose
    best point gives the condition's J_bi cells their settings, as the paper tuned each condition (null, the
    default: no sweep, the config's ``jbi`` as given); its trials and choices are part of the paper's prepared
    record in the ledger. ``--quick``: ``quick_conditions`` only (no phrase pipeline), ``quick_pairs`` pairs each,
    one epoch, no analyses or ablations."""

    config: ConfigFile
    jbi_sweep: ConfigFile | None = None
    quick_pairs: PositiveInt = 2000
    quick_conditions: tuple[Condition, ...] = ("bilingual_sentences", "ppdb")


class ElgoharyPlan(PaperPlan):
    key = "elgohary"
    title = "Elgohary & Carpuat 2017, monolingual representations via bilingual supervision (Tables 3–6)"

    def __init__(self, context):
        super().__init__(context)
        settings = self.settings
        overrides = {"conditions": settings.quick_conditions, "max_pairs": settings.quick_pairs, "epochs": 1,
                     "analyses": [], "ablations": [], "condition_pairs": {}} if self.quick else {}
        self.config = load_config(ReproductionConfig, project_path(settings.config), overrides)
        self.configured = self.config.model_copy(deep=True)  # before the sweeps chose the J_bi settings
        self.data_paths: dict[str, str] = {}
        self.europarl_paths: dict[str, str] = {}
        self.sizes: dict[int, str] = {}  # Table 6: pairs -> the paper's size it stands for
        self.available: dict[str, int] = {}
        self.sweeps: dict[str, dict] = {}  # the J_bi sweep of each condition: its trials and choice
        self._ratios: dict | None = None  # Table 4
        self._filtered_counts: dict[str, int] = {}  # Table 5: pairs left without a SICK bigram

    # -- data ------------------------------------------------------------------------------------------------
    def prepare(self, groups: set[str] | None = None) -> None:
        phrases = self.config.phrases()
        if self.config.needs_phrases:
            self.context.pipeline("phrases", phrases)
        self.data_paths = phrase_data_paths(phrases)
        europarl = self.config.europarl_phrases() if "data" in self.config.ablations else None
        if europarl is not None:
            self.context.pipeline("phrases", europarl)
            self.europarl_paths = phrase_data_paths(europarl)
        # A sweep restored from the ledger is not run again: its trials and choice are already recorded there.
        if self.settings.jbi_sweep and not self.quick and "jbi" in self.config.objectives:
            for condition in self.config.conditions:
                if condition not in self.sweeps:
                    self.sweeps[condition] = self._sweep(condition)
        if self.has_sizes or "memorisation" in self.config.analyses:
            # Counted from the main cells' own prepared data (a capped sample counts what it left out too).
            self.available = {c: pairs_available(self._train(c, "jbi").data) for c in self.config.conditions}
        if self.has_sizes:
            whole = self.available["bilingual_phrases"]
            sizes = {min(n, whole): label for n, label in zip(self.config.size_pairs, TABLE6_SIZES)}
            if "bilingual_sentences" in self.available:  # the paper's equal-size comparison with sentences
                sizes.setdefault(min(self.available["bilingual_sentences"], whole), "= BiSent")
            self.sizes = dict(sorted(sizes.items()))

    def reused(self) -> list[str]:
        return [f"the J_bi sweeps of {len(self.sweeps)} conditions"] if self.sweeps else []

    def _sweep(self, condition: str) -> dict:
        """Run (or resume) the J_bi sweep on ``condition``'s pairs, with every setting the cells share (composition,
        unknown words, dev set); its best point is that condition's J_bi settings."""
        from parabit.sweeps.space import load_space
        from parabit.sweeps.sweep import run_sweep

        name = f"{self.context.config.prefix}-elgohary-jbi-{condition}"
        shared = {k: v for k, v in self.config.common.items() if not k.startswith("evaluation.also")}
        data = {"data.condition": condition, **({"data.path": self.data_paths[condition]}
                                                 if condition in self.data_paths else {})}
        space = load_space(project_path(self.settings.jbi_sweep), name=name, overrides={
            **shared, "tracking.experiment": self.context.config.experiment, "tracking.register_as": "", **data})
        summary = run_sweep(space)
        values = {p.path: sorted({v for point in space.points() for v in [point[p.path]]}, key=str)
                  for p in space.parameters}
        trials = sweep_trials(name, [p.path for p in space.parameters], space.search.metric)
        for trial in trials:
            trial["typed"] = typed_params(trial["params"], values)
        return {"name": name, "space": self.settings.jbi_sweep, "parent_run_id": summary.parent_run_id,
                "best_params": summary.best_params, "best_dev_score": summary.best_dev_score, "trials": trials}

    def data_fingerprint(self):
        sweep = None
        if self.settings.jbi_sweep and not self.quick:
            sweep = read_yaml(project_path(self.settings.jbi_sweep))
        phrases = [self.configured.phrases(), self.configured.europarl_phrases()] if not self.quick else []
        return {"settings": self.settings, "config": self.configured, "quick": self.quick, "sweep": sweep,
                "phrases": phrases}

    def facts(self) -> dict:
        return {"data_paths": dict(self.data_paths), "europarl_paths": dict(self.europarl_paths),
                "available": dict(self.available), "sizes": [[pairs, label] for pairs, label in self.sizes.items()],
                "sweeps": self.sweeps,
                "undertrained": self._undertrained() if "undertrained" in self.config.analyses else {},
                "filtered": {c: self._filtered(c) for c in self.available}
                if "memorisation" in self.config.analyses else {}}

    def restore(self, facts: dict) -> None:
        self.data_paths = dict(facts["data_paths"])
        self.europarl_paths = dict(facts["europarl_paths"])
        self.available = dict(facts["available"])
        self.sizes = {int(pairs): label for pairs, label in facts["sizes"]}
        self.sweeps = dict(facts["sweeps"])
        self._ratios = facts["undertrained"]
        self._filtered_counts = facts["filtered"]

    @property
    def has_sizes(self) -> bool:
        return "sizes" in self.config.analyses and "bilingual_phrases" in self.config.conditions

    def tuned(self, condition: str) -> dict:
        """The J_bi settings of ``condition``'s cells: its sweep's best point (the configured ``jbi`` without one)."""
        sweep = self.sweeps.get(condition)
        return dict(sweep["best_params"]) if sweep is not None else {}

    def _train(self, condition: str, objective: str, overrides: dict | None = None, **data):
        tuned = self.tuned(condition) if objective == "jbi" else {}
        return train_config(self.config, condition, objective, self.data_paths, overrides={**tuned, **(overrides or {})},
                            **data)

    def ablation(self, condition: str, ablation: str):
        """The J_bi config of ``condition`` with one departure switched to its other choice (None: the ablation does
        not apply to this condition, or its sweep found no other choice)."""
        if ablation == "composition":
            return self._train(condition, "jbi", {"model.options": {"pooling": "mean"}})
        if ablation == "pruning":
            return self._train(condition, "jbi", min_pair_count=self.config.pruned_min_count) \
                if condition == "bilingual_phrases" else None
        if ablation == "optimiser":
            sweep = self.sweeps.get(condition)
            other = best_other(sweep, OPTIMISER, self.tuned(condition).get(OPTIMISER)) if sweep else None
            return None if other is None else self._train(condition, "jbi", other)
        if ablation == "data":
            if condition == "bilingual_sentences":
                return self._train(condition, "jbi", sources=["europarl"])
            return self._train(condition, "jbi", path=self.europarl_paths[condition])
        if ablation == "tuning":
            return self._train(condition, "jbi", self.configured.jbi) if condition in self.sweeps else None
        return None

    def ablation_group(self, condition: str, ablation: str) -> str:
        return f"{condition}-jbi-{ABLATION_SUFFIX[ablation]}"

    # -- groups ----------------------------------------------------------------------------------------------
    def groups(self) -> list[Group]:
        """The main comparison first (BiSent and BiPh J_bi, then their ablations), so a long run decides the
        paper's central claim early; then the rest of Table 3, Table 5 and Table 6."""
        conditions, objectives = self.config.conditions, self.config.objectives
        cells = [(c, o) for c in conditions for o in objectives]
        first = [cell for cell in cells if cell in [(c, "jbi") for c in MAIN]]
        table3 = lambda c, o: Group(f"{c}-{o}", self._train(c, o), f"{CONDITION_LABELS[c]} {OBJECTIVE_LABELS[o]}")  # noqa: E731
        groups = [table3(c, o) for c, o in first]
        if "jbi" in objectives:
            for ablation in self.config.ablations:
                for condition in (c for c in MAIN if c in conditions):
                    config = self.ablation(condition, ablation) if ablation in ABLATION_SUFFIX else None
                    if config is not None:
                        groups.append(Group(self.ablation_group(condition, ablation), config,
                                            f"{CONDITION_LABELS[condition]} J_bi, {ABLATION_LABELS[ablation]}"))
        groups += [table3(c, o) for c, o in cells if (c, o) not in first]
        if "memorisation" in self.config.analyses and "jbi" in objectives:
            groups += [Group(f"{c}-jbi-nosickbigram", self._train(c, "jbi", drop_bigrams_of=["sick"]),
                             f"{CONDITION_LABELS[c]} J_bi, no SICK bigram") for c in conditions]
        groups += [Group(self._size_group(n), self._train("bilingual_phrases", "jbi", max_pairs=n),
                         f"BiPh J_bi {n:,} pairs") for n in self.sizes if self._size_group(n) != "bilingual_phrases-jbi"]
        return groups

    def deferred(self) -> set[str]:
        """Table 6's sizes above the main comparison's: hours each, one seed, no finding reads them."""
        main = self._pairs("bilingual_phrases") if "bilingual_phrases" in self.available else None
        return {self._size_group(n) for n in self.sizes if main is not None and n > main}

    def _size_group(self, pairs: int) -> str:
        main = min(self.config.pairs_of("bilingual_phrases") or pairs, self.available.get("bilingual_phrases", pairs))
        return "bilingual_phrases-jbi" if pairs == main else f"bilingual_phrases-jbi-{pairs}"

    # -- tables ----------------------------------------------------------------------------------------------
    def tables(self) -> list[PaperTable]:
        cells = [(c, o) for c in self.config.conditions for o in self.config.objectives]
        table3 = PaperTable(
            "Table 3 (Pearson r; paper in brackets; MonoPh stands for both PPDB and pivot paraphrases)",
            tuple(f"{CONDITION_LABELS[c]} {OBJECTIVE_LABELS[o]}" for c, o in cells),
            tuple(Row(f"**{label}**" if subset == "mean" else label, tuple(
                Entry(f"{c}-{o}", Metric.named(f"{benchmark}/{subset}/pearson", digits=2),
                      paper_value(benchmark, subset, c, o)) for c, o in cells))
                for benchmark, subset, label in ROWS)
            + tuple(Row(f"*{label}, untrained start*", tuple(
                Entry(f"{c}-{o}", Metric.named(f"untrained/{benchmark}/{subset}/pearson", digits=2)) for c, o in cells))
                for benchmark, subset, label in ROWS if subset in ("mean", "test")),
            corner="set",
            note="The untrained start of a column is its cells' own model before the first step (the same seed, "
                 "vocabulary and unknown-word rule), evaluated by the same runs: a trained number below it means "
                 "training made the model worse.")
        tables = [table3]
        if "memorisation" in self.config.analyses and "jbi" in self.config.objectives:
            rows = []
            for c in self.config.conditions:
                paper = TABLE5["MonoPh" if c in MONO else CONDITION_LABELS[c]]
                rows.append(Row(CONDITION_LABELS[c], (Entry(f"{c}-jbi", SICK, paper[0]),
                                                      Entry(f"{c}-jbi-nosickbigram", SICK, paper[1]))))
            counts = "; ".join(f"{CONDITION_LABELS[c]} {self.available[c]:,} → {self._filtered(c):,}"
                               for c in self.config.conditions if c in self.available)
            tables.append(PaperTable(
                "Table 5 (SICK test r, J_bi: all pairs vs pairs sharing no word bigram with SICK test)",
                ("all pairs", "no SICK bigram"), tuple(rows), corner="condition",
                note=f"Training pairs (all → no SICK bigram): {counts}. The paper: "
                     + "; ".join(f"{k} {v[2]}" for k, v in TABLE5.items()) + "."))
        if self.sizes:
            columns = [f"BiPh {n:,} ({label})" for n, label in self.sizes.items()]
            rows = []
            for name in TEST_SETS:
                metric = Metric.named(f"{name}/{'test' if name == 'sick' else 'mean'}/pearson", digits=2)
                entries = [Entry(self._size_group(n), metric, TABLE6[name][TABLE6_SIZES.index(label)]
                                 if label in TABLE6_SIZES else None) for n, label in self.sizes.items()]
                entries.append(Entry("bilingual_sentences-jbi" if "bilingual_sentences" in self.config.conditions
                                     else None, metric, paper_value(name, "test" if name == "sick" else "mean",
                                                                    "bilingual_sentences", "jbi")))
                rows.append(Row(name, tuple(entries)))
            tables.append(PaperTable(
                "Table 6 (bilingual phrases, J_bi, by number of pairs; then bilingual sentences; year avg / SICK r)",
                (*columns, f"BiSent {self.available.get('bilingual_sentences', 0):,}"), tuple(rows), corner="set",
                note="Seeded samples of the unpruned phrase table "
                     f"({self.available.get('bilingual_phrases', 0):,} pairs) at the paper's sizes "
                     + "/".join(TABLE6_SIZES) + " (a size beyond the table is the whole table), and as many phrase "
                     "pairs as there are sentence pairs (the paper's equal-size comparison, at 1.9M there). The "
                     "sizes above the main comparison's train with the first seed only."))
        return tables

    def _filtered(self, condition: str) -> int:
        if condition not in self._filtered_counts:
            self._filtered_counts[condition] = pairs_available(
                self._train(condition, "jbi", drop_bigrams_of=["sick"]).data)
        return self._filtered_counts[condition]

    # -- findings --------------------------------------------------------------------------------------------
    def findings(self) -> list[Finding]:
        have = {f"{c}-{o}" for c in self.config.conditions for o in self.config.objectives}
        p = paper_sts_avg
        candidates = [
            Finding("bilingual phrases beat bilingual sentences (J_bi)", "bilingual_phrases-jbi",
                    "bilingual_sentences-jbi", STS_AVG,
                    f"{p('bilingual_phrases', 'jbi'):.3f} vs {p('bilingual_sentences', 'jbi'):.3f}"),
            *(Finding(f"bilingual phrases beat monolingual phrases (J_bi; MonoPh = {CONDITION_LABELS[m]})",
                      "bilingual_phrases-jbi", f"{m}-jbi", STS_AVG,
                      f"{p('bilingual_phrases', 'jbi'):.3f} vs {p(m, 'jbi'):.3f}") for m in MONO),
            *(Finding(f"J_bi beats J_pa on bilingual {kind}", f"{c}-jbi", f"{c}-jpa", STS_AVG,
                      f"{p(c, 'jbi'):.3f} vs {p(c, 'jpa'):.3f}")
              for c, kind in (("bilingual_phrases", "phrases"), ("bilingual_sentences", "sentences"))),
            *(Finding(f"J_pa beats J_bi on monolingual phrases ({CONDITION_LABELS[m]})", f"{m}-jpa", f"{m}-jbi",
                      STS_AVG, f"{p(m, 'jpa'):.3f} vs {p(m, 'jbi'):.3f}") for m in MONO),
        ]
        findings = [f for f in candidates if {f.better, f.worse} <= have]
        if "memorisation" in self.config.analyses:
            findings += [
                Finding("removing pairs that share a SICK bigram hurts sentences (BiSent J_bi, all > filtered)",
                        "bilingual_sentences-jbi", "bilingual_sentences-jbi-nosickbigram", SICK, ".63 → .58"),
                Finding("... and leaves phrases on par (BiPh J_bi, filtered ≈ all)", "bilingual_phrases-jbi-nosickbigram",
                        "bilingual_phrases-jbi", SICK, ".66 → .65", relation="not_worse"),
            ]
        if self.sizes:
            # The main comparison's size against the paper's smallest: the largest comparison 3 seeds afford here
            # (the larger sizes are in Table 6, one seed each).
            by_label = {label: n for n, label in self.sizes.items()}
            main = next(n for n in self.sizes if self._size_group(n) == "bilingual_phrases-jbi") \
                if "bilingual_phrases-jbi" in {self._size_group(n) for n in self.sizes} else None
            smallest = by_label.get(TABLE6_SIZES[0])
            if main is not None and smallest is not None and smallest < main:
                label = self.sizes[main]
                paper = TABLE6_SIZES.index(label) if label in TABLE6_SIZES else len(TABLE6_SIZES) - 1
                findings.append(Finding(f"more phrase pairs help (BiPh J_bi, {main:,} > {smallest:,} pairs)",
                                        "bilingual_phrases-jbi", self._size_group(smallest), STS_AVG,
                                        f"{TABLE6_SIZES[paper]} {sum(TABLE6[y][paper] for y in YEARS) / 4:.3f} vs "
                                        f"0.5M {sum(TABLE6[y][0] for y in YEARS) / 4:.3f}"))
            if "bilingual_sentences" in self.available:
                equal = min(self.available["bilingual_sentences"], self.available["bilingual_phrases"])
                findings.append(Finding(f"at equal size ({equal:,} pairs) phrases beat sentences (J_bi)",
                                        self._size_group(equal), "bilingual_sentences-jbi", STS_AVG,
                                        f"1.9M: {sum(TABLE6[y][2] for y in YEARS) / 4:.3f} vs "
                                        f"{p('bilingual_sentences', 'jbi'):.3f}"))
        if "undertrained" in self.config.analyses and {"bilingual_phrases", "bilingual_sentences"} <= \
                set(self.config.conditions):
            ratios = self._undertrained()
            mean = {c: sum(r.values()) / len(r) for c, r in ratios.items()}
            paper = {c: sum(v[PAPER_TABLE4_COLUMN[c]] for v in TABLE4.values()) / len(TABLE4) for c in ratios}
            findings.append(Finding(
                "phrase pairs leave more test tokens undertrained than sentence pairs (Table 4, ratio BiPh > BiSent)",
                metric=UNDERTRAINED, paper=f"{paper['bilingual_phrases']:.3f} vs {paper['bilingual_sentences']:.3f}",
                fixed=(mean["bilingual_phrases"], mean["bilingual_sentences"]), data_departures=("data", "scale")))
        findings.append(Finding("BiPh J_bi is close to the Paragram and GloVe reference columns",
                                untestable="Paragram-Phrase vectors do not ship here; GloVe baselines are in "
                                           "docs/quality.md (`parabit evaluate --encoder glove-mean`)"))
        return findings

    def _undertrained(self) -> dict[str, dict[str, float]]:
        if self._ratios is None:
            self._ratios = {c: undertrained_ratios(self._train(c, "jbi").data) for c in self.config.conditions}
        return self._ratios

    # -- departures ------------------------------------------------------------------------------------------
    def departures(self) -> list[Departure]:
        """Where these cells still differ from the paper, each ablation's other choice for the J_bi bilingual
        sentences and phrases, and what no ablation measures (and why)."""
        groups = self.groups()
        keys = {group.key for group in groups}
        ablations = set(self.config.ablations)

        def variants(ablation: str) -> dict[str, str]:
            return {f"{c}-jbi": self.ablation_group(c, ablation) for c in MAIN
                    if ablation in ablations and self.ablation_group(c, ablation) in keys}

        ablated = {self.ablation_group(c, a) for c in MAIN for a in ABLATION_SUFFIX}

        def jbi(*conditions: str) -> frozenset[str]:
            """The J_bi groups (Table 3's, 5's and 6's; not the ablations) of ``conditions`` (default: all): the
            cells that make a J_bi choice, whether or not an ablation trains its other choice."""
            return frozenset(g.key for g in groups if g.key not in ablated and g.config.objective.name == "jbi"
                             and (not conditions or g.config.data.condition in conditions))

        from_bitext = ("bilingual_sentences", "bilingual_phrases", "pivot_paraphrases")

        optimisers = "; ".join(f"{CONDITION_LABELS[c]}: {self.tuned(c).get(OPTIMISER, '—')}" for c in self.sweeps)
        earlier = self.configured.jbi
        sizes = ", ".join(f"{CONDITION_LABELS[c]} {self._pairs(c):,}" for c in self.available)
        return [
            Departure("composition", "eq. (1): g(x) = Σ W[:, i], a sum, as BiCVM's default `additive` model (the "
                      "poster says averaging)", "sum", "mean composition", variants("composition"), applies=jbi()),
            Departure("unknown test words", "W has a column for every word, randomly initialised: a test word "
                      "training never saw keeps a random column of its own", "a random row of its own (N(0, "
                      "init_std²), seeded by the word)", "one shared untrained unknown-word row",
                      prefix="shared_unknown" if "unknown_words" in ablations else ""),
            Departure("phrase table", "Moses phrase extraction, nothing pruned (Moses' extract keeps every pair)",
                      "every extracted pair", f"only pairs extracted ≥ {self.config.pruned_min_count} times",
                      variants("pruning"), applies=jbi("bilingual_phrases", "pivot_paraphrases")),
            Departure("optimiser and initial scale", "not stated; the J_bi code it modified (BiCVM) trains with "
                      "AdaGrad (README η 0.05) from N(0, 0.1²) rows", "chosen per condition on the dev set among "
                      "Adam (lr 1e-3, rows N(0, 1)) and AdaGrad (lr 0.05, rows N(0, 0.1²))"
                      + (f": {optimisers}" if optimisers else ""), "the other optimiser (its best sweep point)",
                      variants("optimiser"), applies=jbi()),
            Departure("data", "1.9M Europarl sentence pairs (28 tokens on average) and 3M phrase pairs from them",
                      "Tatoeba (86 % of the pairs, short sentences) + the 20k-line Europarl sample",
                      "the Europarl sample alone (its sentences and its phrases)", variants("data"),
                      applies=jbi(*from_bitext)),
            Departure("tuning", "the grid over batch, δ, λ, k and both distances, per condition", "a stratified "
                      "sample of the grid per condition (as many points per distance and optimiser)",
                      f"the earlier single setting for every condition ({earlier})", variants("tuning"),
                      applies=jbi()),
            Departure("scale", "BiSent 1.9M, BiPh 3M, MonoPh 3M pairs", sizes or "as prepared",
                      unmeasured="no more bitext ships; Table 6 shows the phrase table at the paper's sizes"),
            Departure("tuning budget", "J_pa tuned on 100k pairs for 5 epochs; J_bi presumably on everything",
                      "J_bi tuned on 100k pairs for 5 epochs with ASHA", unmeasured="a trial on all pairs costs a "
                      "cell (up to hours) each; not affordable per grid point on 2 cores"),
            Departure("J_pa settings", "tuned (sampling MIX/MAX, distance)", f"Wieting et al.'s {self.config.jpa}",
                      unmeasured="J_pa is not the claim under test; its cells are the paper's comparison columns"),
            Departure("monolingual phrases", "PPDB XL, 3M pairs", "the shipped PPDB 1.0 lexical subset and pivot "
                      "paraphrases of the phrase table", unmeasured="PPDB XL does not ship"),
        ]

    # -- text ------------------------------------------------------------------------------------------------
    def scale(self) -> str:
        sizes = ", ".join(f"{CONDITION_LABELS[c]} {self._pairs(c):,}" for c in self.available)
        return f"{sizes or 'sizes when prepared'}; {self.config.epochs} epochs"

    def _pairs(self, condition: str) -> int:
        """How many pairs the main cells of ``condition`` train on."""
        cap = self.config.pairs_of(condition)
        return min(cap, self.available[condition]) if cap is not None else self.available[condition]

    def setup(self) -> str:
        sizes = ", ".join(f"{CONDITION_LABELS[c]} {self._pairs(c):,} of {n:,}" for c, n in self.available.items())
        common = ", ".join(f"{k} {v}" for k, v in self.config.common.items() if k != "tracking.register_as")
        return (f"AVG (300-d, random init) trained {self.config.epochs} epochs"
                + (f" on a seeded sample of each condition's pairs ({sizes})" if sizes else "")
                + ", all made from the same shipped en-es bitext (Tatoeba + the 20k-line Europarl sample; the paper: "
                "1.9M Europarl sentence pairs, 3M phrase pairs, 3M PPDB XL pairs). Bilingual phrases: eflomal "
                f"alignments and Moses-style extraction, no pair pruned (`parabit phrases`, `{self.config.phrases_config}`"
                "); monolingual phrases: PPDB 1.0 XXXL lexical synonyms (the shipped subset) and pivot paraphrases "
                f"from the same phrase table, two stand-ins for the paper's PPDB XL. Every cell: {common}. "
                + self._jbi_text() + f" J_pa {self.config.jpa}. The best epoch is not selected: every run reports "
                "its last epoch, as the paper.")

    def _jbi_text(self) -> str:
        if not self.sweeps:
            return f"J_bi settings {self.config.jbi} (as configured: no sweep ran)."
        chosen = "; ".join(f"{CONDITION_LABELS[c]} {sweep['best_params']} (dev r {sweep['best_dev_score']:.4f}, "
                           f"MLflow run `{sweep['parent_run_id']}`)" for c, sweep in self.sweeps.items())
        first = next(iter(self.sweeps.values()))
        return (f"J_bi settings, tuned per condition as the paper did: the best of {len(first['trials'])} trials of "
                f"the `{first['space']}` sweep over that condition's pairs, on the paper's dev set (STS 2012 "
                f"SMT-europarl train; trials below): {chosen}.")

    def _compute(self, results) -> str:
        """Each group's pairs, seeds and hours: estimated from the pairs × epochs per second this plan's finished
        cells trained at (the earlier run's until one has), and spent, from the records."""
        rates = [r.record.data["pairs_kept"] * self.config.epochs / r.seconds for r in results.all
                 if r.ok and r.seconds and (r.record.data or {}).get("pairs_kept")]
        rate = float(np.median(rates)) if rates else EARLIER_THROUGHPUT
        compared = {key for finding in self.findings() for key in finding.groups}
        ablations = {group for departure in self.departures() for group in departure.groups}
        deferred = self.deferred()
        lines = ["| group | pairs (at most) | seeds | estimated h | spent h (cells) |", "|---|---|---|---|---|"]
        total_estimated = total_spent = at_main_size = 0.0
        main = self._pairs("bilingual_phrases") if "bilingual_phrases" in self.available else None
        for group in self.groups():
            trained = [r.record.data.get("pairs_kept") for r in results.of(group.key) if r.record.data]
            pairs = trained[0] if trained and trained[0] else \
                group.config.data.max_pairs or self.available.get(group.config.data.condition, 0)
            seeds = 3 if group.key in compared else 1
            estimate = pairs * self.config.epochs * seeds / rate / 3600
            spent = sum(r.seconds or 0.0 for r in results.of(group.key)) / 3600
            total_estimated, total_spent = total_estimated + estimate, total_spent + spent
            at_main_size += estimate if pairs == main and group.key not in deferred else 0.0
            note = (" (+2 if its effect, or the headline under it, is under 0.05)" if group.key in ablations
                    else " (last)" if group.key in deferred else "")
            lines.append(f"| {group.title} | {pairs:,} | {seeds}{note} | {estimate:.1f} | {spent:.1f} ({len(results.of(group.key))}) |")
        lines.append(f"| **all** | | | **{total_estimated:.1f}** | **{total_spent:.1f}** |")
        source = (f"the median of this plan's {len(rates)} finished cells" if rates else
                  "the earlier run's slowest bilingual-phrase J_bi cell (342,303 pairs × 10 epochs in 1,063 s)")
        largest = max(self.config.size_pairs)
        scaled = total_estimated + at_main_size * (largest / main - 1) if main else total_estimated
        return ("\n".join(lines) + f"\n\nEstimated at {rate:,.0f} pairs × epochs per second per cell ({source}). "
                "Hours are cell-hours, as the spent column's sum of the cells' own times: cells trained side by side "
                "(`--parallel 2`) share the wall time. The J_bi sweeps (16 trials of 100,000 pairs × 5 "
                f"epochs per condition) and the data step come on top. Had every cell now at {main or 0:,} pairs "
                f"trained at {largest:,} instead, the plan would take about {scaled:.0f} h: the main comparison "
                "runs at the largest of the paper's sizes at which 3 seeds of it and its ablations fit a few days "
                "of 2 cores.")

    def _rederived(self, results) -> str:
        """Which cells read a phrase table of another size than the recorded one (empty when none did). eflomal's
        Gibbs sampler takes no seed, so the data step run again elsewhere aligns, and counts, a little differently."""
        lines = []
        for condition in ("bilingual_phrases", "pivot_paraphrases"):
            recorded = self.available.get(condition)
            for result in results.all:
                read = (result.record.data or {}).get("pairs_read") if result.ok else None
                if recorded and read and result.cell.group.startswith(condition) and read != recorded:
                    lines.append(f"| {result.cell.name} | {CONDITION_LABELS[condition]} | {read:,} | {recorded:,} | "
                                 f"{(result.record.data or {}).get('pairs_kept', 0):,} |")
        if not lines:
            return ""
        return ("| cell | condition | pairs in its table | in the recorded table | pairs it trained on |\n"
                "|---|---|---|---|---|\n" + "\n".join(lines) + "\n\neflomal's sampler takes no seed: the data "
                "step, run again on another machine for these cells, aligned the same sentences a little "
                "differently. The tables and findings keep the recorded sizes; these cells' records hold what they "
                "read.")

    def sections(self, results) -> list[Section]:
        sections = []
        for condition, sweep in self.sweeps.items():
            data = CONDITION_LABELS[condition]
            parameters = list(sweep["trials"][0]["params"]) if sweep["trials"] else []
            lines = ["| trial | " + " | ".join(parameters) + " | epochs | dev r | status |",
                     "|---" * (len(parameters) + 4) + "|"]
            for trial in sweep["trials"]:
                score = "—" if trial["dev_score"] is None else f"{trial['dev_score']:.4f}"
                epochs = "—" if trial["epochs"] is None else f"{trial['epochs']:.0f}"
                lines.append(f"| {trial['trial']} | " + " | ".join(str(trial["params"][p]) for p in parameters)
                             + f" | {epochs} | {score} | {trial['status']} |")
            sections.append(Section(f"The J_bi sweep on the {data} (random search with ASHA, dev = STS 2012 "
                                    "SMT-europarl train)", "\n".join(lines)))
        sections.append(Section("Compute: the plan's hours, estimated and spent", self._compute(results)))
        rederived = self._rederived(results)
        if rederived:
            sections.append(Section("Cells trained on a re-derived phrase table", rederived))
        if "undertrained" not in self.config.analyses:
            return sections
        ratios = self._undertrained()
        conditions = list(ratios)
        lines = ["| test set | " + " | ".join(CONDITION_LABELS[c] for c in conditions) + " |",
                 "|---" * (len(conditions) + 1) + "|"]
        for name in TEST_SETS:
            lines.append(f"| {name} | " + " | ".join(
                f"{ratios[c][name]:.2f} ({TABLE4[name][PAPER_TABLE4_COLUMN[c]]:.2f})" for c in conditions) + " |")
        return sections + [Section("Table 4 (share of test tokens seen fewer than 100 times in training; paper in brackets)",
                        "\n".join(lines) + "\n\nComputed from each condition's training pairs (no training run; "
                        "the paper's MonoPh column stands beside both PPDB and pivot paraphrases).")]
