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
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from pydantic import NonNegativeInt, PositiveInt

from parabit.config import Config, ConfigFile, load_config, read_yaml
from parabit.papers.elgohary.analyses import TEST_SETS, pairs_available, undertrained_ratios
from parabit.papers.elgohary.config import Condition, ReproductionConfig, phrase_data_paths, train_config
from parabit.papers.elgohary.paper import (CONDITION_LABELS, OBJECTIVE_LABELS, ROWS, TABLE4, TABLE5, TABLE6, TABLE6_SIZES,
                                    paper_value)
from parabit.paths import project_path
from parabit.papers.cells import Group, Results
from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.metrics import Metric
from parabit.papers.plan import PaperPlan, Section
from parabit.papers.tables import BELOW_START, Entry, PaperTable, Row

YEARS = ("sts2012", "sts2013", "sts2014", "sts2015")
STS_AVG = Metric("STS 2012–2015 mean of yearly avg r", tuple(f"{y}/mean/pearson" for y in YEARS))
UNTRAINED = "untrained"  # the prefix of a cell's metrics as its own model scored before the first step
DEV = Metric.named("dev_score", "dev r (STS 2012 SMT-europarl train)")
SICK = Metric.named("sick/test/pearson", "SICK test r")
UNDERTRAINED = Metric("undertrained-token ratio, mean of STS 2012–2015 and SICK", ("-",))
PAPER_TABLE4_COLUMN = {"ppdb": 0, "pivot_paraphrases": 0, "bilingual_phrases": 1, "bilingual_sentences": 2}
MONO = ("ppdb", "pivot_paraphrases")
MAIN = ("bilingual_sentences", "bilingual_phrases")  # the paper's central comparison, which every ablation repeats
OPTIMISER = "optim.name"
RATE_CELLS = 20  # the estimate's cells: the ledger's newest, so a faster step shows in it once its cells are recorded
# Ablation group suffixes (run names: <prefix>-elgohary-<condition>-jbi-<suffix>-s<seed>).
ABLATION_SUFFIX = {"composition": "mean", "pruning": "pruned", "optimiser": "otheroptimiser", "data": "europarl",
                   "tuning": "earliertuning", "budget": "proxychoice", "reading": "otherreading"}
ABLATION_LABELS = {"composition": "mean composition", "pruning": "count-pruned phrase table",
                   "optimiser": "the other optimiser", "data": "Europarl only", "tuning": "the earlier single setting",
                   "budget": "the proxy sweep's choice", "reading": "the paper's other reading"}
STATED, CONTESTED = "stated", "contested"  # a condition's J_bi tuned under its stated choices, or the other reading


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


def best_other(points: list[dict], parameter: str, chosen) -> dict | None:
    """The best of ``points`` (``typed`` parameters and a ``dev_score``) whose ``parameter`` is not ``chosen``: the
    best of the other choice."""
    others = [t for t in points if t["dev_score"] is not None and t["typed"].get(parameter) != chosen]
    return max(others, key=lambda t: t["dev_score"])["typed"] if others else None


def rescore_candidates(trials: list[dict], count: int, parameter: str = OPTIMISER) -> list[dict]:
    """The ``count`` best trials by dev score, the best of each value of ``parameter`` among them (so both
    optimisers are trained at the cells' scale, whichever wins at the proxy's), best first."""
    scored = sorted((t for t in trials if t["dev_score"] is not None), key=lambda t: -t["dev_score"])
    each = list({t["typed"].get(parameter): t for t in reversed(scored)}.values())  # the best of each value
    chosen = sorted(each, key=lambda t: -t["dev_score"])[:count]
    chosen += [t for t in scored if t not in chosen][:count - len(chosen)]
    return sorted(chosen, key=lambda t: -t["dev_score"])


def tuning_key(condition: str, reading: str = STATED) -> str:
    """How a J_bi tuning is keyed in the plan's facts: the condition, under the paper's other reading suffixed."""
    return condition if reading == STATED else f"{condition}-otherreading"


def tuning_prefix(condition: str, reading: str = STATED) -> str:
    """The group key the cells of a tuning start with (the ``reading`` ablation's group for the other reading)."""
    return f"{condition}-jbi" if reading == STATED else f"{condition}-jbi-{ABLATION_SUFFIX['reading']}"


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
        self.sweeps: dict[str, dict] = {}  # the J_bi sweep of each tuning (condition, reading): its trials, choice
        self.rescored: dict[str, dict] = {}  # each tuning's points re-scored at the cells' scale, and the choice
        self.europarl_available: dict[str, int] = {}  # the data ablation's pairs (Europarl alone), by condition
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
        # A sweep or a re-scoring restored from the ledger is not run again: its trials and choice are recorded.
        if self.settings.jbi_sweep and not self.quick and "jbi" in self.config.objectives:
            for condition, reading in self.tunings():
                if tuning_key(condition, reading) not in self.sweeps:
                    self.sweeps[tuning_key(condition, reading)] = self._sweep(condition, reading)
                    self.context.record_progress(self)
            for condition, reading in self.tunings() if self.settings.rescore else ():
                if "choice" not in self.rescored.get(tuning_key(condition, reading), {}):
                    self._rescore(condition, reading)
                    self.context.record_progress(self)
        if self.has_sizes or "memorisation" in self.config.analyses:
            # Counted from the main cells' own prepared data (a capped sample counts what it left out too).
            self.available = {c: pairs_available(self._train(c, "jbi").data) for c in self.config.conditions}
        if "data" in self.config.ablations:
            self.europarl_available = {c: pairs_available(self.ablation(c, "data").data) for c in MAIN
                                       if c in self.config.conditions}
        if self.has_sizes:
            whole = self.available["bilingual_phrases"]
            sizes = {min(n, whole): label for n, label in zip(self.config.size_pairs, TABLE6_SIZES)}
            if "bilingual_sentences" in self.available:  # the paper's equal-size comparison with sentences
                sizes.setdefault(min(self.available["bilingual_sentences"], whole), "= BiSent")
            self.sizes = dict(sorted(sizes.items()))

    def reused(self) -> list[str]:
        reused = [f"the J_bi sweeps of {len(self.sweeps)} tunings"] if self.sweeps else []
        return reused + ([f"the full-scale choices of {len(self.rescored)}"] if self.rescored else [])

    def tunings(self) -> list[tuple[str, str]]:
        """Every J_bi tuning: each condition under the choices the paper states, and, where the paper contradicts
        itself (``contested``) and the ``reading`` ablation is on, the main conditions under the other reading."""
        tunings = [(condition, STATED) for condition in self.config.conditions]
        if "reading" in self.config.ablations:
            tunings += [(c, CONTESTED) for c in MAIN if c in self.config.conditions and c in self.config.contested]
        return tunings

    def pins(self, condition: str, reading: str = STATED) -> dict:
        """The J_bi choices that ``condition``'s cells take as the paper states them (or as its other reading)."""
        stated = dict(self.config.stated.get(condition, {}))
        return {**stated, **self.config.contested.get(condition, {})} if reading == CONTESTED else stated

    def _sweep(self, condition: str, reading: str = STATED) -> dict:
        """Run (or resume) the J_bi sweep on ``condition``'s pairs, with every setting the cells share (composition,
        unknown words, dev set) and the paper's stated choices pinned; its best point is that tuning's J_bi
        settings (unless re-scored at the cells' scale)."""
        from parabit.sweeps.space import load_space
        from parabit.sweeps.sweep import run_sweep

        pins = self.pins(condition, reading)
        name = f"{self.context.config.prefix}-elgohary-jbi-{tuning_key(condition, reading)}" + (
            "-stated" if pins and reading == STATED else "")
        shared = {k: v for k, v in self.config.common.items() if not k.startswith("evaluation.also")}
        data = {"data.condition": condition, **({"data.path": self.data_paths[condition]}
                                                 if condition in self.data_paths else {})}
        space = load_space(project_path(self.settings.jbi_sweep), name=name, overrides={
            **shared, "tracking.experiment": self.context.config.experiment, "tracking.register_as": "", **data})
        space = space.pinned(pins) if pins else space
        summary = run_sweep(space)
        values = {p.path: sorted({v for point in space.points() for v in [point[p.path]]}, key=str)
                  for p in space.parameters}
        trials = sweep_trials(name, [p.path for p in space.parameters], space.search.metric)
        for trial in trials:
            trial["typed"] = typed_params(trial["params"], values)
        return {"name": name, "condition": condition, "reading": reading, "pinned": pins,
                "space": self.settings.jbi_sweep, "parent_run_id": summary.parent_run_id,
                "best_params": summary.best_params, "best_dev_score": summary.best_dev_score, "trials": trials}

    def _rescore(self, condition: str, reading: str = STATED) -> None:
        """Train the sweep's best points at the cells' own scale (cells of their own, first seed) and take the
        best on the dev set: the tuning's J_bi settings."""
        key = tuning_key(condition, reading)
        chosen = rescore_candidates(self.sweeps[key]["trials"], self.settings.rescore)
        self.rescored[key] = {"candidates": [
            {"group": f"{tuning_prefix(condition, reading)}-rescore{i}", "trial": t["trial"], "typed": t["typed"],
             "proxy_dev": t["dev_score"]} for i, t in enumerate(chosen, 1)]}
        results = self.context.train_cells(self, self.rescore_groups(condition, reading))
        dev = {c["group"]: next(iter(results.values(c["group"], DEV).values()), None)
               for c in self.rescored[key]["candidates"]}
        scored = [c for c in self.rescored[key]["candidates"] if dev[c["group"]] is not None]
        if not scored:
            raise RuntimeError(f"no point of the {key} J_bi sweep trained at the cells' scale (see the cells' errors "
                               "above); the data step stops here and goes on from here when run again")
        best = max(scored, key=lambda c: dev[c["group"]])
        self.rescored[key].update({"dev": dev, "chosen": best["group"], "choice": dict(best["typed"])})

    def rescore_groups(self, condition: str, reading: str = STATED) -> list[Group]:
        """The cells that re-score a tuning's best proxy points at the cells' own scale (none before it ran)."""
        label = CONDITION_LABELS[condition] + (", the other reading" if reading == CONTESTED else "")
        return [Group(c["group"], self._train(condition, "jbi", c["typed"], reading=reading),
                      f"{label} J_bi, point {i} re-scored at the cells' scale")
                for i, c in enumerate(self.rescored.get(tuning_key(condition, reading), {}).get("candidates", []), 1)]

    def data_fingerprint(self):
        sweep = None
        if self.settings.jbi_sweep and not self.quick:
            sweep = read_yaml(project_path(self.settings.jbi_sweep))
        phrases = [self.configured.phrases(), self.configured.europarl_phrases()] if not self.quick else []
        return {"settings": self.settings, "config": self.configured, "quick": self.quick, "sweep": sweep,
                "phrases": phrases}

    def cells_fingerprint(self, group: Group):
        """A cell reads the phrase tables (their pipelines' settings); everything else of the data step (the
        sweeps and their re-scoring, which groups exist) reaches a cell only through its own training config."""
        return {"phrases": self.data_fingerprint()["phrases"], "quick": self.quick}

    def facts(self) -> dict:
        return {"data_paths": dict(self.data_paths), "europarl_paths": dict(self.europarl_paths),
                "available": dict(self.available), "sizes": [[pairs, label] for pairs, label in self.sizes.items()],
                "europarl_available": dict(self.europarl_available), "sweeps": self.sweeps, "rescored": self.rescored,
                "undertrained": self._undertrained() if "undertrained" in self.config.analyses else {},
                "filtered": {c: self._filtered(c) for c in self.available}
                if "memorisation" in self.config.analyses else {}}

    def restore(self, facts: dict) -> None:
        self.data_paths = dict(facts["data_paths"])
        self.europarl_paths = dict(facts["europarl_paths"])
        self.available = dict(facts["available"])
        self.sizes = {int(pairs): label for pairs, label in facts["sizes"]}
        self.sweeps = dict(facts["sweeps"])
        self.rescored = dict(facts["rescored"])
        self.europarl_available = dict(facts["europarl_available"])
        self._ratios = facts["undertrained"]
        self._filtered_counts = facts["filtered"]

    @property
    def has_sizes(self) -> bool:
        return "sizes" in self.config.analyses and "bilingual_phrases" in self.config.conditions

    def tuned(self, condition: str, reading: str = STATED) -> dict:
        """The J_bi settings a tuning chose for ``condition``'s cells: the best of its points re-scored at the
        cells' scale, else its sweep's best point (the configured ``jbi`` without a sweep)."""
        key = tuning_key(condition, reading)
        if "choice" in self.rescored.get(key, {}):
            return dict(self.rescored[key]["choice"])
        sweep = self.sweeps.get(key)
        return dict(sweep["best_params"]) if sweep is not None else {}

    def _train(self, condition: str, objective: str, overrides: dict | None = None, reading: str = STATED, **data):
        settings = {**self.pins(condition, reading), **self.tuned(condition, reading)} if objective == "jbi" else {}
        return train_config(self.config, condition, objective, self.data_paths,
                            overrides={**settings, **(overrides or {})}, **data)

    def scored_points(self, condition: str) -> list[dict]:
        """The points ``condition``'s tuning scored on dev at the scale its choice was made (``typed`` parameters,
        ``dev_score``): its re-scored points, else its sweep's trials."""
        key = tuning_key(condition)
        rescored = self.rescored.get(key, {})
        if "dev" in rescored:
            return [{"typed": c["typed"], "dev_score": rescored["dev"].get(c["group"])} for c in rescored["candidates"]]
        return list(self.sweeps[key]["trials"]) if key in self.sweeps else []

    def ablation(self, condition: str, ablation: str):
        """The J_bi config of ``condition`` with one departure switched to its other choice (None: the ablation does
        not apply to this condition, or its tuning found no other choice)."""
        if ablation == "composition":
            return self._train(condition, "jbi", {"model.options": {"pooling": "mean"}})
        if ablation == "pruning":
            return self._train(condition, "jbi", min_pair_count=self.config.pruned_min_count) \
                if condition == "bilingual_phrases" else None
        if ablation == "optimiser":
            other = best_other(self.scored_points(condition), OPTIMISER, self.tuned(condition).get(OPTIMISER))
            return None if other is None else self._train(condition, "jbi", other)
        if ablation == "data":
            if condition == "bilingual_sentences":
                return self._train(condition, "jbi", sources=["europarl"])
            return self._train(condition, "jbi", path=self.europarl_paths[condition])
        if ablation == "tuning":
            return self._train(condition, "jbi", self.configured.jbi) if condition in self.sweeps else None
        if ablation == "budget":  # the same cells as ours where the proxy's choice survived the re-scoring
            rescored = "choice" in self.rescored.get(condition, {})
            return self._train(condition, "jbi", self.sweeps[condition]["best_params"]) if rescored else None
        if ablation == "reading":
            return self._train(condition, "jbi", reading=CONTESTED) if condition in self.config.contested else None
        return None

    def ablation_group(self, condition: str, ablation: str) -> str:
        return f"{condition}-jbi-{ABLATION_SUFFIX[ablation]}"

    # -- groups ----------------------------------------------------------------------------------------------
    def groups(self) -> list[Group]:
        """The data step's own cells first (each tuning's points re-scored at the cells' scale: trained when it
        ran), then Table 3's J_bi columns, the main comparison (BiSent and BiPh J_bi) first, then the main
        comparison's ablations, so a long run decides the paper's J_bi findings early; then Table 3's J_pa
        columns, Table 5 and Table 6."""
        conditions, objectives = self.config.conditions, self.config.objectives
        table3 = lambda c, o: Group(f"{c}-{o}", self._train(c, o), f"{CONDITION_LABELS[c]} {OBJECTIVE_LABELS[o]}")  # noqa: E731
        groups = [group for condition, reading in self.tunings() for group in self.rescore_groups(condition, reading)]
        if "jbi" in objectives:
            groups += [table3(c, "jbi") for c in sorted(conditions, key=lambda c: c not in MAIN)]
            for ablation in self.config.ablations:
                for condition in (c for c in MAIN if c in conditions):
                    config = self.ablation(condition, ablation) if ablation in ABLATION_SUFFIX else None
                    if config is not None:
                        groups.append(Group(self.ablation_group(condition, ablation), config,
                                            f"{CONDITION_LABELS[condition]} J_bi, {ABLATION_LABELS[ablation]}"))
        groups += [table3(c, o) for c in conditions for o in objectives if o != "jbi"]
        if "memorisation" in self.config.analyses and "jbi" in objectives:
            groups += [Group(f"{c}-jbi-nosickbigram", self._train(c, "jbi", drop_bigrams_of=["sick"]),
                             f"{CONDITION_LABELS[c]} J_bi, no SICK bigram") for c in conditions]
        groups += [Group(self._size_group(n), self._train("bilingual_phrases", "jbi", max_pairs=n),
                         f"BiPh J_bi {n:,} pairs") for n in self.sizes if self._size_group(n) != "bilingual_phrases-jbi"]
        return groups

    def every_seed(self) -> set[str]:
        """The tuning's ablations (the other optimiser, the earlier single setting, the proxy sweep's choice): their
        effects are the largest the departures show, and what a reader weighs the tuning by, so they train every
        seed even where one seed decides them."""
        return {self.ablation_group(c, a) for c in MAIN for a in ("optimiser", "tuning", "budget")}

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
                      paper_value(benchmark, subset, c, o), start=UNTRAINED) for c, o in cells))
                for benchmark, subset, label in ROWS)
            + tuple(Row(f"*{label}, untrained start*", tuple(
                Entry(f"{c}-{o}", Metric.named(f"untrained/{benchmark}/{subset}/pearson", digits=2)) for c, o in cells))
                for benchmark, subset, label in ROWS if subset in ("mean", "test")),
            corner="set",
            note="The untrained start of a column is its cells' own model before the first step (the same seed, "
                 "vocabulary and unknown-word rule), evaluated by the same runs: a trained number marked "
                 f"{BELOW_START} "
                 "is below it (training made the model worse; the section *Cells below their untrained start* "
                 "says what the ablations measured of why).")
        tables = [table3]
        if "memorisation" in self.config.analyses and "jbi" in self.config.objectives:
            rows = []
            for c in self.config.conditions:
                paper = TABLE5["MonoPh" if c in MONO else CONDITION_LABELS[c]]
                rows.append(Row(CONDITION_LABELS[c], (Entry(f"{c}-jbi", SICK, paper[0], start=UNTRAINED),
                                                      Entry(f"{c}-jbi-nosickbigram", SICK, paper[1],
                                                            start=UNTRAINED))))
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
                                 if label in TABLE6_SIZES else None, start=UNTRAINED)
                           for n, label in self.sizes.items()]
                entries.append(Entry("bilingual_sentences-jbi" if "bilingual_sentences" in self.config.conditions
                                     else None, metric, paper_value(name, "test" if name == "sick" else "mean",
                                                                    "bilingual_sentences", "jbi"), start=UNTRAINED))
                rows.append(Row(name, tuple(entries)))
            tables.append(PaperTable(
                "Table 6 (bilingual phrases, J_bi, by number of pairs; then bilingual sentences; year avg / SICK r)",
                (*columns, f"BiSent {self.available.get('bilingual_sentences', 0):,}"), tuple(rows), corner="set",
                note="Seeded samples of the unpruned phrase table "
                     f"({self.available.get('bilingual_phrases', 0):,} pairs) at the paper's sizes "
                     + "/".join(TABLE6_SIZES) + " (a size beyond the table is the whole table), and as many phrase "
                     "pairs as there are sentence pairs (the paper's equal-size comparison, at 1.9M there). The "
                     f"sizes above the main comparison's train with the first seed only. {BELOW_START}: below the "
                     "cells' own untrained start."))
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
        # Every cell also scores its untrained start: a comparison of two cells training made worse tests nothing.
        return [replace(f, untrained=UNTRAINED) if f.groups else f for f in findings]

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

        optimisers = "; ".join(f"{CONDITION_LABELS[c]}: {self.tuned(c).get(OPTIMISER, '—')}"
                               for c, reading in self.tunings() if reading == STATED and tuning_key(c) in self.sweeps)
        earlier = self.configured.jbi
        sizes = ", ".join(f"{CONDITION_LABELS[c]} {self._pairs(c):,}" for c in self.available)
        tatoeba = ""
        if "bilingual_sentences" in self.europarl_available and "bilingual_sentences" in self.available:
            share = 1 - self.europarl_available["bilingual_sentences"] / self.available["bilingual_sentences"]
            tatoeba = f" ({100 * share:.0f} % of the sentence pairs, short sentences)"
        rescore = self.settings.rescore
        departures = [
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
                      + (f": {optimisers}" if optimisers else ""), "the other optimiser (its best point on dev"
                      + (", at the cells' scale)" if rescore else ")"), variants("optimiser"), applies=jbi()),
            Departure("data", "1.9M Europarl sentence pairs (28 tokens on average) and 3M phrase pairs from them",
                      f"Tatoeba{tatoeba} + the 20k-line Europarl sample",
                      "the Europarl sample alone (its sentences and its phrases)", variants("data"),
                      applies=jbi(*from_bitext)),
            Departure("tuning", "§3.2's choices (k: \"increasing k consistently helps the bilingual models\"; "
                      "Euclidean for bilingual sentences and monolingual phrases, cosine for bilingual phrases), the "
                      "rest tuned on dev over the grid (batch, δ, λ), per condition", "the stated choices "
                      f"({self._stated_text()}); batch, δ, λ and the optimiser tuned per condition on dev (a random "
                      "sample of the grid, as many points per optimiser)",
                      f"the earlier single setting for every condition ({earlier})", variants("tuning"),
                      applies=jbi()),
        ]
        if "reading" in ablations and self.config.contested:
            departures.append(Departure(
                "distance for bilingual phrases", "contradicts itself: §3.2 \"cosine similarity was chosen for "
                "bilingual phrases\"; §4 \"bilingual phrases seem to benefit … from using the Euclidean distance "
                "rather than cosine similarity\"", "§3.2's, the tuning outcome the paper states: "
                + self._stated_text(only=self.config.contested), "§4's reading: "
                + "; ".join(f"{CONDITION_LABELS[c]} {reading}" for c, reading in self.config.contested.items())
                + " (tuned and re-scored the same way)", variants("reading"),
                applies=jbi(*self.config.contested)))
        departures += [
            Departure("scale", "BiSent 1.9M, BiPh 3M, MonoPh 3M pairs", sizes or "as prepared",
                      unmeasured="no more bitext ships; Table 6 shows the phrase table at the paper's sizes"),
            Departure("tuning budget", "J_pa tuned on 100k pairs for 5 epochs; J_bi presumably on everything",
                      f"J_bi swept on {self._sweep_scale()} with ASHA, then its {rescore} best points (both "
                      "optimisers) trained at the cells' own scale and the best on dev taken (table below)"
                      if rescore else f"J_bi tuned on {self._sweep_scale()} with ASHA",
                      "the proxy sweep's own best point" if rescore else "",
                      variants("budget"), applies=jbi(*MAIN),
                      unmeasured="" if variants("budget") else "its re-scoring has not run yet"
                      if rescore and "budget" in ablations else "a trial on all pairs costs a cell (up to hours) each"),
            Departure("J_pa settings", "tuned (sampling MIX/MAX, distance); MAX beats MIX", f"Wieting et al.'s "
                      f"{self.config.jpa} (MAX, as the paper's tuning found)",
                      unmeasured="J_pa is not the claim under test; its cells are the paper's comparison columns"),
            Departure("monolingual phrases", "PPDB XL, 3M pairs", "the shipped PPDB 1.0 lexical subset and pivot "
                      "paraphrases of the phrase table", unmeasured="PPDB XL does not ship"),
        ]
        return departures

    def _stated_text(self, only: dict | None = None) -> str:
        """The stated choices, by condition (those of ``only``'s conditions and keys, if given)."""
        stated = {c: {k: v for k, v in pins.items() if only is None or k in only.get(c, {})}
                  for c, pins in self.config.stated.items() if only is None or c in only}
        return "; ".join(f"{CONDITION_LABELS[c]} " + ", ".join(f"{k.split('.')[-1]} {v}" for k, v in pins.items())
                         for c, pins in stated.items() if pins) or "none"

    def _sweep_scale(self) -> str:
        """The proxy scale the sweep space trains its trials at (its ``fixed`` pairs and epochs)."""
        fixed = read_yaml(project_path(self.settings.jbi_sweep)).get("fixed", {}) if self.settings.jbi_sweep else {}
        pairs, epochs = fixed.get("data.max_pairs"), fixed.get("optim.epochs")
        return (f"{pairs:,} pairs" if pairs else "every pair") + (f" for {epochs} epochs" if epochs else "")

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
        stated = f"the choices §3.2 states ({self._stated_text()}) and " if self.config.stated else ""
        chosen = "; ".join(f"{self._tuning_label(key)} {self.tuned(sweep['condition'], sweep['reading'])}"
                           for key, sweep in self.sweeps.items())
        first = next(iter(self.sweeps.values()))
        rescore = (f", then its {self.settings.rescore} best points trained at the cells' own scale and the best "
                   "of them on dev taken (tables below)") if self.rescored else " (trials below)"
        return (f"J_bi settings: {stated}the rest tuned per condition as the paper did, on the paper's dev set (STS "
                f"2012 SMT-europarl train): the best of {len(first['trials'])} trials of the `{first['space']}` sweep "
                f"over that condition's pairs at the paper's proxy scale ({self._sweep_scale()}){rescore}: "
                f"{chosen}.")

    @staticmethod
    def _tuning_label(key: str) -> str:
        condition, _, reading = key.partition("-otherreading")
        return CONDITION_LABELS[condition] + (" (the other reading)" if key != condition else "")

    def _compute(self, results) -> str:
        """Each group's pairs, seeds and hours: estimated from the pairs × epochs per second this paper's newest
        recorded cells trained at (the ledger's newest RATE_CELLS, stale ones included: what its cells cost here
        with the code that trains them now, not with an older, slower step), and spent, from the records (a record
        that finishes two cells counts once)."""
        timed = self._timed(results)
        rate = self._rate(timed)
        compared = {key for finding in self.findings() for key in finding.groups} | self.every_seed()
        ablations = {group for departure in self.departures() for group in departure.groups} - compared
        deferred = self.deferred()
        lines = ["| group | pairs (at most) | seeds | estimated h | spent h (cells) |", "|---|---|---|---|---|"]
        total_estimated = total_spent = at_main_size = 0.0
        counted: set[str] = set()
        main = self._pairs("bilingual_phrases") if "bilingual_phrases" in self.available else None
        for group in self.groups():
            pairs = self._group_pairs(group, results)
            seeds = 3 if group.key in compared else 1
            estimate = pairs * self.config.epochs * seeds / rate / 3600 if rate and pairs else 0.0
            mine = [r for r in results.of(group.key) if r.record.mlflow_run_id not in counted]
            counted |= {r.record.mlflow_run_id for r in mine}
            spent = sum(r.seconds or 0.0 for r in mine) / 3600
            total_estimated, total_spent = total_estimated + estimate, total_spent + spent
            at_main_size += estimate if pairs == main and group.key not in deferred else 0.0
            note = (" (+2 if its effect, or the headline under it, is under 0.05)" if group.key in ablations
                    else " (last)" if group.key in deferred else "")
            shown = f"{estimate:.1f}" if rate and pairs else "—"
            counted_pairs = f"{pairs:,}" if pairs else "not counted yet"
            lines.append(f"| {group.title} | {counted_pairs} | {seeds}{note} | {shown} | {spent:.1f} "
                         f"({len(results.of(group.key))}) |")
        lines.append(f"| **all** | | | **{total_estimated:.1f}** | **{total_spent:.1f}** |")
        if rate is None:
            return "\n".join(lines) + "\n\nNo cell of this paper is recorded yet: no estimate."
        largest = max(self.config.size_pairs)
        scaled = total_estimated + at_main_size * (largest / main - 1) if main else total_estimated
        unknown = "" if self.available else ("\n\nThe data step has not counted every condition's pairs yet (it does "
                                             "after its sweeps): the groups marked so, and Table 6's, are not in the "
                                             "estimate.")
        at_scale = (f" Had every cell now at {main:,} pairs trained at {largest:,} instead, the plan would take about "
                    f"{scaled:.0f} h: the main comparison runs at the largest of the paper's sizes at which 3 seeds of "
                    "it and its ablations fit a few days of 2 cores.") if main else ""
        return ("\n".join(lines) + unknown + f"\n\nEstimated at {rate:,.0f} pairs × epochs per second per cell (the "
                "median of "
                f"the {len(timed)} newest cells of this paper the ledger records, from {timed[0].finished[:10]} to "
                f"{timed[-1].finished[:10]}). Hours are cell-hours, as the spent "
                "column's sum of the cells' own times: cells trained side by side (`--parallel 2`) share the wall "
                "time; a group whose cells repeat another's training (the same settings and seed) spends nothing. "
                f"The J_bi sweeps ({self._sweep_scale()} per trial) and the data step come on top.{at_scale}")

    def _timed(self, results) -> list:
        """The records the estimates take their speed from: the ledger's newest RATE_CELLS with a time and a count
        of pairs."""
        recorded = self.context.recorded(self.key) or [r.record for r in results.all if r.ok]
        return sorted((r for r in recorded if r.train_seconds and (r.data or {}).get("pairs_kept")),
                      key=lambda r: r.finished)[-RATE_CELLS:]

    def _group_pairs(self, group: Group, results) -> int | None:
        """How many pairs ``group``'s cells train on: as recorded, else as planned (None: not counted yet)."""
        trained = [r.record.data.get("pairs_kept") for r in results.of(group.key) if r.record.data]
        pairs = trained[0] if trained and trained[0] else \
            group.config.data.max_pairs or self.available.get(group.config.data.condition)
        return min(pairs, self.available.get(group.config.data.condition, pairs)) if pairs else None

    def _rate(self, timed: list) -> float | None:
        """The median pairs × epochs per second of ``timed`` (:meth:`_timed`; None without any)."""
        rates = [r.data["pairs_kept"] * self.config.epochs / r.train_seconds for r in timed]
        return float(np.median(rates)) if rates else None

    def cell_seconds(self, group: Group, results) -> float | None:
        """A cell of ``group`` at the speed of the compute table (its pairs × epochs at the newest records' median
        pairs × epochs per second)."""
        rate, pairs = self._rate(self._timed(results)), self._group_pairs(group, results)
        return pairs * self.config.epochs / rate if rate and pairs else None

    def _rederived(self, results) -> str:
        """Which cells read a phrase table of another size than the one the data step recorded for them (empty
        when none did). eflomal's Gibbs sampler takes no seed, so the data step run again elsewhere aligns, and
        counts, a little differently."""
        lines = []
        europarl = {self.ablation_group(c, "data") for c in MAIN}
        for condition in ("bilingual_phrases", "pivot_paraphrases"):
            for result in results.all:
                if not result.ok or not result.cell.group.startswith(condition):
                    continue
                # The Europarl-only cells read the Europarl phrase table: compared with its own recorded size.
                recorded = (self.europarl_available if result.cell.group in europarl else self.available).get(condition)
                read = (result.record.data or {}).get("pairs_read")
                if recorded and read and read != recorded:
                    lines.append(f"| {result.cell.name} | {CONDITION_LABELS[condition]} | {read:,} | {recorded:,} | "
                                 f"{(result.record.data or {}).get('pairs_kept', 0):,} |")
        if not lines:
            return ""
        return ("| cell | condition | pairs in its table | in the recorded table | pairs it trained on |\n"
                "|---|---|---|---|---|\n" + "\n".join(lines) + "\n\neflomal's sampler takes no seed: the data "
                "step, run again on another machine for these cells, aligned the same sentences a little "
                "differently. The tables and findings keep the recorded sizes; these cells' records hold what they "
                "read.")

    def _rescored_table(self, results) -> str:
        """Each tuning's points: their dev score at the sweep's proxy scale and at the cells' own scale, and which
        one the cells took."""
        lines = ["| tuning | point | parameters | dev r, proxy | dev r, cells' scale | taken |",
                 "|---|---|---|---|---|---|"]
        for key, rescored in self.rescored.items():
            proxy_best = self.sweeps[key]["best_params"]
            for candidate in rescored["candidates"]:
                scores = list(results.values(candidate["group"], DEV).values())
                full = f"{scores[0]:.4f}" if scores else "—"
                taken = "**taken**" if rescored.get("chosen") == candidate["group"] else ""
                proxy = " (the proxy's best)" if candidate["typed"] == proxy_best else ""
                parameters = ", ".join(f"{k.split('.')[-1]} {v}" for k, v in candidate["typed"].items())
                lines.append(f"| {self._tuning_label(key)} | {candidate['group']}{proxy} | {parameters} | "
                             f"{candidate['proxy_dev']:.4f} | {full} | {taken} |")
        return ("\n".join(lines) + "\n\nA tuning's best proxy points (at least one of each optimiser) trained at its "
                "cells' own scale (their pairs and epochs, the first seed) and scored on the paper's dev set; the "
                "best there is what the tuning's cells train with. The *tuning budget* departure trains the "
                "proxy's own choice beside it.")

    def _below_start(self, results) -> str:
        """The J_bi groups of Tables 3, 5 and 6 whose cells trained to below their untrained start (on the
        headline metric), each with what the departures' ablations measured of why (empty when none did)."""
        departures = [d for d in self.departures() if d.variants]
        lines = []
        for group in self.groups():
            entry = Entry(group.key, STS_AVG, start=UNTRAINED)
            if group.config.objective.name != "jbi" or "rescore" in group.key or not entry.below_start(results):
                continue
            lifted = []
            for departure in departures:
                variant = departure.variants.get(group.key)
                if variant is None:
                    continue
                other = Entry(variant, STS_AVG, start=UNTRAINED)
                values = list(results.values(variant, STS_AVG).values())
                if values and not other.below_start(results):
                    lifted.append(f"{departure.aspect}: {departure.other} trains above its start "
                                  f"({STS_AVG.format(float(np.mean(values)))}, n={len(values)})")
            trained = np.mean(list(results.values(group.key, STS_AVG).values()))
            start = np.mean(list(results.values(group.key, STS_AVG.under(UNTRAINED)).values()))
            cause = "; ".join(lifted) or "no ablation measured here trains it above its start"
            lines.append(f"| {group.title} | {STS_AVG.format(float(trained))} | {STS_AVG.format(float(start))} | "
                         f"{cause} |")
        if not lines:
            return ""
        return ("| group | trained | its untrained start | measured cause |\n|---|---|---|---|\n" + "\n".join(lines)
                + f"\n\n{STS_AVG.label}. A finding both of whose sides are below their starts is not testable "
                "here.")

    def sections(self, results) -> list[Section]:
        sections = []
        below = self._below_start(results)
        if below:
            sections.append(Section("Cells below their untrained start", below))
        if self.rescored:
            sections.append(Section("J_bi tuning: the best proxy points re-scored at the cells' scale (dev r)",
                                    self._rescored_table(results)))
        for key, sweep in self.sweeps.items():
            data = self._tuning_label(key)
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
