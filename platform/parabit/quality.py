"""The quality table: every recipe against its own untrained initialisation, the untrained GloVe baselines and the
seed paper's row, on the same evaluator and data, with the command that makes each row.

A :class:`QualityPlan` (a YAML file the caller hands in; the checkout ships one) names the data pipelines the recipes
read and the recipes (a training config plus ``--set`` overrides each). ``parabit quality`` runs it
(``pipelines.quality``) and writes the table from :func:`quality_markdown` into the plan's ``document``;
``parabit champion`` trains and promotes the plan's champion.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import Field, NonNegativeInt, field_validator, model_validator

from parabit.config import Config
from parabit.markdown import BLANK, table
from parabit.papers.elgohary.paper import paper_value
from parabit.evaluation.report import EvaluationReport
from parabit.paths import project_path
from parabit.backtranslation.select import PIPELINE_REFERENCE
from parabit.recipes import load_run_config
from parabit.training import TrainingConfig

YEARS = ("sts2012", "sts2013", "sts2014", "sts2015", "sts2016")


class Column(Config):
    """One score column of the table: ``name`` (its key in a :class:`Row`), ``label`` (its header) and the score of
    an evaluation report it shows (``benchmark``, ``subset``, ``metric``)."""

    name: str = Field(min_length=1)
    """The column's key, which ``headline`` names. The STS mean reads the keys ``sts2012``…``sts2016`` and the seed row
    the English columns' keys, so use those keys only for the scores they stand for."""
    label: str = Field(min_length=1)
    """The column's header in the table."""
    benchmark: str = Field(min_length=1)
    """The evaluation report's benchmark, e.g. ``sts2014``, ``sick``, ``tatoeba-es``; a row whose report lacks the
    score shows ``–``."""
    subset: str = "mean"
    """The benchmark's subset: ``mean`` (unweighted over an STS year's subsets, or a retrieval set's two
    directions), ``wmean`` (an STS year weighted by pairs), ``test`` (SICK), or one subset's name."""
    metric: str = "pearson"
    """The score: ``pearson`` or ``spearman`` for similarity, ``accuracy`` for retrieval, ``accuracy`` or ``f1`` for
    MSRP."""


# The English table: Pearson r on each STS year (the mean over its subsets) and SICK test.
ENGLISH_COLUMNS = (*(Column(name=year, label=f"STS {year[3:]}", benchmark=year) for year in YEARS),
                   Column(name="sick", label="SICK", benchmark="sick", subset="test"))
# Read for every row whatever the columns: the five-year STS mean is what "improves on its start" is measured by.
YEAR_COLUMNS = ENGLISH_COLUMNS[:len(YEARS)]
# The seed row to beat (stretch goal): Elgohary & Carpuat's J_bi on 3M bilingual phrase pairs (no STS 2016 score).
SEED_ROW = ("seed: Elgohary & Carpuat J_bi, bilingual phrases (3M pairs)",
            {column.name: paper_value(column.name, "mean" if column.name != "sick" else "test", "bilingual_phrases",
                                      "jbi") for column in ENGLISH_COLUMNS})


class RecipeEntry(Config):
    """One recipe of the plan: a training config and the ``--set`` overrides that make it this recipe, and what it
    is, in a few words, for the table."""

    config: str
    """The training config file (any recipe: its ``recipe:`` key decides); a relative path is read from the project
    folder."""
    set: dict[str, Any] = Field(default_factory=dict)
    """Dotted overrides applied to ``config`` as ``--set`` would (e.g. ``optim.epochs: 3``); a ``name`` replaces the
    run name ``<plan name>-<recipe name>``."""
    about: str = ""
    """What the recipe is, in a few words: shown after its name in its trained row."""


class DataStep(Config):
    """A pipeline run that recipes read (as ``pipeline:<its name>`` in their ``data.path``): which pipeline, and
    its config file."""

    pipeline: Literal["backtranslate", "phrases"] = "backtranslate"
    """The pipeline: ``backtranslate`` (back-translated and round-trip pairs) or ``phrases`` (phrase pairs and pivot
    paraphrases)."""
    config: str
    """The pipeline's config file (relative: in the project folder); its ``name`` is what recipes read as
    ``pipeline:<name>``."""


class QualityPlan(Config):
    """What ``parabit quality`` runs: ``data`` (pipelines to run first, each only when a recipe being trained reads
    it), ``recipes`` (by name: the run name is ``<plan name>-<recipe name>``), the ``champion`` recipe (what
    ``parabit champion`` trains and promotes), the training ``seeds`` every recipe runs with (a row is their mean ±
    standard deviation; the recipe config's own seed keeps the plain run name, another seed ``s`` adds ``-seed<s>``),
    and ``document``, the markdown file the table goes into (relative: in the project folder; its table is replaced,
    the prose around it kept). No default: a plan that names no document has its table printed and logged to
    MLflow only. Config paths (``config`` of a recipe or data step) are read from the project folder when
    relative.

    The table: ``columns`` (default the English STS years and SICK; the five-year STS mean is always shown),
    ``baselines`` (rows evaluated untrained: a built-in baseline encoder's name or a model URI such as
    ``models:/parabit-encoder@champion``, scored with the ``evaluation`` of the first recipe), ``bar`` (the
    baseline a trained score must beat to be bold), ``headline`` (the column each recipe's gain over its start is
    read on; default the STS mean) and ``seed_row`` (Elgohary & Carpuat's published row, for the
    English columns)."""

    name: str = Field("quality", pattern=r"^[^/\s]+$")
    """The plan's name (no ``/`` or whitespace): recipes run as ``<name>-<recipe>``, its table sits between markers
    named after it in ``document``, and its MLflow table run is ``<name>-table``."""
    data: list[DataStep] = Field(default_factory=list)
    """Pipelines run (or reused when finished) before training, in order, each only when a recipe being trained reads
    its output (``pipeline:<its name>`` in its ``data.path``)."""
    recipes: dict[str, RecipeEntry] = Field(min_length=1)
    """The recipes by name (at least one), each two rows: its untrained start and the trained model. Every one's
    config is loaded with the plan, so a typo fails at once."""
    champion: str
    """The recipe (one of ``recipes``) that ``parabit champion`` trains, with its config's own seed, and promotes."""
    seeds: tuple[NonNegativeInt, ...] = Field((1, 2, 3), min_length=1)
    """Training seeds every recipe runs with; its row shows their mean ± standard deviation. The config's own seed
    keeps the plain run name, another seed ``s`` adds ``-seed<s>``."""
    document: str | None = Field(None, min_length=1)
    """The markdown file the table goes into (relative: in the project folder), replacing the plan's previous table
    and keeping the prose around it. None: the table is only printed and logged to MLflow."""
    columns: tuple[Column, ...] = Field(ENGLISH_COLUMNS, min_length=1)
    """The score columns. Default: Pearson r on each STS year (the mean over its subsets) and on SICK test; the
    five-year STS mean is always shown after them."""
    baselines: tuple[str, ...] = ("glove-mean", "glove-sif")
    """Rows scored untrained, with the first recipe's ``evaluation``: built-in baseline encoders' names
    (:data:`parabit.baselines.BASELINES`) or model URIs such as ``models:/parabit-encoder@champion``."""
    bar: str | None = "glove-sif"
    """The baseline (one of ``baselines``) that a trained score must beat to be bold; None: nothing is bold."""
    seed_row: bool = True
    """Show the seed paper's published row (Elgohary & Carpuat's J_bi on 3M bilingual phrase pairs) under the
    baselines; it has scores for the English columns only."""
    headline: str | None = None
    """The column (a ``name`` of ``columns``) that each recipe's gain over its untrained start is read on; None: the
    five-year STS mean."""

    @property
    def headline_column(self) -> Column | None:
        """The column each recipe's gain over its start is read on (None: the five-year STS mean)."""
        return next(column for column in self.columns if column.name == self.headline) if self.headline else None

    @model_validator(mode="after")
    def _headline_is_a_column(self):
        names = [column.name for column in self.columns]
        if self.headline is not None and self.headline not in names:
            raise ValueError(f"headline {self.headline!r} is not one of the columns {names}")
        return self

    @model_validator(mode="after")
    def _bar_is_a_baseline(self):
        if self.bar is not None and self.bar not in self.baselines:
            raise ValueError(f"bar {self.bar!r} is not one of the baselines {list(self.baselines)}")
        return self

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
    """One line of the table: a label, its scores by column name (the mean over ``runs`` runs, with their standard
    deviation in ``spread`` when there are several; the STS years always among them), and how it was made."""

    label: str
    scores: dict[str, float | None]
    command: str = ""
    spread: dict[str, float] = field(default_factory=dict)
    runs: int = 1

    @classmethod
    def of(cls, label: str, report: EvaluationReport, command: str = "",
           columns: Sequence[Column] = ENGLISH_COLUMNS) -> "Row":
        return cls.over(label, [report], command, columns)

    @classmethod
    def over(cls, label: str, reports: list[EvaluationReport], command: str = "",
             columns: Sequence[Column] = ENGLISH_COLUMNS) -> "Row":
        """The mean (and sample standard deviation) of several runs' scores, e.g. one recipe's training seeds."""
        read = {column.name: column for column in (*YEAR_COLUMNS, *columns)}.values()
        per_run = [_scores(report, read) for report in reports]
        scores = {column.name: _mean([run[column.name] for run in per_run]) for column in read}
        spread = {}
        if len(per_run) > 1:
            spread = {name: float(np.std([run[name] for run in per_run], ddof=1)) for name in scores
                      if scores[name] is not None}
            means = [_mean([run[year] for year in YEARS]) for run in per_run]
            if all(value is not None for value in means):
                spread["sts_mean"] = float(np.std(means, ddof=1))
        return cls(label, scores, command, spread, len(per_run))

    @property
    def sts_mean(self) -> float | None:
        """The mean of the five STS years (what "improves on its initialisation" is measured by)."""
        return _mean([self.scores.get(year) for year in YEARS])


def _scores(report: EvaluationReport, columns: Iterable[Column]) -> dict[str, float | None]:
    scores = {}
    for column in columns:
        try:
            scores[column.name] = report.value(column.benchmark, column.subset, column.metric)
        except KeyError:
            scores[column.name] = None
    return scores


def _mean(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(np.mean(values))


def _cell(value: float | None, bar: float | None = None, spread: float | None = None) -> str:
    if value is None:
        return "–"
    text = f"{value:.3f}"
    text = f"**{text}**" if bar is not None and value > bar else text
    return text if spread is None else f"{text} ± {spread:.4f}"  # seeds often agree to the third decimal


def quality_markdown(baselines: list[Row], recipes: list[tuple[Row, Row]], bar: Row | None,
                     columns: Sequence[Column] = ENGLISH_COLUMNS, seed_row: bool = True) -> str:
    """The table: baselines (and the seed row), then each recipe's untrained initialisation and trained model; a
    trained score above ``bar``'s is bold. ``recipes``: (untrained, trained) per recipe."""
    names = [column.name for column in columns]
    published = [Row(SEED_ROW[0], SEED_ROW[1], "(published)")] if seed_row else []

    def plain(row: Row) -> tuple:
        return (row.label, *(_cell(row.scores.get(name)) for name in names), _cell(row.sts_mean), BLANK,
                row.command)

    def trained_row(row: Row) -> tuple:
        def cell(name: str, value: float | None) -> str:
            above = None if bar is None else bar.sts_mean if name == "sts_mean" else bar.scores.get(name)
            return _cell(value, above, row.spread.get(name))

        return (row.label, *(cell(name, row.scores.get(name)) for name in names), cell("sts_mean", row.sts_mean),
                row.runs, f"`{row.command}`")

    rows = [plain(row) for row in [*baselines, *published]]
    for untrained, trained in recipes:
        rows += [plain(untrained), trained_row(trained)]
    return table(("encoder", *(column.label for column in columns), "STS mean", "seeds", "command"), rows)


def gains(recipes: list[tuple[Row, Row]]) -> dict[str, float]:
    """Per recipe: trained minus untrained on the mean of the five STS years."""
    return {trained.label: trained.sts_mean - untrained.sts_mean for untrained, trained in recipes}


def gain_line(untrained: Row, trained: Row, headline: Column | None = None) -> str:
    """What training added to a recipe on the five-year STS mean (or the ``headline`` column), and whether that
    exceeds its seeds' spread."""
    name, what = ("sts_mean", "the mean of the five STS years") if headline is None else (headline.name,
                                                                                          headline.label)
    value = (lambda row: row.sts_mean) if headline is None else (lambda row: row.scores.get(name))
    gain = value(trained) - value(untrained)
    if trained.runs == 1:
        return f"{gain:+.3f} on {what} over its initialisation (1 seed)"
    spread = trained.spread[name]
    verdict = "more than" if abs(gain) > spread else "within"
    return (f"{gain:+.3f} on {what} over its initialisation, {verdict} the spread of its "
            f"{trained.runs} seeds (sd {spread:.4f})")


def beats(row: Row, bar: Row, columns: Sequence[Column] = ENGLISH_COLUMNS) -> dict[str, bool]:
    """Per column: whether ``row`` scores above ``bar``."""
    return {c.name: row.scores.get(c.name) is not None and bar.scores.get(c.name) is not None
            and row.scores[c.name] > bar.scores[c.name] for c in columns}


def table_markers(plan_name: str) -> tuple[str, str]:
    """The comments around a plan's table in its document (one table per plan name, so several plans share one)."""
    return f"<!-- {plan_name}-table:start -->", f"<!-- {plan_name}-table:end -->"


def write_table(path: Path, table: str, plan_name: str = "quality") -> Path:
    """Put ``table`` between the plan's table markers in the document (the prose around it stays), or add it at the
    end (a new document starts with a title)."""
    start, end = table_markers(plan_name)
    section = f"{start}\n{table.strip()}\n{end}"
    text = path.read_text() if path.exists() else "# Quality\n\n"
    if start in text and end in text:
        text = text[:text.index(start)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def dev_curve_markdown(experiment: str, run_names: Sequence[str], uri: str | None = None) -> str:
    """The dev score of each named training run after every epoch, against the pairs it had trained on by then (its
    ``dev_score`` and ``pairs_seen`` metrics; step 0, the untrained model, at 0 pairs), as a Markdown table with one
    row per run and one column per number of pairs. A run the store does not have: ValueError naming it."""
    from mlflow.tracking import MlflowClient

    from parabit.tracking import tags
    from parabit.tracking.store import tracking_uri

    client = MlflowClient(uri or tracking_uri())
    found = client.get_experiment_by_name(experiment)
    curves: dict[str, dict[int, float]] = {}
    for name in run_names:
        runs = client.search_runs([found.experiment_id], f"tags.`{tags.RUN_NAME}` = '{name}'") if found else []
        if not runs:
            raise ValueError(f"no run named {name!r} in experiment {experiment!r} of {client.tracking_uri}")
        run_id = runs[0].info.run_id
        seen = {m.step: int(m.value) for m in client.get_metric_history(run_id, "pairs_seen")} | {0: 0}
        curves[name] = {seen[m.step]: m.value for m in client.get_metric_history(run_id, "dev_score")
                        if m.step in seen}
    columns = sorted({pairs for curve in curves.values() for pairs in curve})
    return table(("run", *(f"{pairs:,}" for pairs in columns)),
                 [(name, *(_cell(curve.get(pairs)) for pairs in columns)) for name, curve in curves.items()])


def dev_curve_section(plan: QualityPlan, uri: str | None = None) -> str:
    """The dev curves of the runs of ``plan`` (every recipe, every seed), by dev set: what each run scored on its dev
    set after each epoch against the pairs it had trained on (:func:`dev_curve_markdown`), for the plan's document."""
    groups: dict[tuple[str, str], list[str]] = {}
    for recipe in plan.recipes:
        for seed in plan.seeds:
            config = plan.recipe_config(recipe, seed)
            key = (config.tracking.experiment, getattr(config, "dev", "the recipe's dev set"))
            groups.setdefault(key, []).append(config.name)
    return "\n\n".join(f"Dev score ({dev}) against pairs seen, after each epoch (0: the untrained start; MLflow "
                        f"experiment `{experiment}`):\n\n{dev_curve_markdown(experiment, names, uri)}"
                        for (experiment, dev), names in groups.items())
