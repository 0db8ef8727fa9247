"""SICK relatedness without training: correlation of cosine similarity with the gold relatedness."""

from __future__ import annotations

from parabit.data.sick import read_sick
from parabit.evaluation.metrics import Encode
from parabit.evaluation.report import Score
from parabit.evaluation.sts import score_similarity_subset


class SICKRelatednessEvaluator:
    """Pearson and Spearman of cosine similarity on SICK pairs: a split (default: the 4927 test pairs), or several
    pooled (``"train+trial"``: the 5000 pairs model selection may look at)."""

    def __init__(self, split: str = "test"):
        self.split = split
        self.pairs = [pair for part in split.split("+") for pair in read_sick(part)]

    def __call__(self, encode: Encode) -> list[Score]:
        return score_similarity_subset(encode, "sick", self.split.replace("+", "-"), self.pairs)
