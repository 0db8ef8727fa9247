"""SICK relatedness without training: correlation of cosine similarity with the gold relatedness."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from parabit.data.sick import read_sick, read_translated_sick
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


class TranslatedSICKEvaluator:
    """SICK relatedness on the machine translation ``parabit translate-sick`` made (its stage folder ``path``): both
    sentences translated (benchmark ``sick-<lang>``, e.g. SICK-es), or with ``cross`` sentence A in English and B
    translated (``sick-en-<lang>``: cross-lingual similarity). Pearson and Spearman of cosine similarity against the
    English pair's gold score, over the pairs the engine translated."""

    def __init__(self, path: str | Path, *, cross: bool = False, lang: str = "es", split: str = "test"):
        self.split = split
        self.benchmark = f"sick-en-{lang}" if cross else f"sick-{lang}"
        self.pairs = [replace(english, sentence_b=translated.sentence_b) if cross else translated
                      for english, translated in read_translated_sick(path, split)]

    def __call__(self, encode: Encode) -> list[Score]:
        return score_similarity_subset(encode, self.benchmark, self.split, self.pairs)
