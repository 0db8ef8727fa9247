"""The quality table: every recipe against its own untrained initialisation, the untrained GloVe baselines and the
seed paper's row, on the same evaluator and data, with the command that makes each row.

A :class:`QualityPlan` (a YAML file the caller hands in; the checkout ships one) names the data pipelines the recipes
read and the recipes (a training config plus ``--set`` overrides each). ``parabit quality`` runs it
(``pipelines.quality``) and writes the table from :func:`quality_markdown` into the plan's ``document``;
``parabit champion`` trains and promotes the plan's champion.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import Field, NonNegativeInt, field_validator, model_validator

from parabit.config import Config
from parabit.papers.elgohary.paper import paper_value
from parabit.evaluation.report import EvaluationReport
from parabit.paths import project_path
from parabit.backtranslation.select import PIPELINE_REFERENCE
from parabit.recipes import load_run_config
from parabit.training import TrainingConfig

YEARS = ("sts2012", "sts2013", "sts2014", "sts2015", "sts2016")
COLUMNS = (*YEARS, "sick")
# The seed row to beat (stretch goal): Elgohary & Carpuat's J_bi on 3M bilingual phrase pairs (no STS 2016 score).
SEED_ROW = ("seed: Elgohary & Carpuat J_bi, bilingual phrases (3M pairs)",
            {name: paper_value(name, "mean" if name != "sick" else "test", "bilingual_phrases", "jbi")
             for name in COLUMNS})


class RecipeEntry(Config):
    """One recipe of the plan: a training config and the ``--set`` overrides that make it this recipe, and what it
    is, in a few words, for the table."""

    config: str
    set: dict[str, Any] = Field(default_factory=dict)
    about: str = ""


class DataStep(Config):
    """A pipeline run that recipes read (as ``pipeline:<its name>`` in their ``data.path``): which pipeline, and
    its config file."""

    pipeline: Literal["backtranslate", "phrases"] = "backtranslate"
    config: str


class QualityPlan(Config):
    """What ``parabit quality`` runs: ``data`` (pipelines to run first, each only when a recipe being trained reads
    it), ``recipes`` (by name: the run name is ``<plan name>-<recipe name>``), the ``champion`` recipe (what
    ``parabit champion`` trains and promotes), the training ``seeds`` every recipe runs with (a row is their mean ±
    standard deviation; the recipe config's own seed keeps the plain run name, another seed ``s`` adds ``-seed<s>``),
    and ``document``, the markdown file the table goes into (relative: in the project folder; its table is replaced,
    the prose around it kept). No default: a plan that names no document has its table printed and logged to
    MLflow only. Config paths (``config`` of a recipe or data step) are read from the project folder when
    relative."""

    name: str = Field("quality", pattern=r"^[^/\s]+$")
    data: list[DataStep] = Field(default_factory=list)
    recipes: dict[str, RecipeEntry] = Field(min_length=1)
    champion: str
    seeds: tuple[NonNegativeInt, ...] = Field((1, 2, 3), min_length=1)
    document: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _champion_is_a_recipe(self):
        if self.champion not in self.recipes:
            raise ValueError(f"champion {self.champion!r} is not one of the recipes {sorted(self.recipes)}")
        return self

    @field_validator("recipes")
    @classmethod
    def _recipes_load(cls, recipes: dict[str, RecipeEntry]) -> dict[str, RecipeEntry]:
        for name, entry in recipes.items():
            load_run_config(project_path(entry.config), entry.set)  # a typo fails when the plan loads
        return recipes

    def recipe_config(self, recipe: str, seed: int | None = None) -> TrainingConfig:
        """The recipe's training config; with ``seed``, that training seed (and its run name)."""
        entry = self.recipes[recipe]
        config = load_run_config(project_path(entry.config), {**entry.set, "name": self.run_name(recipe)})
        if seed is None or seed == config.seed:
            return config
        return config.model_copy(update={"seed": seed, "name": f"{config.name}-seed{seed}"})

    def pipelines_read(self, recipes: list[str]) -> set[str]:
        """The names of the pipelines whose outputs these recipes train on."""
        names = set()
        for recipe in recipes:
            data = getattr(self.recipe_config(recipe), "data", None)
            for source in getattr(data, "all_sources", []):
                raw = [source.path] if isinstance(source.path, str) else source.path or []
                names |= {entry.removeprefix(PIPELINE_REFERENCE).partition("/")[0] for entry in raw
                          if entry.startswith(PIPELINE_REFERENCE)}
        return names

    def run_name(self, recipe: str) -> str:
        return self.recipes[recipe].set.get("name", f"{self.name}-{recipe}")

    def command(self, recipe: str) -> str:
        """The command that trains this recipe by itself."""
        entry = self.recipes[recipe]
        sets = "".join(f" --set {_quote(f'{key}={_yaml(value)}')}"
                       for key, value in {**entry.set, "name": self.run_name(recipe)}.items())
        return f"parabit train --config {entry.config}{sets}"


def _quote(word: str) -> str:
    """A shell word: as is when safe, else in double quotes (the YAML inside may hold single ones)."""
    return word if shlex.quote(word) == word else f'"{word}"'


def _yaml(value: Any) -> str:
    """``value`` as the YAML a ``--set`` reads back."""
    return yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix("\n...").strip()


@dataclass(frozen=True)
class Row:
    """One line of the table: a label, the scores of :data:`COLUMNS` (the mean over ``runs`` runs, with their
    standard deviation in ``spread`` when there are several), and how it was made."""

    label: str
    scores: dict[str, float | None]
    command: str = ""
    spread: dict[str, float] = field(default_factory=dict)
    runs: int = 1

    @classmethod
    def of(cls, label: str, report: EvaluationReport, command: str = "") -> "Row":
        return cls.over(label, [report], command)

    @classmethod
    def over(cls, label: str, reports: list[EvaluationReport], command: str = "") -> "Row":
        """The mean (and sample standard deviation) of several runs' scores, e.g. one recipe's training seeds."""
        per_run = [_scores(report) for report in reports]
        scores = {name: _mean([run[name] for run in per_run]) for name in COLUMNS}
        spread = {}
        if len(per_run) > 1:
            spread = {name: float(np.std([run[name] for run in per_run], ddof=1)) for name in COLUMNS
                      if scores[name] is not None}
            means = [_mean([run[year] for year in YEARS]) for run in per_run]
            if all(value is not None for value in means):
                spread["sts_mean"] = float(np.std(means, ddof=1))
        return cls(label, scores, command, spread, len(per_run))

    @property
    def sts_mean(self) -> float | None:
        """The mean of the five STS years (what "improves on its initialisation" is measured by)."""
        return _mean([self.scores[year] for year in YEARS])


def _scores(report: EvaluationReport) -> dict[str, float | None]:
    scores = {}
    for name in COLUMNS:
        try:
            scores[name] = report.value(name, "test" if name == "sick" else "mean", "pearson")
        except KeyError:
            scores[name] = None
    return scores


def _mean(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(np.mean(values))


def _cell(value: float | None, bar: float | None = None, spread: float | None = None) -> str:
    if value is None:
        return "–"
    text = f"{value:.3f}"
    text = f"**{text}**" if bar is not None and value > bar else text
    return text if spread is None else f"{text} ± {spread:.4f}"  # seeds often agree to the third decimal


def quality_markdown(baselines: list[Row], recipes: list[tuple[Row, Row]], sif: Row) -> str:
    """The table: baselines and the seed row, then each recipe's untrained initialisation and trained model; a
    trained score above GloVe-SIF is bold. ``recipes``: (untrained, trained) per recipe."""
    header = "| encoder | " + " | ".join(name.upper().replace("STS", "STS ") for name in COLUMNS) + \
             " | STS mean | seeds | command |"
    lines = [header, "|---" * (len(COLUMNS) + 4) + "|"]
    seed_label, seed_scores = SEED_ROW
    for row in [*baselines, Row(seed_label, seed_scores, "(published)")]:
        lines.append(f"| {row.label} | " + " | ".join(_cell(row.scores[c]) for c in COLUMNS)
                     + f" | {_cell(row.sts_mean)} | | {row.command} |")
    for untrained, trained in recipes:
        lines.append(f"| {untrained.label} | " + " | ".join(_cell(untrained.scores[c]) for c in COLUMNS)
                     + f" | {_cell(untrained.sts_mean)} | | {untrained.command} |")
        lines.append(f"| {trained.label} | "
                     + " | ".join(_cell(trained.scores[c], sif.scores[c], trained.spread.get(c)) for c in COLUMNS)
                     + f" | {_cell(trained.sts_mean, sif.sts_mean, trained.spread.get('sts_mean'))} | {trained.runs} "
                     + f"| `{trained.command}` |")
    return "\n".join(lines)


def gains(recipes: list[tuple[Row, Row]]) -> dict[str, float]:
    """Per recipe: trained minus untrained on the mean of the five STS years."""
    return {trained.label: trained.sts_mean - untrained.sts_mean for untrained, trained in recipes}


def gain_line(untrained: Row, trained: Row) -> str:
    """What training added to a recipe on the five-year STS mean, and whether that exceeds its seeds' spread."""
    gain = trained.sts_mean - untrained.sts_mean
    if trained.runs == 1:
        return f"{gain:+.3f} on the mean of the five STS years over its initialisation (1 seed)"
    spread = trained.spread["sts_mean"]
    verdict = "more than" if abs(gain) > spread else "within"
    return (f"{gain:+.3f} on the mean of the five STS years over its initialisation, {verdict} the spread of its "
            f"{trained.runs} seeds (sd {spread:.4f})")


def beats(row: Row, bar: Row) -> dict[str, bool]:
    """Per column: whether ``row`` scores above ``bar``."""
    return {c: row.scores[c] is not None and bar.scores[c] is not None and row.scores[c] > bar.scores[c]
            for c in COLUMNS}


TABLE_START, TABLE_END = "<!-- quality-table:start -->", "<!-- quality-table:end -->"


def write_table(path: Path, table: str) -> Path:
    """Put ``table`` between the table markers of the document (the prose around it stays), or start the document."""
    section = f"{TABLE_START}\n{table.strip()}\n{TABLE_END}"
    text = path.read_text() if path.exists() else "# Quality\n\n"
    if TABLE_START in text and TABLE_END in text:
        text = text[:text.index(TABLE_START)] + section + text[text.index(TABLE_END) + len(TABLE_END):]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
