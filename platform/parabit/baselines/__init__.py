"""Encoders that need no training: the bars every trained encoder is measured against.

:data:`BASELINES` is the one place their names live (``parabit evaluate --encoder NAME``). Each builds a
:class:`~parabit.embedder.SentenceEmbedder` (``encode(list[str]) -> np.ndarray``), the same class a trained model is.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from parabit.baselines.glove import glove_average
from parabit.config import ConfigError
from parabit.embedder import SentenceEmbedder
from parabit.text.tokenize import Tokenizer

BASELINES: dict[str, Callable[[Tokenizer], SentenceEmbedder]] = {
    "glove-mean": glove_average,
    "glove-sif": partial(glove_average, sif=True),
}


def build_baseline(name: str, tokenizer: Tokenizer | None = None) -> SentenceEmbedder:
    """The baseline encoder ``name``."""
    if name not in BASELINES:
        raise ConfigError(f"unknown baseline encoder {name!r}; choose one of {sorted(BASELINES)}")
    return BASELINES[name](tokenizer or Tokenizer())


__all__ = ["BASELINES", "build_baseline", "glove_average"]
