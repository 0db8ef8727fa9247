"""Reference-vs-translation classifier (Wieting et al. 2017, §5.6.1): does a back-translation read like human text?

A logistic regression on hashed word 1–2-gram features learns to tell held-out reference sentences (label 1) from
held-out back-translations (label 0); a pair's score is the probability that its back-translation is a reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parabit.filters.base import Filter, PairBatch, within


class ReferenceClassifierFilter(Filter):
    """Scores P(reference | back-translation text); accepts scores of at least ``minimum``. Call :meth:`fit` first."""

    name = "classifier"
    needs_fit = True

    def __init__(self, n_features: int = 2**18, regularization: float = 1.0, seed: int = 13):
        # Imported here: the filter registry is imported by every training driver and worker; scikit-learn's import
        # (~1 s) is only for the pipelines that use this filter.
        from sklearn.feature_extraction.text import HashingVectorizer
        from sklearn.linear_model import LogisticRegression

        self.vectorizer = HashingVectorizer(ngram_range=(1, 2), n_features=n_features, alternate_sign=False,
                                            norm="l2", lowercase=True)
        self.model = LogisticRegression(C=regularization, max_iter=1000, random_state=seed)
        self._fitted = False

    def fit(self, references: Sequence[str], translations: Sequence[str]) -> "ReferenceClassifierFilter":
        features = self.vectorizer.transform([*references, *translations])
        labels = np.r_[np.ones(len(references)), np.zeros(len(translations))]
        self.model.fit(features, labels)
        self._fitted = True
        return self

    def score(self, batch) -> np.ndarray:
        if not self._fitted:
            raise RuntimeError("ReferenceClassifierFilter.fit must be called before scoring")
        translations = PairBatch.of(batch).translation
        return self.model.predict_proba(self.vectorizer.transform(translations))[:, 1]

    def accept(self, scores, *, minimum: float | None = None) -> np.ndarray:
        return within(scores, minimum, None)
