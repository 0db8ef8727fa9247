"""Elgohary & Carpuat (2017) Table 3 on parabit: AVG trained with J_bi and J_pa on bilingual sentences, bilingual
phrases and monolingual phrases (pivot paraphrases and PPDB), all made from the same en-es bitext; plus the paper's
analyses (Tables 4–6, :mod:`parabit.elgohary.analyses`).

``run_reproduction(config, data_paths)`` trains one run per (condition, objective) on the given phrase data (built
beforehand by the ``phrases`` pipeline: ``parabit reproduce`` does both) with the training kernel, as child runs of one
MLflow parent run, and writes the table with the paper's numbers beside parabit's. A run whose evaluation is already
saved under ``<output>/runs/`` is not trained again, so an interrupted reproduction resumes.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from parabit.elgohary import analyses
from parabit.elgohary.config import ReproductionConfig, train_config
from parabit.elgohary.paper import CONDITION_LABELS, OBJECTIVE_LABELS, ROWS, paper_value
from parabit.evaluation import EvaluationReport
from parabit.evaluation.report import Score
from parabit.pairs.config import PairsConfig
from parabit.pairs.recipe import PairsRecipe
from parabit.ray_runtime import init_ray
from parabit.tracking import RunTracker, tags
from parabit.training.driver import run_training

log = logging.getLogger(__name__)


def _report_path(config: ReproductionConfig, run_name: str) -> Path:
    return config.output_path / "runs" / f"{run_name}.csv"


def load_report(path: Path) -> EvaluationReport:
    frame = pd.read_csv(path)
    return EvaluationReport([Score(r.benchmark, r.subset, r.metric, float(r.value), int(r.n))
                             for r in frame.itertuples()])


def train_or_load(config: ReproductionConfig, train: PairsConfig, parent_run_id: str | None) -> EvaluationReport:
    """The evaluation of ``train``: trained now (a child run of the reproduction), or read back if already saved."""
    path = _report_path(config, train.name)
    if path.exists():
        log.info("%s: evaluation already saved in %s", train.name, path)
        return load_report(path)
    result = run_training(PairsRecipe(train), parent_run_id=parent_run_id, tags={tags.REPRODUCTION: config.name})
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


def run_reproduction(config: ReproductionConfig, data_paths: dict[str, str]) -> dict[str, str]:
    """Train every cell on ``data_paths`` (condition → phrase data, :func:`phrase_data_paths`), run the analyses;
    returns the markdown tables by name (also written to ``<output>/tables.md`` and logged to the MLflow parent
    run)."""
    init_ray()
    tracker = RunTracker(config.experiment, config.name, tags={tags.KIND: "reproduction"})
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
