"""The full evaluation suite of the seed papers: STS 2012–2016, SICK relatedness, MSRP; for bilingual models also
bitext retrieval and SICK translated (and cross-lingual)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from parabit.evaluation.bitext import BitextRetrievalEvaluator
from parabit.evaluation.config import EvaluationConfig
from parabit.evaluation.metrics import Encode
from parabit.evaluation.msrp import MSRPClassifierEvaluator
from parabit.evaluation.report import EvaluationReport, Score
from parabit.evaluation.sick import SICKRelatednessEvaluator, TranslatedSICKEvaluator
from parabit.paths import pipeline_stage
from parabit.evaluation.sts import STSEvaluator

Evaluator = Callable[[Encode], list[Score]]


class EvaluationSuite:
    """Runs several evaluators over one encoder and gathers their scores into an :class:`EvaluationReport`."""

    def __init__(self, evaluators: Sequence[Evaluator]):
        self.evaluators = list(evaluators)

    @classmethod
    def standard(cls, config: EvaluationConfig | None = None) -> "EvaluationSuite":
        """STS test sets, SICK test relatedness and MSRP, as in the seed tables, and the bilingual sets the config
        asks for (see :class:`EvaluationConfig`)."""
        config = config or EvaluationConfig()
        evaluators: list[Evaluator] = []
        if config.sts_years:
            evaluators.append(STSEvaluator(config.sts_years))
        if config.sick:
            evaluators.append(SICKRelatednessEvaluator())
        if config.msrp:
            evaluators.append(MSRPClassifierEvaluator())
        evaluators += [BitextRetrievalEvaluator(name) for name in config.bitext_retrieval]
        if config.sick_translated:
            path = pipeline_stage(config.sick_translated)
            evaluators.append(TranslatedSICKEvaluator(path))
            if config.sick_cross:
                evaluators.append(TranslatedSICKEvaluator(path, cross=True))
        return cls(evaluators)

    def __call__(self, encode: Encode) -> EvaluationReport:
        return EvaluationReport([score for evaluator in self.evaluators for score in evaluator(encode)])
