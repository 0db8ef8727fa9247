"""The commands that run pipelines: ``backtranslate``, ``phrases``, ``mine`` (bitext mining), ``main`` (pipeline →
training → registered model) and ``reproduce`` (the seed papers' tables). Registered with ``parabit`` through the ``parabit.commands``
entry points (``pyproject.toml``); ``jobs/<name>.py`` runs the same command objects."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from parabit.cli.options import common_options, config_path, load
from parabit.paths import project_path

if TYPE_CHECKING:
    from parabit.reproduction.config import ReproduceConfig

# Where a full `parabit reproduce` keeps its results in the checkout (relative to the project folder): the document
# and the committed ledger beside it. A config's own `document:` / `ledger:` win; --quick runs keep the library's
# default, their output folder, so a smoke run never touches the committed files.
REPRODUCTION_DOCUMENT = "docs/reproduction.md"
REPRODUCTION_LEDGER = "docs/reproduction"


@click.command(short_help="Back-translated paraphrase pairs (resumable).")
@config_path(help_text="YAML with PipelineConfig fields (jobs/configs/backtranslate_*.yaml)")
@common_options
def backtranslate(config_path: str, overrides: dict) -> int:
    """Build back-translated paraphrase pairs on Ray Data: ingest → back-translate → score → select → stats.

    Re-running with the same config resumes: complete stages are skipped."""
    from parabit.backtranslation import PipelineConfig
    from pipelines import backtranslate as pipeline

    result = pipeline.run(load(PipelineConfig, config_path, overrides))
    click.echo(stage_table(result.stages))
    click.echo(f"training pairs: {result.output}\nMLflow run: {result.run_id}")
    return 0


@click.command(short_help="Phrase pairs and pivot paraphrases (resumable).")
@config_path(help_text="YAML with PhrasesConfig fields (jobs/configs/phrases_en_es.yaml)")
@common_options
def phrases(config_path: str, overrides: dict) -> int:
    """Build bilingual phrase pairs and pivot paraphrases from word-aligned bitext on Ray Data (resumable)."""
    from parabit.phrases import PhrasesConfig
    from parabit.phrases.report import summary
    from pipelines import phrases as pipeline

    run = pipeline.run(load(PhrasesConfig, config_path, overrides))
    click.echo(stage_table(run.stages))
    click.echo(summary(run.stages))
    click.echo(f"phrase table: {run.stages['phrase_table'].data}\npivot paraphrases: {run.stages['pivot'].data}")
    click.echo(f"MLflow run: {run.tracker.run_id}")
    return 0


@click.command(short_help="Mine translation pairs from two piles of sentences.")
@config_path(help_text="YAML with MineConfig fields (jobs/configs/mine_europarl.yaml)")
@common_options
def mine(config_path: str, overrides: dict) -> int:
    """Find the translation pairs between two piles of sentences (e.g. Spanish and English) with a bilingual model:
    Ray Data batch inference embeds both piles (an actor pool, the model loaded once per actor), then LASER's ratio
    margin pairs them, each sentence at most once. Writes the pairs best first, with their scores.

    Re-running with the same config resumes: complete stages are skipped."""
    from parabit.mining import MineConfig
    from pipelines import mine as pipeline

    started = time.perf_counter()
    result = pipeline.run(load(MineConfig, config_path, overrides))
    seconds = time.perf_counter() - started
    click.echo(stage_table(result.stages))
    embedded = result.stages["embed"]
    click.echo(f"mined pairs: {result.output} ({result.stages['pairs'].rows_out} pairs of {embedded.rows_out} "
               f"sentences; {seconds:.1f} s in all)\nMLflow run: {result.run_id}")
    return 0


@click.command("main", short_help="The main job: bitext to registered model.")
@click.option("--pipeline-config", default="jobs/configs/backtranslate_slice.yaml", show_default=True, metavar="PATH",
              help="the back-translation pipeline's config (the default: in the project folder)")
@click.option("--train-config", default="jobs/configs/main.yaml", show_default=True, metavar="PATH",
              help="the training config (its data.path is the pipeline's output; the default: in the project folder)")
@common_options
def main_job(pipeline_config: str, train_config: str, overrides: dict) -> int:
    """The whole flow on the embedded defaults: bitext → back-translation → filtering → training → evaluation →
    registered model. The training run is nested under the pipeline's MLflow run: one view links data and model.

    --set overrides the training config."""
    from parabit.backtranslation import PipelineConfig
    from parabit.recipes import load_run_config, recipe_for
    from parabit.tracking import tags
    from parabit.training.run import run_training
    from pipelines import backtranslate as pipeline

    started = time.perf_counter()
    pipeline_settings = load(PipelineConfig, _shipped(pipeline_config), {})
    training = load_run_config(_shipped(train_config), overrides)  # fail on a bad config before any work
    pipeline_settings.experiment = training.tracking.experiment
    data = pipeline.run(pipeline_settings)
    pipeline_seconds = time.perf_counter() - started
    training.data.path = str(data.output)
    result = run_training(recipe_for(training), parent_run_id=data.run_id,
                          tags={tags.PIPELINE_RUN_ID: data.run_id or ""})
    click.echo("\n" + stage_table(data.stages) + "\n")
    click.echo(result.report.table())
    timing = ", ".join(f"{k} {v:.1f} s" for k, v in {"pipeline": pipeline_seconds, **result.seconds}.items())
    click.echo(f"\ntime: {timing}")
    click.echo(f"MLflow: pipeline run {data.run_id} > training run {result.mlflow_run_id}  "
               f"(experiment {training.tracking.experiment})")
    click.echo(f"model: {result.model_uri}")
    return 0


@click.command(short_help="The seed papers' tables and verdicts (ledger).")
@config_path(default="jobs/configs/reproduction.yaml", help_text="YAML with ReproduceConfig fields (the default: in "
             "the project folder)")
@click.option("--seed-paper", "papers", multiple=True, metavar="NAME",
              help="train only this paper's missing cells (bao, elgohary, wieting, bildrl; repeatable); the "
                   "document still shows every paper the ledger has")
@click.option("--repeats", type=click.IntRange(min=1), default=None, help="training seeds per compared group")
@click.option("--parallel", default=None, metavar="N|auto",
              help="cells trained at once, each a Ray task (default auto: as many as the cluster's CPUs hold)")
@click.option("--verify", "verify", default=None, metavar="CELL",
              help="train this one cell again and print its numbers beside its ledger record (nothing recorded)")
@click.option("--quick", is_flag=True, help="small slices, 1 epoch, each paper's first finding only (a smoke run; "
              "its own ledger and document under outputs/reproduction/)")
@click.option("--allow-dirty", is_flag=True, help="record cells trained from a working tree with uncommitted "
              "changes (the document flags them; by default such a tree is refused: run from a `git worktree`)")
@click.option("--merge-ledger", "merge", default=None, metavar="FOLDER",
              help="first append the records of another ledger folder (a worktree's, another machine's) that this "
                   "one lacks")
@click.option("--document-only", is_flag=True, help="write the document from the ledger alone: build no data, train "
              "no cell (missing cells are shown as not run yet)")
@common_options
def reproduce(config_path: str, papers: tuple[str, ...], repeats: int | None, parallel: str | None,
              verify: str | None, quick: bool, allow_dirty: bool, merge: str | None, document_only: bool,
              overrides: dict) -> int:
    """Reproduce the seed papers (Bao et al., Elgohary & Carpuat, Wieting et al., BilDRL) on the shipped data and
    write docs/reproduction.md: each paper's tables beside the published numbers, and a verdict on each headline
    finding over several training seeds.

    Results live in the committed ledger docs/reproduction/<paper>.jsonl (one line per finished cell): a cell
    recorded there with its current settings is never trained again, so a fresh checkout writes the same document
    without training, and a long reproduction can be spread over days and machines. Only missing cells train
    (a killed run resumes). What has run, at which scale, and how long each paper took: docs/reproduction.md."""
    from parabit.reproduction.config import ReproduceConfig
    from parabit.reproduction.reproduce import Reproduction
    from parabit.tracking.lineage import command_line
    from pipelines import backtranslate as backtranslate_pipeline
    from pipelines import phrases as phrase_pipeline

    overrides = {**overrides, **({"papers": list(papers)} if papers else {}),
                 **({"repeats": repeats} if repeats else {}), **({"quick": True} if quick else {}),
                 **({"allow_dirty": True} if allow_dirty else {}),
                 **({"parallel": parallel if parallel == "auto" else _positive(parallel)} if parallel else {})}
    config = checkout_results(load(ReproduceConfig, _shipped(config_path), overrides))
    reproduction = Reproduction(config, {"backtranslate": backtranslate_pipeline.run,
                                         "phrases": phrase_pipeline.run}, command=command_line())
    if verify:
        return _verify(reproduction, verify)
    if merge:
        from parabit.reproduction.ledger import merge_ledgers

        added = merge_ledgers(config.ledger_path, Path(merge))
        click.echo("merged: " + ", ".join(f"{paper} +{count}" for paper, count in added.items()) + f" from {merge}")
    if document_only:
        click.echo(f"document: {reproduction.document()}  (from the ledger {config.ledger_path}; nothing trained)")
        return 0
    document = reproduction.run()
    counts = reproduction.counts
    click.echo(f"cells: {counts['ledger']} taken from the ledger ({config.ledger_path}), {counts['mlflow']} from "
               f"MLflow runs, {counts['trained']} trained, {counts['failed']} failed")
    click.echo(f"document: {document}  (MLflow experiment {config.experiment})")
    return 1 if counts["failed"] else 0


def checkout_results(config: ReproduceConfig) -> ReproduceConfig:
    """``config`` with the checkout's document and ledger (:data:`REPRODUCTION_DOCUMENT`,
    :data:`REPRODUCTION_LEDGER`) for a full run, where it names none; a quick run's config as it is."""
    if config.quick:
        return config
    return config.model_copy(update={"document": config.document or REPRODUCTION_DOCUMENT,
                                     "ledger": config.ledger or REPRODUCTION_LEDGER})


def _positive(value: str) -> int:
    from parabit.config import ConfigError

    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"--parallel takes a number of cells (1, 2, ...) or 'auto', not {value!r}")
    return int(value)


def _verify(reproduction, name: str) -> int:
    """Train ``name`` again and print its numbers beside the ledger's."""
    from parabit.config import ConfigError

    try:
        recorded, again = reproduction.verify(name)
    except LookupError as err:
        raise ConfigError(str(err)) from None
    if not again.ok:
        click.echo(f"{name}: training it again failed: {again.error}", err=True)
        return 1
    before = recorded.metrics if recorded is not None else {}
    keys = sorted(k for k in again.metrics if not k.startswith(("time/", "system/")) and "/" in k or k == "dev_score")
    click.echo(f"{'metric':<40}{'ledger':>12}{'again':>12}{'difference':>12}")
    for key in keys:
        old, new = before.get(key), again.metrics[key]
        old_text = f"{old:.4f}" if old is not None else "—"
        diff = f"{new - old:+.4f}" if old is not None else "—"
        click.echo(f"{key:<40}{old_text:>12}{new:>12.4f}{diff:>12}")
    source = f"ledger record of commit {recorded.record.commit[:8]}" if recorded is not None else "no ledger record"
    click.echo(f"{name}: {source}; trained again as {again.cell.name} (MLflow run {again.run_id})")
    return 0


def _shipped(path: str) -> str:
    """``path`` as given when it exists from here (or is absolute); else the same relative path in the project folder
    when it is there: the shipped default configs work from any current directory (parabit.paths.project_root)."""
    if Path(path).is_absolute() or Path(path).exists():
        return path
    shipped = project_path(path)
    return str(shipped) if shipped.exists() else path


def stage_table(stages: dict) -> str:
    """Rows in / out / rejected, seconds and the commonest reject reasons of each stage."""
    lines = [f"{'stage':<14}{'rows in':>9}{'rows out':>10}{'rejected':>10}{'seconds':>9}  reject reasons"]
    for name, stage in stages.items():
        reasons = dict(list(stage.reject_reasons.items())[:4])
        lines.append(f"{name:<14}{stage.rows_in:>9}{stage.rows_out:>10}{stage.rows_rejected:>10}"
                     f"{stage.seconds:>9.1f}  {reasons}")
    return "\n".join(lines)
