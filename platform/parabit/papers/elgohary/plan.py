"""Elgohary & Carpuat (2017) reproduced at the full shipped size of every condition: Table 3 (AVG with J_bi and
J_pa on bilingual sentences, bilingual phrases and monolingual phrases), Table 4 (undertrained words), Table 5
(pairs sharing a SICK bigram removed) and Table 6 (bilingual phrases by number of pairs), with the paper's findings.

The phrase data comes from the ``phrases`` pipeline (the config's ``phrases_config``), run first (resumable).
"""

from __future__ import annotations

from pydantic import PositiveInt

from parabit.config import Config, ConfigFile, load_config, read_yaml
from parabit.papers.elgohary.analyses import TEST_SETS, pairs_available, undertrained_ratios
from parabit.papers.elgohary.config import Condition, ReproductionConfig, phrase_data_paths, train_config
from parabit.papers.elgohary.paper import (CONDITION_LABELS, OBJECTIVE_LABELS, ROWS, TABLE4, TABLE5, TABLE6, TABLE6_SIZES,
                                    paper_value)
from parabit.paths import project_path
from parabit.papers.cells import Group
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


def paper_sts_avg(condition: str, objective: str) -> float:
    values = [paper_value(year, "mean", condition, objective) for year in YEARS]
    return sum(values) / len(values)


class ElgoharySettings(Config):
    """Elgohary & Carpuat's runs: ``config`` (a :class:`~parabit.papers.elgohary.config.ReproductionConfig` YAML: conditions,
    objectives, settings, analyses; no default: the reproduction config names it, a relative path is read from the
    project folder). ``jbi_sweep``: the sweep space (a ``parabit sweep --space`` YAML) whose best point on the paper's
    dev set (STS 2012 SMT-europarl train) gives every J_bi cell its settings, as the paper tuned them (null, the
    default: no sweep, the config's ``jbi`` as given); its trials and choice are part of the paper's prepared record
    in the ledger. ``jbi_phrases_sweep``: tune
    J_bi once more, on the bilingual phrases (the same space over the phrase table), for the BiPh J_bi cells: the
    paper tuned per condition and chose cosine for bilingual phrases, Euclidean for sentences. ``--quick``: ``quick_conditions`` only (no phrase pipeline), ``quick_pairs``
    pairs each, one epoch, no analyses."""

    config: ConfigFile
    jbi_sweep: ConfigFile | None = None
    jbi_phrases_sweep: bool = True
    quick_pairs: PositiveInt = 2000
    quick_conditions: tuple[Condition, ...] = ("bilingual_sentences", "ppdb")


class ElgoharyPlan(PaperPlan):
    key = "elgohary"
    title = "Elgohary & Carpuat 2017, monolingual representations via bilingual supervision (Tables 3–6)"

    def __init__(self, context):
        super().__init__(context)
        settings = self.settings
        overrides = {"conditions": settings.quick_conditions, "max_pairs": settings.quick_pairs, "epochs": 1,
                     "analyses": []} if self.quick else {}
        self.config = load_config(ReproductionConfig, project_path(settings.config), overrides)
        self.configured = self.config.model_copy(deep=True)  # before the sweep chose the J_bi settings
        self.data_paths: dict[str, str] = {}
        self.sizes: dict[int, str] = {}  # Table 6: pairs -> the paper's size it stands for
        self.available: dict[str, int] = {}
        self.sweep: dict | None = None  # the J_bi sweep: its trials and choice
        self.phrase_sweep: dict | None = None  # the same on the bilingual phrases (its choice: their J_bi settings)
        self._ratios: dict | None = None  # Table 4
        self._filtered_counts: dict[str, int] = {}  # Table 5: pairs left without a SICK bigram

    # -- data ------------------------------------------------------------------------------------------------
    def prepare(self) -> None:
        phrases = self.config.phrases()
        if self.config.needs_phrases:
            self.context.pipeline("phrases", phrases)
        # A sweep restored from the ledger is not run again: its trials and choice are already recorded there.
        if self.settings.jbi_sweep and not self.quick and "jbi" in self.config.objectives:
            if self.sweep is None:
                self._tune_jbi()
            if (self.settings.jbi_phrases_sweep and "bilingual_phrases" in self.config.conditions
                    and self.phrase_sweep is None):
                self._tune_jbi_phrases(phrase_data_paths(phrases)["bilingual_phrases"])
        self.data_paths = phrase_data_paths(phrases)
        if self.has_sizes or "memorisation" in self.config.analyses:
            self.available = {c: pairs_available(self._train(c, "jbi").data) for c in self.config.conditions}
        if self.has_sizes:
            whole = self.available["bilingual_phrases"]
            sizes = [max(1, round(whole * f)) for f in self.config.size_fractions]
            if "bilingual_sentences" in self.available:  # the paper's 1.9M: as many phrase pairs as sentence pairs
                sizes.append(min(self.available["bilingual_sentences"], whole))
            self.sizes = {n: label for n, label in zip([*sizes, whole], TABLE6_SIZES)}

    def _tune_jbi(self) -> None:
        """Run (or resume) the J_bi sweep and take its best point for every J_bi cell."""
        self.sweep = self._sweep(f"{self.context.config.prefix}-elgohary-jbi")
        self.config.jbi = {**self.config.jbi, **self.sweep["best_params"]}

    def _tune_jbi_phrases(self, phrase_table: str) -> None:
        """Run (or resume) the same sweep on the bilingual phrases: its best point is the BiPh J_bi settings."""
        self.phrase_sweep = self._sweep(f"{self.context.config.prefix}-elgohary-jbi-phrases", {
            "data.condition": "bilingual_phrases", "data.path": phrase_table})

    def _sweep(self, name: str, data: dict | None = None) -> dict:
        from parabit.sweeps.space import load_space
        from parabit.sweeps.sweep import run_sweep

        space = load_space(project_path(self.settings.jbi_sweep), name=name, overrides={
            "tracking.experiment": self.context.config.experiment, "tracking.register_as": "", **(data or {})})
        summary = run_sweep(space)
        return {"name": name, "space": self.settings.jbi_sweep, "parent_run_id": summary.parent_run_id,
                "best_params": summary.best_params, "best_dev_score": summary.best_dev_score,
                "trials": sweep_trials(name, [p.path for p in space.parameters], space.search.metric)}

    def data_fingerprint(self):
        sweep = None
        if self.settings.jbi_sweep and not self.quick:
            sweep = read_yaml(project_path(self.settings.jbi_sweep))
        return {"settings": self.settings, "config": self.configured, "quick": self.quick, "sweep": sweep}

    def facts(self) -> dict:
        return {"data_paths": dict(self.data_paths), "available": dict(self.available),
                "sizes": [[pairs, label] for pairs, label in self.sizes.items()], "jbi": dict(self.config.jbi),
                "sweep": self.sweep, "phrase_sweep": self.phrase_sweep,
                "undertrained": self._undertrained() if "undertrained" in self.config.analyses else {},
                "filtered": {c: self._filtered(c) for c in self.available}
                if "memorisation" in self.config.analyses else {}}

    def restore(self, facts: dict) -> None:
        self.data_paths = dict(facts["data_paths"])
        self.available = dict(facts["available"])
        self.sizes = {int(pairs): label for pairs, label in facts["sizes"]}
        self.config.jbi = dict(facts["jbi"])
        self.sweep = facts["sweep"]
        # A record from before the phrase sweep: BiPh J_bi keeps the sentence settings it was trained with, until
        # the data step runs again (it does before the next cell trains) and its cells train with their own.
        self.phrase_sweep = facts.get("phrase_sweep")
        self._ratios = facts["undertrained"]
        self._filtered_counts = facts["filtered"]

    @property
    def has_sizes(self) -> bool:
        return "sizes" in self.config.analyses and "bilingual_phrases" in self.config.conditions

    def _train(self, condition: str, objective: str, **data):
        overrides = None
        if condition == "bilingual_phrases" and objective == "jbi" and self.phrase_sweep is not None:
            overrides = self.phrase_sweep["best_params"]
        return train_config(self.config, condition, objective, self.data_paths, overrides=overrides, **data)

    # -- groups ----------------------------------------------------------------------------------------------
    def groups(self) -> list[Group]:
        conditions, objectives = self.config.conditions, self.config.objectives
        groups = [Group(f"{c}-{o}", self._train(c, o), f"{CONDITION_LABELS[c]} {OBJECTIVE_LABELS[o]}")
                  for c in conditions for o in objectives]
        if "memorisation" in self.config.analyses and "jbi" in objectives:
            groups += [Group(f"{c}-jbi-nosickbigram", self._train(c, "jbi", drop_bigrams_of=["sick"]),
                             f"{CONDITION_LABELS[c]} J_bi, no SICK bigram") for c in conditions]
        whole = self.available.get("bilingual_phrases")
        groups += [Group(f"bilingual_phrases-jbi-{n}", self._train("bilingual_phrases", "jbi", max_pairs=n),
                         f"BiPh J_bi {n:,} pairs") for n in self.sizes if n != whole]
        return groups

    def _size_group(self, pairs: int) -> str:
        return "bilingual_phrases-jbi" if pairs == self.available.get("bilingual_phrases") \
            else f"bilingual_phrases-jbi-{pairs}"

    # -- tables ----------------------------------------------------------------------------------------------
    def tables(self) -> list[PaperTable]:
        cells = [(c, o) for c in self.config.conditions for o in self.config.objectives]
        table3 = PaperTable(
            "Table 3 (Pearson r; paper in brackets; MonoPh stands for both PPDB and pivot paraphrases)",
            tuple(f"{CONDITION_LABELS[c]} {OBJECTIVE_LABELS[o]}" for c, o in cells),
            tuple(Row(f"**{label}**" if subset == "mean" else label, tuple(
                Entry(f"{c}-{o}", Metric.named(f"{benchmark}/{subset}/pearson", digits=2),
                      paper_value(benchmark, subset, c, o)) for c, o in cells))
                for benchmark, subset, label in ROWS),
            corner="set")
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
                entries = [Entry(self._size_group(n), metric, TABLE6[name][i]) for i, n in enumerate(self.sizes)]
                entries.append(Entry("bilingual_sentences-jbi" if "bilingual_sentences" in self.config.conditions
                                     else None, metric, paper_value(name, "test" if name == "sick" else "mean",
                                                                    "bilingual_sentences", "jbi")))
                rows.append(Row(name, tuple(entries)))
            tables.append(PaperTable(
                "Table 6 (bilingual phrases, J_bi, by number of pairs; then bilingual sentences; year avg / SICK r)",
                (*columns, f"BiSent {self.available.get('bilingual_sentences', 0):,}"), tuple(rows), corner="set",
                note="Sizes stand for the paper's " + "/".join(TABLE6_SIZES) + " of 3M phrase pairs: the same "
                     "fractions of our phrase table, and as many phrase pairs as there are sentence pairs (the "
                     "paper's equal-size comparison at 1.9M)."))
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
            sizes = list(self.sizes)
            findings.append(Finding(f"more phrase pairs help (BiPh J_bi, {sizes[-1]:,} > {sizes[0]:,} pairs)",
                                    self._size_group(sizes[-1]), self._size_group(sizes[0]), STS_AVG,
                                    f"3M {sum(TABLE6[y][3] for y in YEARS) / 4:.3f} vs 0.5M "
                                    f"{sum(TABLE6[y][0] for y in YEARS) / 4:.3f}"))
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
                fixed=(mean["bilingual_phrases"], mean["bilingual_sentences"])))
        findings.append(Finding("BiPh J_bi is close to the Paragram and GloVe reference columns",
                                untestable="Paragram-Phrase vectors do not ship here; GloVe baselines are in "
                                           "docs/quality.md (`parabit evaluate --encoder glove-mean`)"))
        return findings

    def _undertrained(self) -> dict[str, dict[str, float]]:
        if self._ratios is None:
            self._ratios = {c: undertrained_ratios(self._train(c, "jbi").data) for c in self.config.conditions}
        return self._ratios

    # -- text ------------------------------------------------------------------------------------------------
    def scale(self) -> str:
        if self.config.max_pairs is not None:
            return f"{self.config.max_pairs:,} pairs per condition, {self.config.epochs} epochs"
        sizes = ", ".join(f"{CONDITION_LABELS[c]} {n:,}" for c, n in self.available.items())
        return f"every pair of each condition ({sizes or 'sizes when prepared'}), {self.config.epochs} epochs"

    def setup(self) -> str:
        sizes = ", ".join(f"{CONDITION_LABELS[c]} {n:,}" for c, n in self.available.items())
        scale = "all pairs of every condition" if self.config.max_pairs is None else \
            f"{self.config.max_pairs:,} pairs per condition"
        return (f"AVG (300-d, random init) trained {self.config.epochs} epochs on {scale}"
                + (f" ({sizes})" if sizes else "") + ", all made from the same shipped en-es bitext (Tatoeba + the "
                "20k-line Europarl sample; the paper: 1.9M Europarl sentence pairs, 3M phrase pairs, 3M PPDB XL pairs). "
                "Bilingual phrases: eflomal alignments and Moses-style extraction (`parabit phrases`, "
                f"`{self.config.phrases_config}`); monolingual phrases: PPDB 1.0 XXXL lexical synonyms (the shipped "
                "subset) and pivot paraphrases from the same phrase table, two stand-ins for the paper's PPDB XL. "
                + self._jbi_text() + f" J_pa {self.config.jpa}. The best epoch is not selected: every run reports "
                "its last epoch, as the paper.")

    def _jbi_text(self) -> str:
        if self.sweep is None:
            return f"J_bi settings {self.config.jbi} (as configured: no sweep ran)."
        text = (f"J_bi settings {self.config.jbi}: the best of {len(self.sweep['trials'])} trials of the "
                f"`{self.sweep['space']}` sweep on the paper's dev set (STS 2012 SMT-europarl train; dev r "
                f"{self.sweep['best_dev_score']:.4f}; MLflow run `{self.sweep['parent_run_id']}`; trials below).")
        if self.phrase_sweep is None:
            return text + " BiPh J_bi uses them too (the per-condition phrase sweep has not run)."
        return text + (f" BiPh J_bi {self.phrase_sweep['best_params']}: the best of the same sweep over the bilingual "
                       f"phrases (dev r {self.phrase_sweep['best_dev_score']:.4f}; MLflow run "
                       f"`{self.phrase_sweep['parent_run_id']}`), as the paper tuned each condition (it chose cosine "
                       "for bilingual phrases, Euclidean for sentences).")

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
        for sweep, data in ((self.sweep, "bilingual sentences"), (self.phrase_sweep, "bilingual phrases")):
            if sweep is None:
                continue
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
