"""Registration outlives a tracking server restarting as training ends: the model is registered once the server
answers again, not diverted to a local folder, and a version the store made before its answer was lost is the one
kept (never a second). What must reach the store before a command ends waits for a restarting server, but not for a refusal."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import torch
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from parabit.embedder import SentenceEmbedder
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary
from parabit.tracking import RunTracker
from parabit.tracking.registry import register_model
from parabit.tracking.outage import STORE_POLL_S, call_patiently

from ..cluster_support import MlflowServer

MODEL = "parabit-registry-check"
RESTART_AFTER_S = 8.0  # back while registration waits (the store took ~35 s on CI)


def _embedder() -> SentenceEmbedder:
    torch.manual_seed(0)
    vocab = Vocabulary([f"en:{w}" for w in "a man plays guitar the cat sleeps".split()])
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": 8, "options": {}}
    return SentenceEmbedder(SentenceEmbedder.build_encoder(spec, sparse=False), spec, vocab, Tokenizer("regexp"))


def _through_a_restart(server: MlflowServer, call: Callable):
    """``call()`` made while ``server`` is down, the server started again :data:`RESTART_AFTER_S` later; its result
    and how long it took."""
    server.kill()
    restart = threading.Timer(RESTART_AFTER_S, server.start)
    restart.start()
    started = time.monotonic()
    try:
        return call(), time.monotonic() - started
    finally:
        restart.join()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module (each test restarts it; a start costs ~10 s of two cores)."""
    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    server.start()
    server.wait()
    yield server
    server.kill()


@pytest.mark.slow
def test_a_store_down_at_registration_gets_the_model_once_it_is_back(small_config, server):
    tracker = RunTracker("registry-tests", "down-at-registration", uri=server.uri)
    assert tracker.start() is not None
    uri, waited = _through_a_restart(server, lambda: register_model(small_config(), tracker, _embedder(),
                                                                     registered_name=f"{MODEL}-down"))
    assert uri == f"models:/{MODEL}-down/1", uri
    assert waited > RESTART_AFTER_S  # it waited for the server rather than registering elsewhere
    client = MlflowClient(server.uri, registry_uri=server.uri)
    (version,) = client.search_model_versions(f"name = '{MODEL}-down'")
    assert version.run_id == tracker.run_id


@pytest.mark.slow
def test_a_version_the_store_made_before_its_answer_was_lost_is_kept_not_made_twice(small_config, server):
    """The store created the run's version, then the answer was lost (the server went down): registering again
    takes that version, tags it and sets the alias, and the model has one version."""
    tracker = RunTracker("registry-tests", "answer-lost", uri=server.uri)
    assert tracker.start() is not None
    client = MlflowClient(server.uri, registry_uri=server.uri)
    client.create_registered_model(MODEL)
    client.create_model_version(MODEL, f"runs:/{tracker.run_id}/model", run_id=tracker.run_id)
    uri, _ = _through_a_restart(server, lambda: register_model(small_config(), tracker, _embedder(),
                                                                 registered_name=MODEL, alias="candidate"))
    assert uri == f"models:/{MODEL}/1", uri
    (version,) = client.search_model_versions(f"name = '{MODEL}'")
    assert version.run_id == tracker.run_id and version.tags["parabit.run_name"]
    assert client.get_model_version_by_alias(MODEL, "candidate").version == "1"


def test_a_refusal_is_raised_at_once_not_waited_for(isolated_mlflow_store):
    client = MlflowClient(isolated_mlflow_store)
    started = time.monotonic()
    with pytest.raises(MlflowException) as refused:
        call_patiently(lambda: client.get_run("0" * 32))
    assert refused.value.error_code == "RESOURCE_DOES_NOT_EXIST" and time.monotonic() - started < STORE_POLL_S


def test_registering_prints_parabit_s_lines_only_not_mlflow_s(small_config, isolated_mlflow_store, capfd):
    """MLflow prints its registration lines on stderr whatever its log level; a registration shows none of them."""
    tracker = RunTracker("registry-tests", "quiet-registration", uri=isolated_mlflow_store)
    assert tracker.start() is not None
    uri = register_model(small_config(), tracker, _embedder(), registered_name=f"{MODEL}-quiet")
    tracker.finish()
    assert uri == f"models:/{MODEL}-quiet/1", uri
    err = capfd.readouterr().err
    assert "Successfully registered model" not in err and "Created version" not in err, err
