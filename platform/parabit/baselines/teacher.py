"""The teacher itself, all-MiniLM-L6-v2, as an encoder: the transformer whose quality parabit's static models chase
(the extra ``parabit[teacher]``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parabit.teacher.model import TEACHER_NAME, require_teacher, teacher_encode
from parabit.text.tokenize import Tokenizer


class TeacherBaseline:
    """``encode(sentences)``: the teacher's unit-length vectors (its own WordPiece tokenizer; parabit's
    ``tokenizer`` is kept only to describe the run, as for the other baselines)."""

    spec = {"encoder": TEACHER_NAME, "library": "sentence-transformers"}

    def __init__(self, tokenizer: Tokenizer | None = None):
        require_teacher(f"the encoder {TEACHER_NAME.lower()!r}")
        self.tokenizer = tokenizer or Tokenizer()

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        return teacher_encode(list(sentences), batch_size=64)
