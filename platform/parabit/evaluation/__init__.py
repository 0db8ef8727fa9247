"""Evaluators: each takes an ``encode(list[str]) -> np.ndarray`` callable and returns tidy score rows."""

from parabit.evaluation.msrp import MSRPClassifierEvaluator
from parabit.evaluation.report import EvaluationReport, Score
from parabit.evaluation.sick import SICKRelatednessEvaluator
from parabit.evaluation.sts import STSEvaluator
from parabit.evaluation.suite import EvaluationSuite

__all__ = [
    "EvaluationReport",
    "EvaluationSuite",
    "MSRPClassifierEvaluator",
    "SICKRelatednessEvaluator",
    "STSEvaluator",
    "Score",
]
