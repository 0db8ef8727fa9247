"""A transformer exported as a pyfunc model: its weights, config and tokenizer travel as artifacts, and
``mlflow.pyfunc.load_model(uri).predict`` on ``text`` (and the optional ``lang``) returns exactly the in-memory
encoder's vectors, with nothing pickled and the requirements it imports."""

from __future__ import annotations

from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from mlflow.tracking import MlflowClient

from parabit.data.bitext import read_tatoeba
from parabit.encoders import TransformerEmbedder, TransformerEncoder
from parabit.export.pyfunc import load_embedder, log_embedder, save_embedder_model
from parabit.teacher.model import packaged_checkpoint
from parabit.tracking.registry import fluent_store
from parabit.tracking.store import ensure_experiment

PAIRS = read_tatoeba(lang="es")[5::1499][:30]
TEXTS = [p.en for p in PAIRS] + [p.foreign for p in PAIRS]


@pytest.fixture(scope="module")
def embedder() -> TransformerEmbedder:
    """The packaged model with one layer's weights moved: predictions that equal it come from the carried weights,
    not from the packaged model's."""
    encoder = TransformerEncoder.from_checkpoint(packaged_checkpoint()).eval()
    with torch.no_grad():
        layer = encoder.model.encoder.layer[0].attention.output.dense.weight
        layer.add_(0.05 * torch.randn(layer.shape, generator=torch.Generator().manual_seed(0)))
    return TransformerEmbedder(encoder, ("en", "es"))


def test_the_saved_model_carries_weights_and_tokenizer_and_predicts_the_encoder_s_vectors(embedder, tmp_path):
    folder = save_embedder_model(embedder, tmp_path / "model")
    checkpoint = folder / "artifacts" / "embedder" / "transformer"
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= {p.name for p in checkpoint.iterdir()}
    assert not [p for p in folder.rglob("*") if p.suffix in (".pkl", ".pickle", ".cloudpickle")]
    requirements = (folder / "requirements.txt").read_text().split()
    assert {r.split("==")[0] for r in requirements} >= {"transformers", "tokenizers", "safetensors", "torch", "mlflow"}

    model = mlflow.pyfunc.load_model(str(folder))
    expected = embedder.encode(TEXTS)
    np.testing.assert_array_equal(model.predict(pd.DataFrame({"text": TEXTS})), expected)
    packaged = TransformerEmbedder(TransformerEncoder.from_checkpoint(packaged_checkpoint()).eval()).encode(TEXTS)
    assert np.abs(expected - packaged).max() > 1e-3  # the moved weights travelled, not the packaged ones


# Slow (~1 min on 2 cores): MLflow logs the 90 MB of weights to the store and loads the model back twice (its input
# example is checked on logging).
@pytest.mark.slow
def test_the_registered_model_reads_the_lang_column_and_equals_the_encoder(embedder, isolated_mlflow_store):
    store = isolated_mlflow_store
    name = "parabit-encoder-transformer-export-test"
    with fluent_store(store), mlflow.start_run(experiment_id=ensure_experiment("transformer-export", store)):
        info = log_embedder(embedder, registered_model_name=name)
    uri = f"models:/{name}/{info.registered_model_version}"
    model = mlflow.pyfunc.load_model(uri)
    signature = yaml.safe_load((Path(mlflow.artifacts.download_artifacts(uri)) / "MLmodel").read_text())["signature"]
    assert "lang" in signature["inputs"]  # MLflow would drop a column its signature does not name
    langs = ["en"] * len(PAIRS) + [None] * len(PAIRS)
    told = model.predict(pd.DataFrame({"text": TEXTS, "lang": langs}))
    np.testing.assert_array_equal(told, embedder.encode(TEXTS, lang=langs))
    np.testing.assert_array_equal(told, model.predict(pd.DataFrame({"text": TEXTS})))
    with pytest.raises(Exception, match="reads \\['en', 'es'\\]"):
        model.predict(pd.DataFrame({"text": TEXTS[:2], "lang": ["fr", "en"]}))
    assert isinstance(load_embedder(uri), TransformerEmbedder)
    assert MlflowClient(store).get_registered_model(name).name == name
