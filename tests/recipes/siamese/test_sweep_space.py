"""Siamese training is sweepable: a space over a Siamese base config names SiameseConfig fields and builds its
trials, which the same recipe registry trains."""

from __future__ import annotations

import pytest

from parabit.config import ConfigError
from parabit.paths import PROJECT_ROOT
from parabit.recipes import recipe_for
from parabit.recipes.siamese.config import SiameseConfig
from parabit.recipes.siamese.recipe import SiameseRecipe
from parabit.sweeps.space import load_space


def test_the_shipped_siamese_space_is_table_ii_as_a_grid():
    space = load_space(PROJECT_ROOT / "tuning" / "spaces" / "siamese_sick_en.yaml")
    points = space.trial_points()
    assert space.config_class() is SiameseConfig and len(points) == 4 * 3
    config = space.trial_config(points[0], name="t")
    assert isinstance(config, SiameseConfig)
    assert (config.model.variant, config.data.max_length) == (points[0]["model.variant"], points[0]["data.max_length"])
    assert isinstance(recipe_for(config), SiameseRecipe)


def test_a_siamese_space_checks_fields_against_the_siamese_config(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text(f"name: s\nbase_config: {PROJECT_ROOT}/jobs/configs/siamese/sick_en.yaml\n"
                    "parameters: {data.max_lenght: [15]}\n")
    with pytest.raises(ConfigError, match="SiameseDataConfig has no field 'max_lenght'"):
        load_space(path)
