"""The registry of training recipes: the one place their names live.

A config file names its recipe (``recipe: siamese``; absent means ``pairs``), and :func:`recipe_for` builds the
recipe that trains it. A new kind of training is one :class:`~parabit.training.recipe.Recipe` subclass, registered
here.

Each recipe is imported when first named: a process that trains one recipe (a CLI run, a Ray Train worker) does not
import the others and their dependencies (BilDRL's dictionary builder pulls in the back-translation pipeline and
MLflow's full client, ~1 s of CPU).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parabit.config import ConfigError, apply_override, check_finite, from_dict, read_yaml
from parabit.training import TrainingConfig
from parabit.training import Recipe
from parabit.training import recipe_at

# Each recipe's name, and where the class that trains it is (:func:`~parabit.training.recipe.recipe_at`).
RECIPES: dict[str, str] = {"pairs": "parabit.recipes.pairs.recipe:PairsRecipe",
                           "siamese": "parabit.recipes.siamese.recipe:SiameseRecipe",
                           "bildrl": "parabit.recipes.bildrl.recipe:BilDRLRecipe",
                           "bilingual": "parabit.recipes.bilingual.recipe:BilingualRecipe",
                           "transformer": "parabit.recipes.transformer.recipe:TransformerRecipe"}
DEFAULT_RECIPE = "pairs"


def recipe_class(name: str) -> type[Recipe]:
    if name not in RECIPES:
        raise ConfigError(f"unknown recipe {name!r}; choose one of {sorted(RECIPES)}")
    return recipe_at(RECIPES[name])


def config_class(data: Mapping[str, Any], where: str = "config") -> type[TrainingConfig]:
    """The config class of a run given as plain values, by its ``recipe`` key."""
    name = data.get("recipe", DEFAULT_RECIPE)
    if not isinstance(name, str):
        raise ConfigError(f"{where}: recipe must be a name, one of {sorted(RECIPES)} (got {name!r})")
    try:
        return recipe_class(name).config_class
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from None


def load_run_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> TrainingConfig:
    """A training config file (any recipe), with ``--set`` overrides applied; the recipe comes from the file."""
    data = read_yaml(path)
    for dotted, value in (overrides or {}).items():
        apply_override(data, dotted, value)
    check_finite(data, str(path))
    return from_dict(config_class(data, str(path)), data, where=str(path))


def recipe_for(config: TrainingConfig) -> Recipe:
    """The recipe instance that trains ``config``."""
    return recipe_class(config.recipe)(config)


__all__ = ["DEFAULT_RECIPE", "RECIPES", "config_class", "load_run_config", "recipe_class", "recipe_for"]
