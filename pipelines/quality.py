"""The quality study and the champion: build the plan's data with the back-translation pipeline, train its recipes,
and compare each with its untrained self and the plan's baselines (``parabit quality``), or train and promote the
champion (``parabit champion``). Every step resumes: a finished pipeline stage or training run is reused."""

from __future__ import annotations

import time

import click

from parabit.cli.options import common_options, config_path, load
from parabit.paths import project_path

PLAN = "jobs/configs/quality/plan.yaml"


def build_data(plan, recipes: list[str]) -> None:
    """Run (or reuse) every pipeline of the plan that these recipes read."""
    from parabit.phrases import PhrasesConfig
    from parabit.backtranslation import PipelineConfig
    from pipelines import backtranslate, phrases

    needed = plan.pipelines_read(recipes)
    for step in plan.data:
        pipeline, config_class = {"backtranslate": (backtranslate, PipelineConfig),
                                  "phrases": (phrases, PhrasesConfig)}[step.pipeline]
        config = load(config_class, project_path(step.config), {})
        if config.name not in needed:
            continue
        started = time.perf_counter()
        result = pipeline.run(config)
        last = list(result.stages.values())[-1]
        click.echo(f"[data] {step.config}: {last.rows_out} rows out of its last stage "
                   f"({time.perf_counter() - started:.0f} s)")


def train_recipe(plan, recipe: str, tags: dict | None = None, seed: int | None = None):
    """Train (or reuse) one recipe of the plan (with training seed ``seed``: default, the recipe config's); its
    result."""
    from parabit.recipes import recipe_for
    from parabit.training.run import run_training

    return run_training(recipe_for(plan.recipe_config(recipe, seed)), tags=tags)


def is_model_uri(name: str) -> bool:
    """Whether a plan's baseline names a model (``models:/...``, ``runs:/...``) rather than a built-in baseline."""
    return ":/" in name


def baseline_encoder(name: str):
    """``encode`` of a plan's baseline: a model URI or a built-in baseline's name."""
    from parabit.baselines import build_baseline
    from parabit.export.pyfunc import load_encoder
    from parabit.tracking.registry import check_model_uri

    return load_encoder(check_model_uri(name)) if is_model_uri(name) else build_baseline(name).encode


def evaluate_options(name: str) -> str:
    """The ``parabit evaluate`` options that score a plan's baseline alone."""
    return f"--model-uri {name}" if is_model_uri(name) else f"--encoder {name}"


@click.command(short_help="Each quality recipe vs its untrained start.")
@config_path(default=PLAN, help_text="the quality plan (data pipelines, recipes, champion)")
@click.option("--recipe", "only", multiple=True, help="run only these recipes of the plan (repeatable)")
@click.option("--seed", "seeds", type=int, multiple=True,
              help="train only these seeds of the plan's `seeds` (repeatable; the table then says how many)")
@click.option("--dev-curve", is_flag=True,
              help="train nothing: write the dev curves of the plan's finished runs into its document, below its table")
@common_options
def quality(config_path: str, only: tuple[str, ...], seeds: tuple[int, ...], dev_curve: bool, overrides: dict) -> int:
    """Compare every recipe of the plan (over its training seeds) with its untrained initialisation and the plan's
    baselines (GloVe by default; the bilingual plan, jobs/configs/bilingual/plan.yaml: the English champion); write
    the table into the plan's `document` (docs/quality.md for both shipped plans) and log it to MLflow."""
    from parabit.config import ConfigError
    from parabit.evaluation import EvaluationSuite
    from parabit.quality import QualityPlan, Row, gain_line, quality_markdown, write_table
    from parabit.recipes import recipe_for
    from parabit.tracking import RunTracker, tags

    plan = load(QualityPlan, project_path(config_path), overrides)
    if dev_curve:
        return write_dev_curve(plan)
    unknown = sorted(set(only) - set(plan.recipes))
    if unknown:
        raise ConfigError(f"--recipe {unknown}: the plan's recipes are {sorted(plan.recipes)}")
    recipes = list(only or plan.recipes)
    if set(seeds) - set(plan.seeds):
        raise ConfigError(f"--seed {sorted(set(seeds) - set(plan.seeds))}: the plan's seeds are {list(plan.seeds)}")
    build_data(plan, recipes)
    evaluation = getattr(plan.recipe_config(next(iter(plan.recipes))), "evaluation", None)
    suite = EvaluationSuite.standard(evaluation)
    baselines = {name: Row.of(name, suite(baseline_encoder(name)), f"`parabit evaluate {evaluate_options(name)}`",
                              plan.columns) for name in plan.baselines}
    rows = []
    for recipe in recipes:
        results = [train_recipe(plan, recipe, tags={tags.KIND: "quality"}, seed=seed) for seed in seeds or plan.seeds]
        config = plan.recipe_config(recipe)
        recipe_suite = EvaluationSuite.standard(getattr(config, "evaluation", None))
        untrained = Row.of(f"{recipe}, untrained (its initialisation)",
                           recipe_suite(recipe_for(config).untrained_embedder().encode), "", plan.columns)
        trained = Row.over(f"**{recipe}**: {plan.recipes[recipe].about}", [result.report for result in results],
                           plan.command(recipe), plan.columns)
        rows.append((untrained, trained))
    table = quality_markdown(list(baselines.values()), rows, bar=baselines.get(plan.bar), columns=plan.columns,
                             seed_row=plan.seed_row)
    improvement = "\n".join(f"- {trained.label}: {gain_line(untrained, trained, plan.headline_column)}"
                            for untrained, trained in rows)
    text = f"{table}\n\n{improvement}\n"
    click.echo(text)
    if only:
        click.echo("table not written: --recipe runs part of the plan")
    elif plan.document is None:
        click.echo("table not written: the plan names no `document:`")
    else:
        click.echo(f"table written to {write_table(project_path(plan.document), text, plan.name)}")
    tracker = RunTracker("parabit-quality", f"{plan.name}-table", tags={tags.KIND: "quality-table"})
    tracker.start()
    with tracker.closing():
        tracker.log_text(text, "quality/table.md")
    return 0


def write_dev_curve(plan) -> int:
    """Print the dev curves of ``plan``'s runs (:func:`parabit.quality.dev_curve_section`) and write them into its
    document (a run the store does not have: one line naming it)."""
    from parabit.config import ConfigError
    from parabit.quality import dev_curve_section, write_table

    try:
        section = dev_curve_section(plan)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    click.echo(section)
    if plan.document is not None:
        path = write_table(project_path(plan.document), section, f"{plan.name}-dev-curve")
        click.echo(f"dev curve written to {path}")
    return 0


@click.command(short_help="Re-create models:/parabit-encoder@champion from scratch.")
@config_path(default=PLAN, help_text="the quality plan whose champion recipe to train")
@common_options
def champion(config_path: str, overrides: dict) -> int:
    """Re-create the champion from scratch: data, training, evaluation, registration as parabit-encoder, and the
    @champion alias when it is the best version on dev (the promotion rule of `parabit promote`)."""
    from parabit.baselines import build_baseline
    from parabit.evaluation import EvaluationSuite
    from parabit.quality import QualityPlan, Row, beats
    from parabit.tracking import tags
    from parabit.tracking.registry import promote_champion

    plan = load(QualityPlan, project_path(config_path), overrides)
    started = time.perf_counter()
    build_data(plan, [plan.champion])
    result = train_recipe(plan, plan.champion, tags={tags.KIND: "champion"})
    click.echo(result.report.table())
    sif = Row.of("glove-sif", EvaluationSuite.standard()(build_baseline("glove-sif").encode))
    wins = beats(Row.of("champion", result.report), sif)
    click.echo("\nagainst GloVe-SIF: " + ", ".join(f"{name} {'above' if won else 'NOT above'}"
                                                    for name, won in wins.items()))
    click.echo(promote_champion(plan.recipe_config(plan.champion).tracking.register_as))
    click.echo(f"model: {result.model_uri}  (MLflow run {result.mlflow_run_id}; "
               f"{time.perf_counter() - started:.0f} s in all)")
    return 0
