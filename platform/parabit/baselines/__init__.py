"""Encoders that need no training: the bars every trained encoder is measured against.

:data:`BASELINES` is the one place their names live (``parabit evaluate --encoder NAME``). The GloVe ones build a
:class:`~parabit.embedder.SentenceEmbedder` (``encode(list[str]) -> np.ndarray``), the same class a trained model is;
``all-minilm-l6-v2`` is the teacher transformer itself (the extra ``parabit[teacher]``), and
``translate-test-minilm`` reads Spanish as Apertium's English translation with it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from parabit.baselines.glove import glove_average
from parabit.baselines.teacher import TeacherBaseline
from parabit.baselines.translate_test import translate_test_minilm
from parabit.config import ConfigError
from parabit.text.tokenize import Tokenizer

BASELINES: dict[str, Callable[[Tokenizer], Any]] = {
    "glove-mean": glove_average,
    "glove-sif": partial(glove_average, sif=True),
    "all-minilm-l6-v2": TeacherBaseline,
    "translate-test-minilm": translate_test_minilm,
}


def build_baseline(name: str, tokenizer: Tokenizer | None = None) -> Any:
    """The baseline encoder ``name``: an object with ``encode(list[str]) -> np.ndarray``."""
    if name not in BASELINES:
        raise ConfigError(f"unknown baseline encoder {name!r}; choose one of {sorted(BASELINES)}")
    return BASELINES[name](tokenizer or Tokenizer())


__all__ = ["BASELINES", "TeacherBaseline", "build_baseline", "glove_average", "translate_test_minilm"]
