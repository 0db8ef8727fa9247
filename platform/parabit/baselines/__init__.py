"""Encoders that need no training: the bars every trained encoder is measured against.

:data:`BASELINES` is the one place their names live (``parabit evaluate --encoder NAME``). The GloVe ones build a
:class:`~parabit.embedder.SentenceEmbedder` (``encode(list[str]) -> np.ndarray``), the same class a trained model is;
``all-minilm-l6-v2`` is the teacher transformer itself (the extra ``parabit[teacher]``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from parabit.baselines.glove import glove_average
from parabit.baselines.teacher import TeacherBaseline
from parabit.config import ConfigError
from parabit.embedder import SentenceEmbedder
from parabit.text.tokenize import Tokenizer

BASELINES: dict[str, Callable[[Tokenizer], SentenceEmbedder | TeacherBaseline]] = {
    "glove-mean": glove_average,
    "glove-sif": partial(glove_average, sif=True),
    "all-minilm-l6-v2": TeacherBaseline,
}


def build_baseline(name: str, tokenizer: Tokenizer | None = None) -> SentenceEmbedder | TeacherBaseline:
    """The baseline encoder ``name``."""
    if name not in BASELINES:
        raise ConfigError(f"unknown baseline encoder {name!r}; choose one of {sorted(BASELINES)}")
    return BASELINES[name](tokenizer or Tokenizer())


__all__ = ["BASELINES", "TeacherBaseline", "build_baseline", "glove_average"]
