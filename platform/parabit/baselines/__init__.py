"""Encoders that need no training: the bars every trained encoder is measured against.

:data:`BASELINES` is the one place their names live (``parabit evaluate --encoder NAME``).
"""

from __future__ import annotations

from collections.abc import Callable

from parabit.baselines.mean_word_vectors import MeanWordVectors
from parabit.config import ConfigError
from parabit.text.tokenize import Tokenizer

BASELINES: dict[str, Callable[[Tokenizer], object]] = {
    "glove-mean": MeanWordVectors.glove,
}


def build_baseline(name: str, tokenizer: Tokenizer | None = None):
    """The baseline encoder ``name`` (``encode(list[str]) -> np.ndarray``, ``describe() -> dict``)."""
    if name not in BASELINES:
        raise ConfigError(f"unknown baseline encoder {name!r}; choose one of {sorted(BASELINES)}")
    return BASELINES[name](tokenizer or Tokenizer())


__all__ = ["BASELINES", "MeanWordVectors", "build_baseline"]
