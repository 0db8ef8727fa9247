"""Wieting et al.'s data step and its facts: what the cells train on (:func:`prepare_data`) and what the step
computed (:class:`PreparedData`, kept in the ledger as :class:`~parabit.papers.wieting.facts.WietingFacts`).

One back-translation pipeline run (Apertium es→en of all shipped Spanish bitext, every filter's score stored;
the pipeline config that :class:`~parabit.papers.wieting.settings.WietingSettings` ``backtranslate`` names); every
variant is a selection of its own from those scores (:mod:`parabit.papers.wieting.selection`), at one equal size per
comparison: the filters alone and unfiltered at ``sample_size`` (24k, the paper's), the length ranges at the largest
size every range allows, the engines at the largest size both give on one seeded Tatoeba sample (Apertium
back-translations vs marian-pt en→pt→en round trips of the same references). Bilingual pairs and PPDB are sampled to
the same size by the training data config.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from parabit.config import load_config
from parabit.data.bitext import read_tatoeba
from parabit.data.errors import Quarantine
from parabit.data.ppdb import read_ppdb_lexical
from parabit.backtranslation import FilterConfig, PipelineConfig
from parabit.paths import project_path
from parabit.papers.plan import PaperPlan, PlanContext
from parabit.papers.wieting import analyses
from parabit.papers.wieting.facts import WietingFacts
from parabit.papers.wieting.groups import range_key, train_config
from parabit.papers.wieting.selection import Variant, scored_table, select_variant
from parabit.papers.wieting.settings import WietingSettings
from parabit.papers.wieting.thresholds import Trial, Tuned, tune_thresholds


@dataclass
class PreparedData:
    """What the data step computed, which the groups, tables and sections read: its :meth:`facts` are the paper's
    prepared record in the ledger, so a checkout that never ran the step writes the document from them."""

    paths: dict[str, Path] = field(default_factory=dict)  # group -> its selected pairs
    sizes: dict[str, int] = field(default_factory=dict)  # comparison -> equal size
    available_by_range: dict[str, int] = field(default_factory=dict)  # length group -> the pairs it could select
    tuned: dict[str, Tuned] = field(default_factory=dict)
    engines: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)  # engine -> (refs, translations)
    compared: dict[str, analyses.Comparison] | None = None  # their §6 analyses

    def comparisons(self, seed: int) -> dict[str, analyses.Comparison]:
        """The §6 analysis of each engine's texts (``seed``: the analysis's), computed once."""
        if self.compared is None:
            self.compared = {engine: analyses.compare_texts(engine, refs, mts, seed=seed)
                             for engine, (refs, mts) in self.engines.items() if len(refs) >= 20}
        return self.compared

    def facts(self, seed: int) -> WietingFacts:
        """What the data step computed (``seed``: the analyses'), as :class:`WietingFacts`."""
        return WietingFacts.built(
            paths={key: str(path) for key, path in self.paths.items()}, sizes=self.sizes,
            available_by_range=self.available_by_range,
            tuned={label: tuned.to_dict() for label, tuned in self.tuned.items()},
            comparisons={engine: c.to_dict() for engine, c in self.comparisons(seed).items()})

    def restore(self, facts: WietingFacts) -> None:
        """Take back what :meth:`facts` returned (the engines' texts stay: the facts keep only their analyses)."""
        self.paths = {key: Path(path) for key, path in facts.paths.items()}
        self.sizes = dict(facts.sizes)
        self.available_by_range = dict(facts.available_by_range)
        self.tuned = {label: Tuned.from_dict(tuned.model_dump()) for label, tuned in facts.tuned.items()}
        self.compared = {engine: analyses.Comparison.from_dict(c.model_dump()) for engine, c in
                         facts.comparisons.items()}


def pipeline_config(context: PlanContext, path: str, name: str, **overrides) -> PipelineConfig:
    return load_config(PipelineConfig, project_path(path), {
        "name": f"{context.config.prefix}-wieting-{name}", "experiment": context.config.experiment,
        "select.sample_size": None, **overrides})


def scored_stage(context: PlanContext, config: PipelineConfig):
    result = context.pipeline("backtranslate", config)
    return result.stages["score"]


def prepare_data(plan: PaperPlan, prepared: PreparedData, groups: set[str] | None = None) -> None:
    """Score the back-translations and select every variant (tuning each filter's thresholds), the length ranges and
    (for the engine groups) the engine comparison's pairs, into ``prepared``; ``plan``: Wieting et al.'s, whose
    context runs the pipelines and whose :attr:`~PaperPlan.missing` takes the groups that cannot be prepared."""
    settings: WietingSettings = plan.settings
    prepared.compared = None  # the texts are read again: their analyses too
    overrides = {"sources": [{"format": "tatoeba", "lang": "es", "limit": settings.quick_pairs}]} \
        if plan.quick else {}
    scored = scored_stage(plan.context, pipeline_config(plan.context, settings.backtranslate, "apertium",
                                                        **overrides))
    table = scored_table(scored)
    prepared.engines["apertium (all)"] = texts(table)
    root = plan.workdir / "selections"

    # filters alone, unfiltered, bilingual pairs and PPDB: one equal size
    windows = {spec.label: [Variant(f"tune-{spec.label}-{i}", (spec.config(spec.thresholds(table, w)),))
                            for i, w in enumerate(spec.windows)] for spec in settings.filters}
    unfiltered = Variant("bt-unfiltered")
    counts = [unfiltered.candidates(table), *(v.candidates(table) for vs in windows.values() for v in vs),
              len(read_ppdb_lexical(quarantine=Quarantine()))]
    size = min(settings.sample_size, *counts)
    size = prepared.sizes["main"] = min(size, bilingual_pairs(settings, plan.quick, at_most=size))
    prepared.paths["bt-unfiltered"] = select_variant(scored, root, unfiltered, size, settings.seed)
    for spec in settings.filters:
        candidates = [Trial(spec.windows[i], dict(v.filters[0].thresholds),
                            str(select_variant(scored, root, v, size, settings.seed)), size, None)
                      for i, v in enumerate(windows[spec.label])]
        if plan.quick:  # no sweep: the middle window stands in
            tuned = Tuned(spec.label, tuple(candidates), len(candidates) // 2)
        elif spec.label in prepared.tuned:  # restored from the ledger: its sweep's choice, not the sweep again
            tuned = prepared.tuned[spec.label]
        else:
            tuned = tune_thresholds(f"{plan.context.config.prefix}-wieting-tune-{spec.label}", spec.label,
                                    train_config(settings, plan.quick, path=Path(candidates[0].path)), candidates,
                                    plan.workdir / "tuning", settings.tune_epochs)
        prepared.tuned[spec.label] = tuned
        prepared.paths[f"bt-{spec.label}"] = Path(tuned.chosen.path)

    # length ranges (and no length filter) at the largest size every range allows
    ranges = {range_key(lo, hi): Variant(range_key(lo, hi), (FilterConfig(
        name="length", thresholds={"min_tokens": lo, "max_tokens": hi}),)) for lo, hi in settings.length_ranges}
    ranges["len-any"] = Variant("len-any")
    available = {key: v.candidates(table) for key, v in ranges.items()}
    prepared.sizes["length"] = min(settings.sample_size, *available.values())
    for key, variant in ranges.items():
        if prepared.sizes["length"] > 0:
            prepared.paths[key] = select_variant(scored, root, variant, prepared.sizes["length"], settings.seed)
        else:
            plan.missing[key] = f"a length range has no pairs ({available})"
    prepared.available_by_range = available

    if plan.quick:
        for key in ("engine-apertium", "engine-marian"):
            plan.missing[key] = "quick mode runs no second engine"
    elif groups is None or groups & {"engine-apertium", "engine-marian"}:
        prepare_engines(plan, prepared, root)


def prepare_engines(plan: PaperPlan, prepared: PreparedData, root: Path) -> None:
    """Apertium back-translations vs marian-pt round trips of the same seeded Tatoeba sample."""
    settings: WietingSettings = plan.settings
    sample = plan.workdir / f"tatoeba-es-{settings.engine_sample}.parquet"
    if not sample.exists():
        pairs = read_tatoeba(lang="es")
        import numpy as np

        chosen = np.sort(np.random.default_rng(settings.seed).permutation(len(pairs))[:settings.engine_sample])
        scratch = sample.with_name(f".{sample.name}.tmp")
        pq.write_table(pa.table({"en": [pairs[i].en for i in chosen], "foreign": [pairs[i].foreign
                                                                                  for i in chosen]}), scratch)
        scratch.replace(sample)
    source = [{"format": "parquet", "path": str(sample), "lang": "es"}]
    scored = {}
    try:
        scored["engine-apertium"] = scored_stage(plan.context, pipeline_config(
            plan.context, settings.backtranslate, "engine-apertium", sources=source, **{
                "score.filters": [f.model_dump() for f in
                                  load_config(PipelineConfig, project_path(settings.roundtrip)).score.filters],
                "score.holdout_fraction": 0.05}))
        scored["engine-marian"] = scored_stage(plan.context, pipeline_config(
            plan.context, settings.roundtrip, "engine-marian", sources=source))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001 - the neural engine is optional; the rest of the paper goes on
        for key in ("engine-apertium", "engine-marian"):
            plan.missing.setdefault(key, f"engine pipeline failed: {type(err).__name__}: {err}"[:300])
        return
    tables = {key: scored_table(stage) for key, stage in scored.items()}
    size = prepared.sizes["engines"] = min(Variant(k).candidates(t) for k, t in tables.items())
    for key, stage in scored.items():
        prepared.paths[key] = select_variant(stage, root, Variant(key), size, settings.seed)
        prepared.engines[key.removeprefix("engine-")] = texts(tables[key])


def bilingual_pairs(settings: WietingSettings, quick: bool, at_most: int) -> int:
    """How many bilingual pairs there are, up to ``at_most``: the data of the bilingual group at that size (which
    it then finds prepared), not all ~139,000 pairs padded and written only to be counted."""
    from parabit.recipes.pairs.data import prepare_pairs

    config = train_config(settings, quick, condition="bilingual_sentences", size=at_most)
    return prepare_pairs(config.data).stats["pairs_kept"]


def texts(table: pa.Table) -> tuple[list[str], list[str]]:
    """References and translations of the scored pairs that differ (what training could use)."""
    kept = table.filter(pc.invert(table["identical"]))
    return kept["reference"].to_pylist(), kept["translation"].to_pylist()
