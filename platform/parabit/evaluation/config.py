"""What the evaluation suite runs; the single place for its defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from parabit.config import Config
from parabit.data.sts import STS_BENCHMARK_YEARS


class EvaluationConfig(Config):
    """STS test years to score (2012–2016), and whether to add SICK relatedness and MSRP classification.

    ``also``: the same suite on variants of the run's model, each logged under its name (``untrained/sts2012/...``):
    ``untrained``, the model the run started from (its seed, vocabulary and unknown-word rule: what training is
    measured against); ``shared_unknown``, the trained model with every unknown word read as the one shared
    unknown-word row (against ``model.unknown_words: own``). Pair training (recipe ``pairs``) reads it."""

    sts_years: tuple[int, ...] = STS_BENCHMARK_YEARS
    sick: bool = True
    msrp: bool = True
    also: tuple[Literal["untrained", "shared_unknown"], ...] = ()

    @field_validator("sts_years")
    @classmethod
    def _benchmark_years(cls, years: tuple[int, ...]) -> tuple[int, ...]:
        unknown = sorted(set(years) - set(STS_BENCHMARK_YEARS))
        if unknown:
            raise ValueError(f"{unknown} are not STS benchmark years; use some of {list(STS_BENCHMARK_YEARS)}")
        return years
