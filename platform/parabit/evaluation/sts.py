"""SemEval STS 2012–2016: Pearson and Spearman of cosine similarity per subset, with per-year averages."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parabit.data.sts import STS_BENCHMARK_YEARS, STSSubset, read_sts_year
from parabit.evaluation.metrics import Encode, encode_pairs, pearson, row_cosines, spearman
from parabit.evaluation.report import Score


def score_similarity_subset(encode: Encode, benchmark: str, subset: str, pairs) -> list[Score]:
    """Pearson and Spearman between cosine(encode(a), encode(b)) and the gold scores of ``pairs``."""
    left, right = encode_pairs(encode, [p.sentence_a for p in pairs], [p.sentence_b for p in pairs])
    predicted = row_cosines(left, right)
    gold = [p.score if hasattr(p, "score") else p.relatedness for p in pairs]
    return [
        Score(benchmark, subset, "pearson", pearson(predicted, gold), len(pairs)),
        Score(benchmark, subset, "spearman", spearman(predicted, gold), len(pairs)),
    ]


def year_averages(benchmark: str, subset_scores: list[Score]) -> list[Score]:
    """Unweighted ("mean", as the seed tables) and pair-weighted ("wmean") averages per metric."""
    averages = []
    for metric in dict.fromkeys(s.metric for s in subset_scores):
        rows = [s for s in subset_scores if s.metric == metric]
        sizes = np.array([s.n for s in rows], dtype=np.float64)
        values = np.array([s.value for s in rows])
        total = int(sizes.sum())
        averages.append(Score(benchmark, "mean", metric, float(values.mean()), total))
        averages.append(Score(benchmark, "wmean", metric, float((values * sizes).sum() / sizes.sum()), total))
    return averages


class STSEvaluator:
    """Scores an encoder on the STS releases of the given years (2012 = the 2012 test sets, as the seeds report).

    The data is read once, when the evaluator is created, so it can be called after every epoch cheaply.
    ``subsets`` restricts each release to the named subsets (e.g. ``("SMTeuroparl",)``).
    """

    def __init__(self, years: Sequence[int] = STS_BENCHMARK_YEARS, split: str = "test",
                 subsets: Sequence[str] | None = None):
        self.years = tuple(years)
        self.split = split
        self.releases: dict[int, list[STSSubset]] = {
            year: [s for s in read_sts_year(year, split) if subsets is None or s.name in subsets] for year in self.years
        }

    def __call__(self, encode: Encode) -> list[Score]:
        scores: list[Score] = []
        for year, subsets in self.releases.items():
            benchmark = f"sts{year}" if self.split == "test" else f"sts{year}-{self.split}"
            per_subset = [s for subset in subsets for s in score_similarity_subset(encode, benchmark, subset.name, subset.pairs)]
            scores.extend(per_subset)
            scores.extend(year_averages(benchmark, per_subset))
        return scores
