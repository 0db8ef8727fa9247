"""Bitext retrieval (the XTREME / MTEB Tatoeba protocol): for each sentence of one language, its nearest neighbour
by cosine among the other language's sentences of the set must be its translation; the score is the share of
sentences for which it is (accuracy), in both directions. Also the nearest-neighbour search and LASER's ratio margin
(Artetxe & Schwenk 2019) that bitext mining and the bilingual filter score pairs with."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from parabit.data.bitext import BitextPair
from parabit.data.heldout import HeldoutSets
from parabit.evaluation.metrics import Encode, unit_rows
from parabit.evaluation.report import Score


def unit_tensor(vectors: np.ndarray) -> torch.Tensor:
    """``vectors`` as a float32 tensor of unit rows (a zero row stays zero): :func:`unit_rows`, whose result is a
    new array (so a read-only input, an Arrow-backed column, is fine)."""
    return torch.from_numpy(unit_rows(np.asarray(vectors, dtype=np.float32)))


def top_k(queries: np.ndarray, candidates: np.ndarray, k: int, batch: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``queries``, the cosines and indices of its ``k`` nearest rows of ``candidates`` (fewer when
    there are fewer), best first; computed ``batch`` queries at a time, so memory is ``batch × len(candidates)``."""
    q, c = unit_tensor(queries), unit_tensor(candidates)
    k = min(k, len(c))
    values, indices = [], []
    for start in range(0, len(q), batch):
        found = torch.topk(q[start:start + batch] @ c.T, k, dim=1)
        values.append(found.values)
        indices.append(found.indices)
    if not values:
        return np.zeros((0, k), dtype=np.float32), np.zeros((0, k), dtype=np.int64)
    return torch.cat(values).numpy(), torch.cat(indices).numpy()


def nearest_neighbours(queries: np.ndarray, candidates: np.ndarray, batch: int = 4096) -> np.ndarray:
    """For each row of ``queries``, the index of the row of ``candidates`` with the highest cosine."""
    return top_k(queries, candidates, 1, batch)[1][:, 0]


def ratio_margin(cosines: np.ndarray, x_neighbourhood: np.ndarray, y_neighbourhood: np.ndarray) -> np.ndarray:
    """LASER's ratio margin of pairs (x, y): ``cos(x, y) / ((m_x + m_y) / 2)``, ``m_x`` the mean cosine of x with its
    k nearest y-side candidates and ``m_y`` that of y with its k nearest x-side ones. A pair that stands out from both
    neighbourhoods scores above 1, whatever the scale of cosines in its region of the space."""
    return np.asarray(cosines) / np.maximum((np.asarray(x_neighbourhood) + np.asarray(y_neighbourhood)) / 2, 1e-6)


def retrieval_accuracy(english: np.ndarray, foreign: np.ndarray) -> tuple[float, float]:
    """(foreign→English, English→foreign) accuracy of nearest-neighbour retrieval, row ``i`` of each side being
    the translation of row ``i`` of the other."""
    gold = np.arange(len(english))
    return (float(np.mean(nearest_neighbours(foreign, english) == gold)),
            float(np.mean(nearest_neighbours(english, foreign) == gold)))


class BitextRetrievalEvaluator:
    """Accuracy of finding each sentence's translation among the set's sentences of the other language, both ways
    (subsets ``<lang>-en`` and ``en-<lang>``, and their ``mean``), as benchmark ``name``.

    ``name`` is one of the held-out sets (:meth:`parabit.data.heldout.HeldoutSets.pairs`: ``tatoeba-es``, the
    1,000 Tatoeba test pairs; ``tatoeba-es-dev``, the 1,000 dev pairs; ``newstest2012-es``), or any name with
    ``pairs`` given. Each side is encoded with one ``encode`` call: a bilingual model tells the languages apart."""

    def __init__(self, name: str, pairs: Sequence[BitextPair] | None = None):
        self.name = name
        self.pairs = list(HeldoutSets.load().pairs(name) if pairs is None else pairs)
        self.lang = self.pairs[0].lang if self.pairs else "xx"

    def __call__(self, encode: Encode) -> list[Score]:
        english = np.asarray(encode([pair.en for pair in self.pairs]))
        foreign = np.asarray(encode([pair.foreign for pair in self.pairs]))
        to_english, to_foreign = retrieval_accuracy(english, foreign)
        n = len(self.pairs)
        return [Score(self.name, f"{self.lang}-en", "accuracy", to_english, n),
                Score(self.name, f"en-{self.lang}", "accuracy", to_foreign, n),
                Score(self.name, "mean", "accuracy", (to_english + to_foreign) / 2, n)]
