"""`parabit serve` over real HTTP: a small registered parabit model (and a transformer) served by `mlflow models serve`
answers /invocations with the vectors `mlflow.pyfunc.load_model(uri).predict` gives for the same texts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
import torch
from mlflow.tracking import MlflowClient

from parabit.embedder import SentenceEmbedder
from parabit.export.pyfunc import log_embedder
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary
from parabit.tracking.registry import fluent_store
from parabit.tracking.store import ensure_experiment

from ..cluster_support import free_port, stop_process_group, wait_for_http

NAME = "parabit-encoder-serving-test"
TEXTS = ["A man plays a guitar.", "The cat sleeps.", "", "Unknown words only: zyx qwv."]
PARABIT = Path(sys.executable).with_name("parabit")  # the console script of this virtualenv


def small_model() -> SentenceEmbedder:
    """An untrained AVG encoder over a small vocabulary."""
    torch.manual_seed(0)
    vocab = Vocabulary([f"en:{w}" for w in "a man plays guitar the cat sleeps".split()])
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": 16, "options": {}}
    return SentenceEmbedder(SentenceEmbedder.build_encoder(spec, sparse=False), spec, vocab, Tokenizer("regexp"))


def register(store: str, embedder) -> str:
    """``embedder`` logged and registered as NAME, aliased @champion."""
    with fluent_store(store), mlflow.start_run(experiment_id=ensure_experiment("serving-test", store)):
        info = log_embedder(embedder, registered_model_name=NAME)
    MlflowClient(store, registry_uri=store).set_registered_model_alias(NAME, "champion", info.registered_model_version)
    return f"models:/{NAME}@champion"


def served_vectors(store: str, uri: str, folder: Path) -> tuple[np.ndarray, np.ndarray, str]:
    """What `parabit serve` answers for TEXTS over HTTP, what the loaded model predicts, and the server's log."""
    port = free_port()
    env = {**os.environ, "MLFLOW_TRACKING_URI": store}
    # From another folder, through the console script: the server must find the store from MLFLOW_TRACKING_URI
    # and uvicorn from the virtualenv whatever the shell's PATH (parabit serve puts the venv's bin/ first).
    env["PATH"] = "/usr/bin:/bin"
    log = folder / "serve.log"
    with open(log, "w") as out:
        server = subprocess.Popen([str(PARABIT), "serve", "--model-uri", uri, "--port", str(port)], cwd=folder,
                                  env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        up = wait_for_http(f"http://127.0.0.1:{port}/ping", timeout=300)
        assert up, f"no /ping within 300 s (exit code {server.poll()}): {log.read_text()[-3000:]}"
        # The pyfunc input is a DataFrame with a `text` column; MLflow's scoring server takes it as dataframe_split.
        body = json.dumps({"dataframe_split": {"columns": ["text"], "data": [[text] for text in TEXTS]}}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/invocations", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            assert response.status == 200
            served = np.asarray(json.load(response)["predictions"], dtype=np.float64)
    finally:
        stop_process_group(server)
    with fluent_store(store):
        expected = mlflow.pyfunc.load_model(uri).predict(pd.DataFrame({"text": TEXTS}))
    return served, np.asarray(expected, dtype=np.float64), log.read_text()


@pytest.mark.slow
def test_parabit_serve_answers_invocations_like_the_loaded_model(tmp_path):
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    uri = register(store, small_model())
    served, expected, log = served_vectors(store, uri, tmp_path)
    assert served.shape == (len(TEXTS), 16)
    np.testing.assert_allclose(served, expected, rtol=0, atol=1e-6)
    assert f"serving {uri} from {store}" in log


# Slow (minutes on 2 cores): the server loads the 90 MB transformer and its tokenizer from the model's artifacts.
@pytest.mark.slow
def test_a_served_transformer_answers_like_the_loaded_model(tmp_path):
    from parabit.encoders import TransformerEmbedder, TransformerEncoder
    from parabit.teacher.model import packaged_checkpoint

    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    uri = register(store, TransformerEmbedder(TransformerEncoder.from_checkpoint(packaged_checkpoint()), ("en", "es")))
    served, expected, _ = served_vectors(store, uri, tmp_path)
    assert served.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(served, expected, rtol=0, atol=1e-6)
