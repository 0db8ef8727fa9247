"""The plain mean of pre-trained word vectors: the GloVe column of the seed tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from parabit.text.glove import load_glove
from parabit.text.tokenize import Tokenizer


class MeanWordVectors:
    """``encode(sentences)`` = mean of the vectors of the known words of each sentence (zeros if none is known)."""

    def __init__(self, words: Sequence[str], vectors: np.ndarray, tokenizer: Tokenizer | None = None):
        self.tokenizer = tokenizer or Tokenizer()
        self.vectors = vectors
        self._position = {word: i for i, word in enumerate(words)}

    @classmethod
    def glove(cls, tokenizer: Tokenizer | None = None) -> "MeanWordVectors":
        words, vectors = load_glove()
        return cls(words, vectors, tokenizer)

    def describe(self) -> dict:
        """What identifies this baseline in an MLflow run's params."""
        return {"tokenizer": self.tokenizer.to_dict()}

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        """``[len(sentences), dim]`` float32 embeddings."""
        rows, cols = [], []
        for row, tokens in enumerate(self.tokenizer.tokenize_all(sentences)):
            known = [self._position[t] for t in tokens if t in self._position]
            rows.extend([row] * len(known))
            cols.extend(known)
        # One sparse (sentence x word) count matrix times the used rows of the table: a single BLAS-backed
        # product instead of a Python loop over sentences.
        used, local_cols = np.unique(np.asarray(cols, dtype=np.int64), return_inverse=True)
        counts = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.float32), (np.asarray(rows, dtype=np.int64), local_cols)),
            shape=(len(sentences), len(used)),
        )
        sums = counts @ np.asarray(self.vectors[used], dtype=np.float32)
        totals = np.asarray(counts.sum(axis=1), dtype=np.float32)
        return np.divide(sums, totals, out=np.zeros_like(sums), where=totals > 0)
