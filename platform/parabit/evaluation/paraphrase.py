"""Bilingual paraphrase identification: an MLP on the difference of the two definitions' encodings (Chen et al. §4.2),
trained on the train split, stopped early on dev accuracy, scored on test (accuracy, F1 of the paraphrase class)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pyarrow as pa


def paraphrase_scores(encode_en: Callable[[list[str]], np.ndarray], encode_foreign: Callable[[list[str]], np.ndarray],
                      pairs: pa.Table, *, hidden: int = 100, max_epochs: int = 100, patience: int = 5,
                      seed: int = 1) -> dict[str, float]:
    """``{"accuracy", "f1", "dev_accuracy", "epochs"}`` for the pairs (columns text_en, text_foreign, label, split)."""
    # Imported on use, as in evaluation/msrp.py: every BilDRL training worker imports this module, and only the final
    # evaluation calls it.
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.neural_network import MLPClassifier

    features, labels = {}, {}
    for split in ("train", "dev", "test"):
        rows = pairs.filter(pa.compute.equal(pairs["split"], split))
        if rows.num_rows == 0:
            raise ValueError(f"the paraphrase set has no {split} rows")
        features[split] = encode_en(rows["text_en"].to_pylist()) - encode_foreign(rows["text_foreign"].to_pylist())
        labels[split] = np.asarray(rows["label"].to_pylist())
    classifier = MLPClassifier(hidden_layer_sizes=(hidden,), random_state=seed, learning_rate_init=1e-3)
    best, best_dev, since, epochs = None, -1.0, 0, 0
    for epochs in range(1, max_epochs + 1):
        classifier.partial_fit(features["train"], labels["train"], classes=np.array([0, 1]))
        dev = accuracy_score(labels["dev"], classifier.predict(features["dev"]))
        if dev > best_dev:
            best, best_dev, since = copy.deepcopy(classifier), dev, 0
        else:
            since += 1
            if since >= patience:
                break
    predicted = best.predict(features["test"])
    return {"accuracy": float(accuracy_score(labels["test"], predicted)),
            "f1": float(f1_score(labels["test"], predicted)), "dev_accuracy": float(best_dev),
            "epochs": float(epochs)}
