"""MSRP paraphrase identification: logistic regression on ``[|u−v|, u*v]`` fit on train, scored on test."""

from __future__ import annotations

import numpy as np

from parabit.data.msrp import ParaphrasePair, read_msrp
from parabit.evaluation.metrics import Encode, encode_pairs
from parabit.evaluation.report import Score


def pair_features(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The SentEval pair features ``[|u − v|, u ⊙ v]``."""
    return np.hstack([np.abs(left - right), left * right])


class MSRPClassifierEvaluator:
    """Accuracy and F1 (positive class = paraphrase) of a classifier over frozen sentence embeddings.

    The regularisation strength is chosen by 5-fold cross-validation on the training pairs only.
    """

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.train = read_msrp("train")
        self.test = read_msrp("test")

    def _features(self, encode: Encode, pairs: list[ParaphrasePair]) -> tuple[np.ndarray, np.ndarray]:
        left, right = encode_pairs(encode, [p.sentence_a for p in pairs], [p.sentence_b for p in pairs])
        return pair_features(left, right), np.array([p.label for p in pairs])

    def __call__(self, encode: Encode) -> list[Score]:
        # Imported here: scikit-learn takes seconds to import, and every training worker imports this module (through
        # parabit.evaluation) while only the final MSRP evaluation uses it.
        from sklearn.linear_model import LogisticRegressionCV
        from sklearn.metrics import accuracy_score, f1_score
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        train_x, train_y = self._features(encode, self.train)
        test_x, test_y = self._features(encode, self.test)
        classifier = make_pipeline(
            StandardScaler(),
            LogisticRegressionCV(
                Cs=[0.01, 0.1, 1.0, 10.0], l1_ratios=(0.0,), cv=5, scoring="accuracy", max_iter=2000,
                random_state=self.seed, use_legacy_attributes=False,
            ),
        )
        classifier.fit(train_x, train_y)
        predicted = classifier.predict(test_x)
        n = len(test_y)
        return [
            Score("msrp", "test", "accuracy", float(accuracy_score(test_y, predicted)), n),
            Score("msrp", "test", "f1", float(f1_score(test_y, predicted)), n),
        ]
