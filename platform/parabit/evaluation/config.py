"""What the evaluation suite runs; the single place for its defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from parabit.config import Config
from parabit.data.heldout import RETRIEVAL_SETS
from parabit.data.sts import STS_BENCHMARK_YEARS


class EvaluationConfig(Config):
    """STS test years to score (2012–2016), and whether to add SICK relatedness and MSRP classification.

    ``also``: the same suite on variants of the run's model, each logged under its name (``untrained/sts2012/...``):
    ``untrained``, the model the run started from (its seed, vocabulary and unknown-word rule: what training is
    measured against); ``shared_unknown``, the trained model with every unknown word read as the one shared
    unknown-word row (against ``model.unknown_words: own``). Pair training (recipe ``pairs``) reads it.

    Bilingual models (English–Spanish; all off by default): ``bitext_retrieval``, held-out sets on which each
    sentence's translation is retrieved by cosine nearest neighbour, both ways (``tatoeba-es``: the 1,000 Tatoeba
    test pairs of :mod:`parabit.data.heldout`, the XTREME / MTEB protocol; ``newstest2012-es``: out of domain);
    ``sick_translated``: the SICK translation ``parabit translate-sick`` made (``pipeline:sick-es/translate``, or its
    folder), scored as SICK-es (both sentences translated); ``sick_cross``: also with sentence A in English and B
    translated (cross-lingual SICK)."""

    sts_years: tuple[int, ...] = STS_BENCHMARK_YEARS
    """The STS years to score, some of 2012–2016 (each year's test sets, as the seed tables report); empty skips
    STS."""
    sick: bool = True
    """Score SICK relatedness: Pearson and Spearman of cosine similarity on the 4,927 test pairs."""
    msrp: bool = True
    """Score MSRP paraphrase classification: accuracy and F1 of a classifier fitted on frozen embeddings of the
    training pairs."""
    also: tuple[Literal["untrained", "shared_unknown"], ...] = ()
    """Variants of the run's model to run the same suite on, each logged under its name: ``untrained`` (the model
    training started from) and ``shared_unknown`` (unknown words read as the one shared row; recipe ``pairs`` only)."""
    bitext_retrieval: tuple[Literal[RETRIEVAL_SETS], ...] = ()
    """Held-out English–Spanish sets on which each sentence's translation is retrieved by cosine nearest neighbour,
    both ways: ``tatoeba-es`` (1,000 Tatoeba test pairs) and ``newstest2012-es`` (out of domain)."""
    sick_translated: str | None = None
    """The SICK translation that ``parabit translate-sick`` made, scored as ``sick-es`` (both sentences translated):
    ``pipeline:<name>/translate`` or its folder (a relative path is read from the project folder); None skips it."""
    sick_cross: bool = False
    """Also score cross-lingual SICK (``sick-en-es``: sentence A in English, B translated); needs
    ``sick_translated``."""

    @field_validator("sts_years")
    @classmethod
    def _benchmark_years(cls, years: tuple[int, ...]) -> tuple[int, ...]:
        unknown = sorted(set(years) - set(STS_BENCHMARK_YEARS))
        if unknown:
            raise ValueError(f"{unknown} are not STS benchmark years; use some of {list(STS_BENCHMARK_YEARS)}")
        return years

    @model_validator(mode="after")
    def _cross_needs_translation(self):
        if self.sick_cross and not self.sick_translated:
            raise ValueError("sick_cross pairs English sentences with their translations: set sick_translated (e.g. "
                             "pipeline:sick-es/translate, made by `parabit translate-sick`)")
        return self
