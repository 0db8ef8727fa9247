"""What the evaluation suite runs; the single place for its defaults."""

from __future__ import annotations

from pydantic import field_validator

from parabit.config import Config
from parabit.data.sts import STS_BENCHMARK_YEARS


class EvaluationConfig(Config):
    """STS test years to score (2012–2016), and whether to add SICK relatedness and MSRP classification."""

    sts_years: tuple[int, ...] = STS_BENCHMARK_YEARS
    sick: bool = True
    msrp: bool = True

    @field_validator("sts_years")
    @classmethod
    def _benchmark_years(cls, years: tuple[int, ...]) -> tuple[int, ...]:
        unknown = sorted(set(years) - set(STS_BENCHMARK_YEARS))
        if unknown:
            raise ValueError(f"{unknown} are not STS benchmark years; use some of {list(STS_BENCHMARK_YEARS)}")
        return years
