"""The MLflow pyfunc embedding model.

``mlflow.pyfunc.load_model(uri).predict(pd.DataFrame({"text": [...]}))`` returns a 2-D float32 array, one
embedding per row. The model carries the encoder weights, vocabulary and tokenizer settings, and the ``parabit``
code it needs (``code_paths``), so nothing else is required to use it. It is logged from code
(:mod:`parabit.export.model_code`), not pickled: loading it unpickles nothing. A pyfunc model is still code that runs
when loaded: load models from your own registry only.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd

from parabit.embedder import SentenceEmbedder

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parents[1]
MODEL_CODE = Path(__file__).with_name("model_code.py")


class EmbeddingModel(mlflow.pyfunc.PythonModel):
    """pyfunc wrapper around :class:`SentenceEmbedder`."""

    def load_context(self, context):
        self.embedder = SentenceEmbedder.load(context.artifacts["embedder"])

    def predict(self, context, model_input: pd.DataFrame, params=None) -> np.ndarray:
        """One embedding per row of the ``text`` column. Every row must be a string: a missing value (None, NaN)
        is refused with the rows it is in, never embedded as the word "none" or "nan"."""
        if not isinstance(model_input, pd.DataFrame) or "text" not in model_input.columns:
            columns = list(model_input.columns) if isinstance(model_input, pd.DataFrame) else type(model_input).__name__
            raise ValueError(f"input needs a 'text' column of sentences; it has {columns}")
        texts = model_input["text"].tolist()
        # infer_dtype checks every row in C; the rows at fault are looked for only when one is not a string.
        if pd.api.types.infer_dtype(texts, skipna=False) not in ("string", "empty"):
            bad = [row for row, text in enumerate(texts) if not isinstance(text, str)]
            raise ValueError(f"the 'text' column must hold strings; row(s) {bad[:10]} hold "
                             f"{[texts[row] for row in bad[:3]]} (drop or fill missing sentences first)")
        return self.embedder.encode(texts)


# The distributions whose modules loading the model imports (model_code.py → parabit.export.pyfunc → parabit.embedder,
# parabit.encoders, parabit.text, parabit.config), and nothing else: an environment MLflow builds for the model
# (`mlflow models serve --env-manager virtualenv`, `mlflow models build-docker`) installs exactly these.
MODEL_REQUIREMENTS = ("mlflow", "torch", "numpy", "pandas", "nltk", "pydantic", "pyyaml")


def public_version(version: str) -> str:
    """``version`` without its local label (``2.13.0+cpu`` → ``2.13.0``): a local build's label names no release an
    index serves, so a requirement carrying it cannot be installed anywhere else."""
    return version.split("+", 1)[0]


def _requirements() -> list[str]:
    from importlib.metadata import version

    return [f"{name}=={public_version(version(name))}" for name in MODEL_REQUIREMENTS]


def log_embedder(embedder: SentenceEmbedder, *, name: str = "model", registered_model_name: str | None = None):
    """Log ``embedder`` as a pyfunc model in the active MLflow run (and register it); returns the ModelInfo."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = embedder.save(Path(scratch) / "embedder")
        sample = pd.DataFrame({"text": ["A man is playing a guitar.", "Nobody is here."]})
        return mlflow.pyfunc.log_model(
            name=name,
            python_model=str(MODEL_CODE),
            artifacts={"embedder": str(folder)},
            code_paths=[str(PACKAGE_DIR)],
            pip_requirements=_requirements(),
            input_example=sample,
            registered_model_name=registered_model_name or None,
        )


def save_embedder_model(embedder: SentenceEmbedder, path: str | Path) -> Path:
    """Save the same pyfunc model to a local folder (used when the tracking store is unreachable)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = embedder.save(Path(scratch) / "embedder")
        mlflow.pyfunc.save_model(str(path), python_model=str(MODEL_CODE), artifacts={"embedder": str(folder)},
                                 code_paths=[str(PACKAGE_DIR)], pip_requirements=_requirements())
    return Path(path)


def load_encoder(model_uri: str):
    """An ``encode(list[str]) -> np.ndarray`` callable from any pyfunc embedding model URI."""
    model = mlflow.pyfunc.load_model(model_uri)

    def encode(sentences: list[str]) -> np.ndarray:
        return np.asarray(model.predict(pd.DataFrame({"text": list(sentences)})), dtype=np.float32)

    return encode
