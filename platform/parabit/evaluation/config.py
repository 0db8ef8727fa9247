"""What the evaluation suite runs; the single place for its defaults."""

from __future__ import annotations

from dataclasses import dataclass

from parabit.data.sts import STS_BENCHMARK_YEARS


@dataclass
class EvaluationConfig:
    """STS test years to score (2012–2016), and whether to add SICK relatedness and MSRP classification."""

    sts_years: tuple[int, ...] = STS_BENCHMARK_YEARS
    sick: bool = True
    msrp: bool = True

    def __post_init__(self):
        unknown = sorted(set(self.sts_years) - set(STS_BENCHMARK_YEARS))
        if unknown:
            raise ValueError(f"sts_years {unknown} are not STS benchmark years; use some of {STS_BENCHMARK_YEARS}")
