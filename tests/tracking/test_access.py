"""The login check and its one-line errors, where no server asks for a login (a real server refusing one:
tests/infra/test_tracking_server.py)."""

from __future__ import annotations

import logging
import socket

import pytest

from parabit.cli import run_command
from parabit.tracking import RunTracker
from parabit.tracking.access import PERMISSION_DENIED, UNAUTHENTICATED, access_denied, check_access


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_local_store_or_a_server_that_does_not_answer_passes_the_check(isolated_mlflow_store, monkeypatch):
    """Only a server that answers 401/403 fails it: one that is down is the run tracker's outage to ride out."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    check_access(isolated_mlflow_store)
    check_access(f"http://127.0.0.1:{_closed_port()}")


@pytest.mark.parametrize("username, password, code, said", [
    (None, None, UNAUTHENTICATED, "the MLflow server http://team:5000 asks for a login and none is set: set "
                                  "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to a user of that server"),
    ("alice", None, UNAUTHENTICATED, "the MLflow server http://team:5000 asks for a login and none is set"),
    ("alice", "x", UNAUTHENTICATED, "the MLflow server http://team:5000 refused the login of user 'alice' (HTTP 401): "
                                    "check MLFLOW_TRACKING_PASSWORD (and MLFLOW_TRACKING_USERNAME)"),
    ("bob", "x", PERMISSION_DENIED, "the MLflow server http://team:5000 does not let user 'bob' create runs (HTTP "
                                    "403): set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to a user with "
                                    "edit access"),
])
def test_a_refusal_names_the_server_the_user_and_the_variables(monkeypatch, username, password, code, said):
    for name, value in (("MLFLOW_TRACKING_USERNAME", username), ("MLFLOW_TRACKING_PASSWORD", password)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    message = str(access_denied("http://team:5000", code, "create runs"))
    assert message.startswith(said) and "\n" not in message


def test_an_outage_is_said_once_however_many_calls_and_trackers_wait(monkeypatch, tmp_path, caplog):
    """Two trackers of one process on a server that is down, each call failing: one warning for the outage (a job's
    log says once that tracking is unavailable), the rest only at debug level."""
    uri = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path))
    with caplog.at_level(logging.INFO, logger="parabit"):
        trackers = [RunTracker("test-tracker", f"down-{i}", uri=uri) for i in range(2)]
        for tracker in trackers:
            tracker.start()
            for step in range(3):
                tracker.log_metrics({"loss": 1.0}, step=step)
                tracker.flush(force=True)
            assert tracker.logged_steps("loss") is None and tracker.pending == 3
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and said[0].startswith(f"MLflow tracking store {uri} unavailable (")


def test_a_command_goes_on_when_its_server_does_not_answer_the_login_check(monkeypatch, capsys, tmp_path):
    """A server that is down is no refusal: the command runs (here: to its own one-line error about its config)."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{_closed_port()}")
    assert run_command(argv=["train", "--config", str(tmp_path / "absent.yaml")]) == 2
    assert "absent.yaml does not exist" in capsys.readouterr().err
