"""The MLflow pyfunc embedding model.

``mlflow.pyfunc.load_model(uri).predict(pd.DataFrame({"text": [...]}))`` returns a 2-D float32 array, one
embedding per row; a model of several languages (e.g. ``parabit-encoder-bilingual``) also takes an optional ``lang``
column (a language code per row, or empty to have it detected). The model carries the encoder weights, vocabulary
and tokenizer settings (a transformer: its Hugging Face checkpoint folder, weights and tokenizer), and the ``parabit``
code it needs (``code_paths``: the package's sources as one archive, ``parabit.zip``), so nothing else is required to
use it. It is logged from code (:mod:`parabit.export.model_code`), not pickled: loading it unpickles nothing. A pyfunc
model is still code that runs when loaded: load models from your own registry only.
"""

from __future__ import annotations

import importlib
import json
import logging
import tempfile
import zipfile
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd

from parabit.embedder import EMBEDDER_FORMAT
from parabit.encoders.transformer import TRANSFORMER_FORMAT

TRANSLATE_TEST_FORMAT = "parabit-translate-test-1"

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parents[1]
MODEL_CODE = Path(__file__).with_name("model_code.py")
CODE_ARCHIVE = "parabit.zip"  # model_code.py puts it on the import path by this name


class EmbeddingModel(mlflow.pyfunc.PythonModel):
    """pyfunc wrapper around an embedder (:class:`~parabit.embedder.SentenceEmbedder`, a transformer's, ...)."""

    def load_context(self, context):
        self.embedder = open_embedder(context.artifacts["embedder"])

    def predict(self, context, model_input: pd.DataFrame, params=None) -> np.ndarray:
        """One embedding per row of the ``text`` column. Every row must be a string: a missing value (None, NaN)
        is refused with the rows it is in, never embedded as the word "none" or "nan". An optional ``lang`` column
        says each row's language (a missing value: detect it, as without the column)."""
        if not isinstance(model_input, pd.DataFrame) or "text" not in model_input.columns:
            columns = list(model_input.columns) if isinstance(model_input, pd.DataFrame) else type(model_input).__name__
            raise ValueError(f"input needs a 'text' column of sentences; it has {columns}")
        texts = model_input["text"].tolist()
        # infer_dtype checks every row in C; the rows at fault are looked for only when one is not a string.
        if pd.api.types.infer_dtype(texts, skipna=False) not in ("string", "empty"):
            bad = [row for row, text in enumerate(texts) if not isinstance(text, str)]
            raise ValueError(f"the 'text' column must hold strings; row(s) {bad[:10]} hold "
                             f"{[texts[row] for row in bad[:3]]} (drop or fill missing sentences first)")
        if "lang" not in model_input.columns:
            return self.embedder.encode(texts)
        langs = [None if pd.isna(value) or value == "" else value for value in model_input["lang"].tolist()]
        unknown = sorted(set(langs) - {None} - set(self.embedder.langs))
        if unknown:
            raise ValueError(f"the 'lang' column names {unknown}; this model reads {list(self.embedder.langs)} "
                             "(leave a row's lang empty to have it detected)")
        return self.embedder.encode(texts, lang=langs)


# The distributions whose modules loading the model imports (model_code.py → parabit.export.pyfunc → parabit.embedder,
# parabit.encoders, parabit.text, parabit.config), and nothing else: an environment MLflow builds for the model
# (`mlflow models serve --env-manager virtualenv`, `mlflow models build-docker`) installs exactly these.
MODEL_REQUIREMENTS = ("mlflow", "torch", "numpy", "pandas", "nltk", "pydantic", "pyyaml")


# The class of each saved embedder format (an embedder folder's ``embedder.json`` names its format), imported when a
# folder of that format is opened: loading a word-table model imports neither transformers nor a translator.
EMBEDDER_CLASSES = {EMBEDDER_FORMAT: "parabit.embedder:SentenceEmbedder",
                    TRANSFORMER_FORMAT: "parabit.encoders.transformer:TransformerEmbedder",
                    TRANSLATE_TEST_FORMAT: "parabit.export.translate_test:TranslateTestEmbedder"}


def open_embedder(folder: str | Path):
    """The embedder saved in ``folder``, of whatever kind (a word-table model, a transformer, a translate-test
    pipeline): the class its ``embedder.json`` format names."""
    meta = json.loads((Path(folder) / "embedder.json").read_text())
    where = EMBEDDER_CLASSES.get(meta.get("format"))
    if where is None:
        raise ValueError(f"{folder}: not a parabit embedder (format {meta.get('format')!r}; known: "
                         f"{sorted(EMBEDDER_CLASSES)})")
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name).load(folder)


def public_version(version: str) -> str:
    """``version`` without its local label (``2.13.0+cpu`` → ``2.13.0``): a local build's label names no release an
    index serves, so a requirement carrying it cannot be installed anywhere else."""
    return version.split("+", 1)[0]


def _requirements(embedder=None) -> list[str]:
    """Pinned requirements of a model: those of every parabit model, plus the embedder's own (a transformer's
    ``transformers``, ``tokenizers``, ``safetensors``)."""
    from importlib.metadata import version

    names = (*MODEL_REQUIREMENTS, *getattr(embedder, "requirements", ()))
    return [f"{name}=={public_version(version(name))}" for name in dict.fromkeys(names)]


def code_archive(folder: Path) -> Path:
    """The ``parabit`` package's sources as one zip file in ``folder``, imported from directly (zipimport): a
    remote artifact store takes a model's files one request at a time, each checked against the login, and the
    package is some 220 files. Entries carry a fixed date, so the same sources give the same archive."""
    archive = folder / CODE_ARCHIVE
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for source in sorted(PACKAGE_DIR.rglob("*.py")):
            entry = zipfile.ZipInfo(str(Path(PACKAGE_DIR.name, source.relative_to(PACKAGE_DIR))))
            entry.compress_type = zipfile.ZIP_DEFLATED
            zipped.writestr(entry, source.read_bytes())
    return archive


def log_embedder(embedder, *, name: str = "model", registered_model_name: str | None = None):
    """Log ``embedder`` as a pyfunc model in the active MLflow run (and register it); returns the ModelInfo."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = embedder.save(Path(scratch) / "embedder")
        sample = pd.DataFrame({"text": ["A man is playing a guitar.", "Nobody is here."]})
        return mlflow.pyfunc.log_model(
            name=name,
            python_model=str(MODEL_CODE),
            artifacts={"embedder": str(folder)},
            code_paths=[str(code_archive(Path(scratch)))],
            pip_requirements=_requirements(embedder),
            input_example=sample,
            signature=signature(embedder, sample),
            registered_model_name=registered_model_name or None,
        )


def signature(embedder, sample: pd.DataFrame):
    """A model of several languages takes an optional ``lang`` column beside ``text`` (MLflow drops any input column
    its signature does not name): its signature says so. None for a one-language model (MLflow infers it from the
    input example: a ``text`` column in, one float32 vector per row out)."""
    if len(embedder.langs) == 1:
        return None
    from mlflow.models import infer_signature
    from mlflow.models.signature import ModelSignature
    from mlflow.types import ColSpec, Schema

    inferred = infer_signature(sample, embedder.encode(sample["text"].tolist()))
    inputs = Schema([ColSpec("string", "text"), ColSpec("string", "lang", required=False)])
    return ModelSignature(inputs=inputs, outputs=inferred.outputs)


def save_embedder_model(embedder, path: str | Path) -> Path:
    """Save the same pyfunc model to a local folder (used when the tracking store is unreachable)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = embedder.save(Path(scratch) / "embedder")
        mlflow.pyfunc.save_model(str(path), python_model=str(MODEL_CODE), artifacts={"embedder": str(folder)},
                                 code_paths=[str(code_archive(Path(scratch)))],
                                 pip_requirements=_requirements(embedder))
    return Path(path)


def load_embedder(model: str):
    """The embedder of a model (a :class:`SentenceEmbedder`, or a transformer's or translate-test's embedder): inside
    a pyfunc embedding model (``models:/...``, ``runs:/...`` or a pyfunc model folder) or an embedder folder
    (``embedder.json``): for callers that need more than ``predict`` (a language per call, the vocabulary)."""
    if (Path(model) / "embedder.json").is_file():
        return open_embedder(model)
    return mlflow.pyfunc.load_model(model).unwrap_python_model().embedder


def load_encoder(model_uri: str):
    """An ``encode(list[str]) -> np.ndarray`` callable from any pyfunc embedding model URI."""
    model = mlflow.pyfunc.load_model(model_uri)

    def encode(sentences: list[str]) -> np.ndarray:
        return np.asarray(model.predict(pd.DataFrame({"text": list(sentences)})), dtype=np.float32)

    return encode
