"""Registration outlives a tracking server restarting as training ends: the model is registered once the server
answers again, not diverted to a local folder."""

from __future__ import annotations

import threading
import time

import pytest
import torch
from mlflow.tracking import MlflowClient

from parabit.embedder import SentenceEmbedder
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary
from parabit.tracking import RunTracker
from parabit.tracking.registry import register_model

from ..cluster_support import MlflowServer


@pytest.mark.slow
def test_a_store_down_at_registration_gets_the_model_once_it_is_back(small_config, tmp_path):
    torch.manual_seed(0)
    vocab = Vocabulary([f"en:{w}" for w in "a man plays guitar the cat sleeps".split()])
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": 8, "options": {}}
    embedder = SentenceEmbedder(SentenceEmbedder.build_encoder(spec, sparse=False), spec, vocab, Tokenizer("regexp"))
    server = MlflowServer(tmp_path)
    server.start()
    server.wait()
    try:
        tracker = RunTracker("registry-tests", "down-at-registration", uri=server.uri)
        assert tracker.start() is not None
        server.kill()
        restart = threading.Timer(8.0, server.start)  # back while registration waits (the store took ~35 s on CI)
        restart.start()
        started = time.monotonic()
        uri = register_model(small_config(), tracker, embedder, registered_name="parabit-registry-check")
        restart.join()
        assert uri == "models:/parabit-registry-check/1", uri
        assert time.monotonic() - started > 8.0  # it waited for the server rather than registering elsewhere
        client = MlflowClient(server.uri, registry_uri=server.uri)
        (version,) = client.search_model_versions("name = 'parabit-registry-check'")
        assert version.run_id == tracker.run_id
    finally:
        server.kill()
