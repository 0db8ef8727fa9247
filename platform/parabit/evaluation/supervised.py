"""Scores of a supervised Siamese model: Pearson r, Spearman and MSE (SICK); accuracy, precision and F1 at a
threshold (MSRP)."""

from __future__ import annotations

import numpy as np

from parabit.evaluation.metrics import pearson, spearman
from parabit.evaluation.report import Score

SICK_LOW, SICK_HIGH = 1.0, 5.0


def regression_scores(predicted: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """``pearson``, ``spearman``, ``mse`` (on the 1–5 scale) and ``mse01`` (both rescaled to [0, 1], the scale of
    Bao et al.'s MSE column: their .032 for SiaLSTM is consistent with it, not with 1–5)."""
    predicted, gold = np.asarray(predicted, np.float64), np.asarray(gold, np.float64)
    mse = float(np.mean((predicted - gold) ** 2))
    return {"pearson": pearson(predicted, gold), "spearman": spearman(predicted, gold), "mse": mse,
            "mse01": mse / (SICK_HIGH - SICK_LOW) ** 2}


def best_threshold(probability: np.ndarray, labels: np.ndarray) -> float:
    """The decision threshold with the highest accuracy on these pairs (midpoints between sorted probabilities;
    ties go to the threshold closest to 0.5)."""
    values = np.unique(np.asarray(probability, np.float64))
    candidates = np.concatenate([[0.5], (values[:-1] + values[1:]) / 2]) if len(values) > 1 else np.array([0.5])
    labels = np.asarray(labels) > 0.5
    accuracy = [np.mean((probability >= t) == labels) for t in candidates]
    best = max(accuracy)
    return float(min((t for t, a in zip(candidates, accuracy) if a == best), key=lambda t: abs(t - 0.5)))


def classification_scores(probability: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    """``accuracy``, ``precision`` and ``f1`` (positive class = paraphrase) of ``probability >= threshold``, and the
    threshold. Precision is Bao et al.'s MSRP column ("p")."""
    # Imported on use, as in evaluation/msrp.py: every training worker imports this module (through the recipe
    # registry), and scikit-learn's import (~1 s, with scipy.stats) is for the MSRP runs alone.
    from sklearn.metrics import accuracy_score, f1_score, precision_score

    gold = np.asarray(labels) > 0.5
    predicted = np.asarray(probability) >= threshold
    return {"accuracy": float(accuracy_score(gold, predicted)),
            "precision": float(precision_score(gold, predicted, zero_division=0)),
            "f1": float(f1_score(gold, predicted, zero_division=0)), "threshold": float(threshold)}


def task_scores(task: str, predicted: np.ndarray, gold: np.ndarray, threshold: float | None = None) -> dict[str, float]:
    """The task's scores; for MSRP without a ``threshold`` the best one on these pairs is used (dev data only)."""
    if task == "sick":
        return regression_scores(predicted, gold)
    return classification_scores(predicted, gold, best_threshold(predicted, gold) if threshold is None else threshold)


def dev_score(task: str, scores: dict[str, float]) -> float:
    """What model selection and sweeps maximise: Pearson r (SICK) or accuracy (MSRP)."""
    return scores["pearson"] if task == "sick" else scores["accuracy"]


def as_scores(benchmark: str, subset: str, scores: dict[str, float], n: int) -> list[Score]:
    return [Score(benchmark, subset, metric, float(value), n) for metric, value in scores.items()]
