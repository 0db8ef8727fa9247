"""SICK relatedness without training: correlation of cosine similarity with the gold relatedness."""

from __future__ import annotations

from parabit.data.sick import read_sick
from parabit.evaluation.metrics import Encode
from parabit.evaluation.report import Score
from parabit.evaluation.sts import score_similarity_subset


class SICKRelatednessEvaluator:
    """Pearson and Spearman of cosine similarity on a SICK split (default: the 4927 test pairs)."""

    def __init__(self, split: str = "test"):
        self.split = split
        self.pairs = read_sick(split)

    def __call__(self, encode: Encode) -> list[Score]:
        return score_similarity_subset(encode, "sick", self.split, self.pairs)
