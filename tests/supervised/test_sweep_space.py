"""Siamese training is sweepable: a space of kind ``siamese`` names SiameseConfig fields and builds its trials."""

from __future__ import annotations

import pytest

from parabit.config import ConfigError
from parabit.paths import PROJECT_ROOT
from parabit.supervised.config import SiameseConfig
from parabit.tuning.space import load_space
from parabit.tuning.sweep import routines


def test_the_shipped_siamese_space_is_table_ii_as_a_grid():
    space = load_space(PROJECT_ROOT / "tuning" / "spaces" / "siamese_sick_en.yaml")
    points = space.trial_points()
    assert space.kind == "siamese" and len(points) == 4 * 3
    config = space.trial_config(points[0], name="t")
    assert isinstance(config, SiameseConfig)
    assert (config.model.variant, config.data.max_length) == (points[0]["model.variant"], points[0]["data.max_length"])
    assert routines(config).trainer.__name__ == "build_siamese_trainer"


def test_a_siamese_space_checks_fields_against_the_siamese_config(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text(f"name: s\nkind: siamese\nbase_config: {PROJECT_ROOT}/jobs/configs/siamese/sick_en.yaml\n"
                    "parameters: {{data.max_lenght: [15]}}\n".replace("{{", "{").replace("}}", "}"))
    with pytest.raises(ConfigError, match="SiameseDataConfig has no field 'max_lenght'"):
        load_space(path)
    path.write_text("name: s\nkind: supervised\nbase_config: x.yaml\nparameters: {}\n")
    with pytest.raises(ConfigError, match=r"kind is 'supervised'; choose one of \['train', 'siamese'\]"):
        load_space(path)
