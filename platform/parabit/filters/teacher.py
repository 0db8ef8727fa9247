"""The teacher's similarity of reference and back-translation: the one filter that scores meaning, not form."""

from __future__ import annotations

import numpy as np

from parabit.filters.base import Filter, PairBatch, within
from parabit.teacher.model import TEACHER_BATCH, require_teacher, teacher_encode


class TeacherSimilarityFilter(Filter):
    """Scores the cosine (−1 to 1) of the teacher's (all-MiniLM-L6-v2) vectors of the reference and its
    back-translation; accepts within ``[minimum, maximum]``. Needs the extra ``parabit[teacher]``; a scoring process
    loads the teacher once.

    A low minimum drops translations that lost the meaning; a maximum near 1 drops near-copies, which teach nothing.
    """

    name = "teacher"

    def __init__(self, batch_size: int = TEACHER_BATCH):
        require_teacher("the filter 'teacher'")
        self.batch_size = batch_size

    def score(self, batch) -> np.ndarray:
        pairs = PairBatch.of(batch)
        vectors = teacher_encode(pairs.reference + pairs.translation, self.batch_size)
        references, translations = vectors[: len(pairs)], vectors[len(pairs):]
        return np.einsum("ij,ij->i", references, translations).astype(np.float64)  # unit vectors: the cosine

    def accept(self, scores, *, minimum: float | None = None, maximum: float | None = None) -> np.ndarray:
        return within(scores, minimum, maximum)
