"""Elgohary & Carpuat (2017) Table 3 on parabit: AVG trained with J_bi and J_pa on bilingual sentences, bilingual
phrases and monolingual phrases (pivot paraphrases and PPDB), all made from the same en-es bitext; plus the paper's
analyses (Tables 4–6, :mod:`parabit.elgohary.analyses`).

``run_reproduction(config)`` builds the phrase data (``jobs/phrases.py``'s pipeline; complete stages are skipped),
trains one run per (condition, objective) with :func:`parabit.training.trainer.run_training` as child runs of one
MLflow parent run, and writes the table with the paper's numbers beside parabit's. A run whose evaluation is already
saved under ``<output>/runs/`` is not trained again, so an interrupted reproduction resumes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from parabit.config import load_config
from parabit.elgohary.paper import CONDITION_LABELS, OBJECTIVE_LABELS, ROWS, paper_value
from parabit.evaluation import EvaluationReport
from parabit.evaluation.report import Score
from parabit.paths import PROJECT_ROOT, output_root
from parabit.phrases import PhrasesConfig
from parabit.tracking import RunTracker
from parabit.training.config import CONDITIONS, OBJECTIVES, TrainConfig

log = logging.getLogger(__name__)


@dataclass
class ReproductionConfig:
    """What to train. ``base_config``: the training YAML every run starts from; ``common``, ``jbi`` and ``jpa``:
    dotted overrides (as ``--set``) for every run, J_bi runs and J_pa runs. The J_bi defaults are the best point of
    the ``tuning/spaces/jbi_elgohary.yaml`` sweep (batch 25, Euclidean δ = 1, λ = 1e-3, k = 15); J_pa uses Wieting
    et al.'s cosine margin 0.4 with MAX negatives, batch 100. ``max_pairs`` caps every condition at the same number
    of training pairs (a seeded sample), so conditions differ in the kind of pairs, not their number.
    ``analyses``: ``undertrained`` (Table 4), ``memorisation`` (Table 5: J_bi retrained without pairs that share a
    bigram with SICK test), ``sizes`` (Table 6: bilingual phrases, J_bi, at each of ``sizes`` pairs)."""

    name: str = "elgohary"
    phrases_config: str = "jobs/configs/phrases_en_es.yaml"
    base_config: str = "jobs/configs/bilingual_sentences.yaml"
    conditions: tuple[str, ...] = ("bilingual_sentences", "bilingual_phrases", "pivot_paraphrases", "ppdb")
    objectives: tuple[str, ...] = ("jbi", "jpa")
    max_pairs: int | None = 20_000
    epochs: int = 10
    common: dict = field(default_factory=lambda: {
        "evaluation.msrp": False, "dev": "sts2012-train-smteuroparl", "tracking.register_as": "",
        "data.sources": ["tatoeba", "europarl"]})
    jbi: dict = field(default_factory=lambda: {
        "objective.distance": "euclidean", "objective.margin": 1.0, "objective.regularization": 1.0e-3,
        "objective.negatives": 15, "optim.batch_size": 25})
    jpa: dict = field(default_factory=lambda: {
        "objective.distance": "cosine", "objective.margin": 0.4, "objective.sampling": "max",
        "objective.regularization": 0.0, "optim.batch_size": 100})
    analyses: tuple[str, ...] = ("undertrained", "memorisation", "sizes")
    sizes: tuple[int, ...] = (5_000, 10_000)
    experiment: str = "parabit-elgohary"
    output_dir: str | None = None

    def __post_init__(self):
        for condition in self.conditions:
            if condition not in CONDITIONS or condition == "pairs_parquet":
                raise ValueError(f"conditions entry {condition!r}: choose from {sorted(CONDITION_LABELS)}")
        for objective in self.objectives:
            if objective not in OBJECTIVES:
                raise ValueError(f"objectives entry {objective!r}: choose from {list(OBJECTIVES)}")
        unknown = set(self.analyses) - {"undertrained", "memorisation", "sizes"}
        if unknown:
            raise ValueError(f"analyses {sorted(unknown)} are unknown; choose from undertrained, memorisation, sizes")
        if self.max_pairs is not None and self.max_pairs <= 0:
            raise ValueError(f"max_pairs must be positive or null (all pairs), got {self.max_pairs}")

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "elgohary" / self.name


def phrase_data_paths(phrases: PhrasesConfig) -> dict[str, str]:
    """Where the pipeline leaves the phrase table and the pivot paraphrases, by training condition."""
    return {"bilingual_phrases": str(phrases.output_path / "phrase_table" / "data"),
            "pivot_paraphrases": str(phrases.output_path / "pivot" / "data")}


def train_config(config: ReproductionConfig, condition: str, objective: str, data_paths: dict[str, str],
                 suffix: str = "", **data) -> TrainConfig:
    """The training config of one cell: base YAML + common + objective overrides + condition (+ ``data`` fields)."""
    overrides = {**config.common, **(config.jbi if objective == "jbi" else config.jpa),
                 "name": f"{config.name}-{condition}-{objective}{suffix}", "objective.name": objective,
                 "optim.epochs": config.epochs, "data.condition": condition, "data.max_pairs": config.max_pairs,
                 "tracking.experiment": config.experiment}
    if condition in data_paths:
        overrides["data.path"] = data_paths[condition]
    overrides.update({f"data.{key}": value for key, value in data.items()})
    return load_config(TrainConfig, PROJECT_ROOT / config.base_config, overrides)


def _report_path(config: ReproductionConfig, run_name: str) -> Path:
    return config.output_path / "runs" / f"{run_name}.csv"


def load_report(path: Path) -> EvaluationReport:
    frame = pd.read_csv(path)
    return EvaluationReport([Score(r.benchmark, r.subset, r.metric, float(r.value), int(r.n))
                             for r in frame.itertuples()])


def train_or_load(config: ReproductionConfig, train: TrainConfig, parent_run_id: str | None) -> EvaluationReport:
    """The evaluation of ``train``: trained now (a child run of the reproduction), or read back if already saved."""
    from parabit.training.trainer import run_training

    path = _report_path(config, train.name)
    if path.exists():
        log.info("%s: evaluation already saved in %s", train.name, path)
        return load_report(path)
    result = run_training(train, parent_run_id=parent_run_id, tags={"parabit.reproduction": config.name})
    path.parent.mkdir(parents=True, exist_ok=True)
    result.report.frame().to_csv(path, index=False)
    (path.with_suffix(".seconds.json")).write_text(pd.Series(result.seconds).to_json())
    return result.report


def table3(reports: dict[tuple[str, str], EvaluationReport], digits: int = 2) -> pd.DataFrame:
    """Rows as the paper's Table 3; per (condition, objective) column parabit's Pearson r and the paper's."""
    rows = []
    for benchmark, subset, label in ROWS:
        row = {"set": label if subset != "mean" else f"**{label}**"}
        for (condition, objective), report in reports.items():
            column = f"{CONDITION_LABELS[condition]} {OBJECTIVE_LABELS[objective]}"
            try:
                ours = f"{report.value(benchmark, subset, 'pearson'):.{digits}f}"
            except KeyError:
                ours = "–"
            paper = paper_value(benchmark, subset, condition, objective)
            row[column] = f"{ours} ({paper:.2f})" if paper is not None else ours
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    return "\n".join([header, rule, *("| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False))])


def run_reproduction(config: ReproductionConfig) -> dict[str, str]:
    """Build the data, train every cell, run the analyses; returns the markdown tables by name (also written to
    ``<output>/tables.md`` and logged to the MLflow parent run)."""
    from parabit.elgohary import analyses
    from parabit.pipeline import load_pipeline
    from parabit.ray_runtime import init_ray

    init_ray()
    phrases = load_config(PhrasesConfig, PROJECT_ROOT / config.phrases_config)
    if {"bilingual_phrases", "pivot_paraphrases"} & set(config.conditions):
        load_pipeline("phrases").run(phrases)
    data_paths = phrase_data_paths(phrases)

    tracker = RunTracker(config.experiment, config.name, tags={"parabit.kind": "reproduction"})
    tracker.start()
    tracker.log_params({"max_pairs": config.max_pairs, "epochs": config.epochs, "conditions": config.conditions,
                        "objectives": config.objectives, "jbi": config.jbi, "jpa": config.jpa})
    trains = {(c, o): train_config(config, c, o, data_paths) for c in config.conditions for o in config.objectives}
    reports = {key: train_or_load(config, train, tracker.run_id) for key, train in trains.items()}
    tables = {"Table 3 (Pearson r ×1; paper in brackets)": markdown(table3(reports))}
    if "undertrained" in config.analyses:
        tables["Table 4 (undertrained-word ratio)"] = markdown(analyses.undertrained_table(trains))
    if "memorisation" in config.analyses:
        filtered = {c: train_or_load(config, train_config(config, c, "jbi", data_paths, "-nosickbigram",
                                                           drop_bigrams_of=["sick"]), tracker.run_id)
                    for c in config.conditions}
        tables["Table 5 (SICK r, J_bi, pairs sharing a SICK bigram removed)"] = markdown(
            analyses.memorisation_table(config, trains, reports, filtered, data_paths))
    if "sizes" in config.analyses and "bilingual_phrases" in config.conditions:
        by_size = {size: train_or_load(config, train_config(config, "bilingual_phrases", "jbi", data_paths,
                                                            f"-{size}", max_pairs=size), tracker.run_id)
                   for size in config.sizes}
        by_size[config.max_pairs] = reports[("bilingual_phrases", "jbi")]
        tables["Table 6 (BiPh J_bi by training pairs)"] = markdown(analyses.sizes_table(by_size, reports))
    text = "\n\n".join(f"### {title}\n\n{body}" for title, body in tables.items())
    config.output_path.mkdir(parents=True, exist_ok=True)
    (config.output_path / "tables.md").write_text(text + "\n")
    tracker.log_text(text, "reproduction/tables.md")
    for (condition, objective), report in reports.items():
        tracker.log_metrics({f"{condition}.{objective}/{name}": value for name, value in report.summary().items()})
    tracker.finish()
    return tables
