"""``parabit config``: the JSON Schema of every kind of config (for editors), and checking config files."""

from __future__ import annotations

import importlib
import json

import click

from parabit.recipes import RECIPES, recipe_class

# kind -> "module:Class" of every config file a command reads other than a training run's: those are the recipes' own
# (parabit.recipes.RECIPES), each kind named after its recipe, so a new recipe is a kind without an entry here.
OTHER_KINDS = {
    "backtranslate": "parabit.backtranslation.config:PipelineConfig",
    "phrases": "parabit.phrases.config:PhrasesConfig",
    "mine": "parabit.mining.config:MineConfig",
    "translate-sick": "parabit.backtranslation.sick_translation:SICKTranslationConfig",
    "build-dictionaries": "parabit.recipes.bildrl.config:DictionaryBuildConfig",
    "reproduce": "parabit.reproduction.config:ReproduceConfig",
    "reproduce-elgohary": "parabit.papers.elgohary.config:ReproductionConfig",
    "evaluation": "parabit.evaluation.config:EvaluationConfig",
    "sweep-space": "parabit.sweeps.space:SpaceFile",
    "quality-plan": "parabit.quality:QualityPlan",
    "translate-test": "parabit.export.translate_test:TranslateTestConfig",
}
CONFIG_KINDS = sorted({*RECIPES, *OTHER_KINDS})


def config_class(kind: str) -> type:
    if kind in RECIPES:
        return recipe_class(kind).config_class
    module, _, name = OTHER_KINDS[kind].partition(":")
    return getattr(importlib.import_module(module), name)


@click.group(short_help="Config files: JSON Schema, and checking them.")
def config() -> None:
    """Config files: their JSON Schema, and checking them."""


@config.command()
@click.argument("kind", type=click.Choice(CONFIG_KINDS))
def schema(kind: str) -> int:
    """Print the JSON Schema of a kind of config (e.g. for an editor's YAML support)."""
    click.echo(json.dumps(config_class(kind).model_json_schema(), indent=1))
    return 0


@config.command()
@click.argument("paths", nargs=-1, required=True, metavar="FILE...")
@click.option("--kind", type=click.Choice(CONFIG_KINDS), default=None,
              help="what the files are (default: a training config, whose `recipe:` names its kind)")
def check(paths: tuple[str, ...], kind: str | None) -> int:
    """Check config files without running anything; prints one line per file (exit 2 on the first bad one)."""
    from parabit.config import load_config
    from parabit.recipes import load_run_config
    from parabit.sweeps.space import load_space

    for path in paths:
        if kind is None:
            loaded = load_run_config(path)
        elif kind == "sweep-space":
            loaded = load_space(path)
        else:
            loaded = load_config(config_class(kind), path)
        click.echo(f"{path}: ok ({type(loaded).__name__} {getattr(loaded, 'name', '')})")
    return 0
