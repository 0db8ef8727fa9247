"""Development sets: what model selection (best epoch, sweeps, the champion) is allowed to look at.

A dev set is one or more evaluators; its ``dev_score`` is the mean of their headline numbers (an STS release's mean
Pearson r over its subsets, SICK's Pearson r). The seed papers tuned on STS 2016 (Wieting et al.) or the STS 2012
SMT-europarl training file (Elgohary & Carpuat); parabit's own quality work selects on ``sts2012-train+sick-train-trial``,
which no reported table uses (STS 2012-2016 test and SICK test are only ever reported). Bilingual models select on
``tatoeba-es-dev``: retrieval accuracy on the 1,000 Tatoeba dev pairs of :mod:`parabit.data.heldout`; or, where the
reported number is SICK-es, on the SICK trial pairs as ``parabit translate-sick`` translated them (``sick-es-trial``,
``sick-en-es-trial``: SICK trial is in no reported table, its test pairs are).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from parabit.evaluation.bitext import BitextRetrievalEvaluator
from parabit.evaluation.metrics import Encode
from parabit.evaluation.report import Score
from parabit.evaluation.sick import SICKRelatednessEvaluator, TranslatedSICKEvaluator
from parabit.evaluation.sts import STSEvaluator
from parabit.paths import pipeline_stage

TRANSLATED_SICK = "pipeline:sick-es/translate"
"""Where ``parabit translate-sick`` leaves SICK-es by default: what the ``sick-es`` dev parts read."""

PARTS: dict[str, Callable[[], Callable[[Encode], list[Score]]]] = {
    "sts2016": lambda: STSEvaluator((2016,)),
    "sts2012-train": lambda: STSEvaluator((2012,), split="train"),
    "sts2012-train-smteuroparl": lambda: STSEvaluator((2012,), split="train", subsets=("SMTeuroparl",)),
    "sick-trial": lambda: SICKRelatednessEvaluator("trial"),
    "sick-train": lambda: SICKRelatednessEvaluator("train"),
    "sick-train-trial": lambda: SICKRelatednessEvaluator("train+trial"),
    "tatoeba-es-dev": lambda: BitextRetrievalEvaluator("tatoeba-es-dev"),
    "sick-es-trial": lambda: TranslatedSICKEvaluator(pipeline_stage(TRANSLATED_SICK), split="trial"),
    "sick-en-es-trial": lambda: TranslatedSICKEvaluator(pipeline_stage(TRANSLATED_SICK), split="trial", cross=True),
}
PROMOTION_DEV_SET = "sts2012-train+sick-train-trial"
"""What ``parabit promote`` compares registered versions by, and what parabit's own recipes select on: the STS 2012
training file and SICK's training and trial pairs (5,000), no test set."""
BILINGUAL_SICK_DEV_SET = "sick-trial+sick-es-trial+sick-en-es-trial"
"""SICK trial in English, in Spanish and across the two (500 pairs each): what a bilingual transformer selects on when
its reported numbers are SICK-es and SICK en–es, its English kept in view."""
DEV_SETS = (*PARTS, "sts2012-train+sick-trial", PROMOTION_DEV_SET, BILINGUAL_SICK_DEV_SET)
"""Names a config's ``dev`` may take: one part, or parts joined by ``+``."""


def headline(scores: list[Score]) -> float:
    """The number a part contributes: the mean Pearson r of an STS release, SICK's Pearson r (English, translated or
    across), or a retrieval set's accuracy averaged over both directions."""
    return next(s.value for s in scores if (s.metric == "pearson"
                                            and (s.subset == "mean" or s.benchmark.startswith("sick")))
                or (s.metric == "accuracy" and s.subset == "mean"))


class DevSet:
    """``dev(encode) -> (dev_score, details)``; the data is read once, when the dev set is made."""

    def __init__(self, name: str):
        parts = name.split("+")
        unknown = [part for part in parts if part not in PARTS]
        if unknown:
            raise ValueError(f"unknown dev set {name!r}; choose one of {list(DEV_SETS)}")
        self.name = name
        self.parts = {part: PARTS[part]() for part in parts}

    def __call__(self, encode: Encode) -> tuple[float, dict[str, float]]:
        details, headlines = {}, []
        for part, evaluator in self.parts.items():
            scores = evaluator(encode)
            headlines.append(headline(scores))
            details[f"dev/{part}"] = headlines[-1]
            for score in scores:
                if score.metric in ("pearson", "accuracy") or score.subset in ("mean", "wmean"):
                    details[f"dev/{score.name}"] = score.value
        return float(np.mean(headlines)), details
