from dataclasses import dataclass, field

import pytest

from parabit.config import ConfigError, load_config, parse_override


@dataclass
class Optim:
    lr: float = 0.1
    name: str = "adam"

    def __post_init__(self):
        if self.lr <= 0:
            raise ValueError(f"optim.lr must be positive, got {self.lr}; try 0.001")


@dataclass
class Example:
    epochs: int = 1
    years: tuple[int, ...] = (2012,)
    optim: Optim = field(default_factory=Optim)


def test_nested_yaml_with_tuples(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("epochs: 3\nyears: [2015, 2016]\noptim:\n  lr: 0.5\n")
    config = load_config(Example, path)
    assert config == Example(epochs=3, years=(2015, 2016), optim=Optim(lr=0.5))


def test_unknown_key_names_file_key_and_valid_keys(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("optim:\n  learning_rate: 0.5\n")
    with pytest.raises(ConfigError, match=r"c\.yaml\.optim: unknown key\(s\) \['learning_rate'\] for Optim; valid keys: \['lr', 'name'\]"):
        load_config(Example, path)


def test_validation_message_is_kept_with_its_location(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("optim: {lr: -1}\n")
    with pytest.raises(ConfigError, match="optim.lr must be positive, got -1; try 0.001"):
        load_config(Example, path)


def test_overrides_apply_on_top(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("epochs: 3\n")
    config = load_config(Example, path, dict([parse_override("optim.lr=0.01"), parse_override("epochs=5")]))
    assert (config.epochs, config.optim.lr) == (5, 0.01)


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(Example, tmp_path / "absent.yaml")
    (tmp_path / "bad.yaml").write_text("epochs: [1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(Example, tmp_path / "bad.yaml")
