"""Encoders that need no training, used as reference points and to exercise the evaluation suite."""

from parabit.baselines.mean_word_vectors import MeanWordVectors

__all__ = ["MeanWordVectors"]
