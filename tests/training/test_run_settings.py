"""A run's name stands for what it trains: re-running a name with another training config is refused, not resumed."""

from __future__ import annotations

import json

import pytest

from parabit.config import ConfigError
from parabit.training import ScalingSettings
from parabit.training.checkpointing import _record_path, check_same_settings, record_settings

from ..conftest import pairs_config


def test_a_name_resumes_only_with_the_settings_it_started_with(tmp_path):
    started = pairs_config("renamed-not", tmp_path / "pairs", tmp_path, objective__margin=0.4)
    record_settings(started)
    check_same_settings(started)  # the same command again: resumes

    # Where it runs and is tracked may change (more workers after a resume, another experiment), and how long...
    moved = pairs_config("renamed-not", tmp_path / "pairs", tmp_path, objective__margin=0.4,
                         scaling=ScalingSettings(num_workers=2, cpus_per_worker=0.5))
    moved.tracking.experiment = "elsewhere"
    moved.optim.epochs = 6  # a longer run continues from the last checkpoint
    check_same_settings(moved)

    # ...what it trains may not: the stored checkpoints were trained with margin 0.4.
    changed = pairs_config("renamed-not", tmp_path / "pairs", tmp_path, objective__margin=0.6, optim__lr=0.01)
    with pytest.raises(ConfigError, match=r"run 'renamed-not' was started with other settings \(objective\.margin: "
                                          r"0\.4 -> 0\.6; optim\.lr: 0\.005 -> 0\.01\).*--set name="):
        check_same_settings(changed)
    # Another name is a new run.
    check_same_settings(pairs_config("renamed-yes", tmp_path / "pairs", tmp_path, objective__margin=0.6))


def test_a_setting_added_since_the_run_started_is_no_change_while_it_keeps_its_default(tmp_path):
    """A run interrupted before parabit gained a setting resumes after the upgrade; the record holds no value for it."""
    started = pairs_config("upgraded", tmp_path / "pairs", tmp_path)
    record_settings(started)
    record = _record_path(started)
    content = json.loads(record.read_text())
    del content["settings"]["data"]["glove_words"]  # as if data.glove_words (default 0) came after the run began
    record.write_text(json.dumps(content))
    check_same_settings(started)
    with pytest.raises(ConfigError, match=r"data\.glove_words: None -> 100"):
        check_same_settings(pairs_config("upgraded", tmp_path / "pairs", tmp_path, data__glove_words=100))
