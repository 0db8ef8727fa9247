"""The recipe registry: each name leads to its class, and naming one recipe imports that one only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from parabit.config import ConfigError
from parabit.recipes import RECIPES, recipe_class
from parabit.training import Recipe


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_each_name_leads_to_the_recipe_of_that_name(name):
    recipe = recipe_class(name)
    assert issubclass(recipe, Recipe) and recipe.name == name and recipe.path() == RECIPES[name]


def test_an_unknown_name_is_a_config_error_naming_the_choices():
    with pytest.raises(ConfigError, match=r"unknown recipe 'pair'; choose one of \['bildrl', 'bilingual', 'pairs', "
                                          r"'siamese', 'transformer'\]"):
        recipe_class("pair")


def test_naming_one_recipe_imports_neither_the_others_nor_their_dependencies():
    """A Ray Train worker of a pairs run imports the pairs recipe, not BilDRL's back-translation and MLflow chain."""
    probe = ("import sys; from parabit.recipes import recipe_class; recipe_class('pairs'); "
             "print(sorted(m for m in ('parabit.recipes.bildrl.recipe', 'parabit.recipes.siamese.recipe', "
             "'parabit.backtranslation', 'mlflow') if m in sys.modules))")
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr[-3000:]
    assert imported.stdout.strip() == "[]"
