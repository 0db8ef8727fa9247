"""The config loader: YAML + --set overrides validated by pydantic, every mistake one line naming file and field."""

import math

import pytest
from pydantic import Field, PositiveFloat

from parabit.config import Config, ConfigError, field_paths, load_config, parse_override, parse_overrides


class Optim(Config):
    lr: PositiveFloat = 0.1
    name: str = "adam"


class Example(Config):
    epochs: int = 1
    years: tuple[int, ...] = (2012,)
    optim: Optim = Field(default_factory=Optim)
    options: dict = Field(default_factory=dict)


def write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_nested_yaml_with_tuples(tmp_path):
    config = load_config(Example, write(tmp_path, "epochs: 3\nyears: [2015, 2016]\noptim:\n  lr: 0.5\n"))
    assert config == Example(epochs=3, years=(2015, 2016), optim=Optim(lr=0.5))


def test_unknown_key_names_file_section_key_and_valid_keys(tmp_path):
    path = write(tmp_path, "optim:\n  learning_rate: 0.5\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: unknown key 'learning_rate' in optim; valid keys: \['lr', 'name'\]"):
        load_config(Example, path)


def test_a_bad_value_names_its_field_and_value(tmp_path):
    with pytest.raises(ConfigError, match=r"c\.yaml: optim\.lr: Input should be greater than 0 \(got -1\)"):
        load_config(Example, write(tmp_path, "optim: {lr: -1}\n"))
    with pytest.raises(ConfigError, match=r"epochs: Input should be a valid integer.*\(got 'many'\)"):
        load_config(Example, write(tmp_path, "epochs: many\n"))


@pytest.mark.parametrize("value", ["nan", ".nan", "inf", "-.inf", "1e400"])
def test_non_finite_numbers_are_refused_anywhere(tmp_path, value):
    path = write(tmp_path, "epochs: 1\n")
    with pytest.raises(ConfigError) as raised:
        load_config(Example, path, dict([parse_override(f"optim.lr={value}")]))
    assert "optim.lr" in str(raised.value) and "finite" in str(raised.value)
    with pytest.raises(ConfigError, match=r"options\.scale: .* is not a finite number"):
        load_config(Example, path, {"options.scale": math.inf})


def test_overrides_apply_on_top(tmp_path):
    config = load_config(Example, write(tmp_path, "epochs: 3\n"), parse_overrides(["optim.lr=0.01", "epochs=5"]))
    assert (config.epochs, config.optim.lr) == (5, 0.01)


@pytest.mark.parametrize("text, message", [
    ("optim.lr", "must look like key.path=value"),
    ("=3", "the key must be dotted field names"),
    ("optim..lr=3", "the key must be dotted field names"),
    ("optim.lr=", "no value after '='"),
    ("optim.lr=[1", "the value is not valid YAML"),
])
def test_malformed_set_is_a_config_error(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_override(text)


def test_a_set_through_a_value_is_a_config_error(tmp_path):
    path = write(tmp_path, "epochs: 3\n")
    with pytest.raises(ConfigError, match=r"--set epochs.sub: epochs is a value \(3\), not a section"):
        load_config(Example, path, {"epochs.sub": 1})


def test_missing_file_empty_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(Example, tmp_path / "absent.yaml")
    assert load_config(Example, write(tmp_path, "")) == Example()
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(Example, write(tmp_path, "epochs: [1\n"))
    with pytest.raises(ConfigError, match="the top level must be a mapping"):
        load_config(Example, write(tmp_path, "- 1\n- 2\n"))
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(Example, tmp_path)


def test_many_problems_stay_one_line(tmp_path):
    path = write(tmp_path, "a: 1\nb: 2\nepochs: x\noptim: {lr: -1, name: 3}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(Example, path)
    message = str(raised.value)
    assert "\n" not in message and "unknown keys ['a', 'b']" in message and "(and 1 more)" in message


def test_field_paths_and_schema():
    assert {"optim", "optim.lr", "optim.name", "epochs"} <= set(field_paths(Example))
    schema = Example.model_json_schema()
    assert schema["properties"]["optim"]["$ref"].endswith("Optim") and schema["additionalProperties"] is False
