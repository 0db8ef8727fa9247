"""A model URI that names nothing (a wrong name, alias or version) is one line naming what was not found and what
exists, exit 2, for every command that takes one: evaluate and serve."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from parabit.cli import run_command

NAME = "parabit-encoder-uri-check"


@pytest.fixture(scope="module")
def registered(isolated_mlflow_store, tmp_path_factory):
    """Two versions of one registered model, the second @champion (their files are never read)."""
    client = MlflowClient(isolated_mlflow_store, registry_uri=isolated_mlflow_store)
    client.create_registered_model(NAME)
    source = tmp_path_factory.mktemp("model")
    for _ in range(2):
        client.create_model_version(NAME, str(source))
    client.set_registered_model_alias(NAME, "champion", "2")
    return client


@pytest.mark.parametrize("command", ["evaluate", "serve"])
@pytest.mark.parametrize("uri,said", [
    ("models:/nope@champion", f"no registered model named 'nope' in sqlite:///"),
    (f"models:/{NAME}@nope", f"'{NAME}' has no alias 'nope'; it has @champion (version 2); versions 1, 2"),
    (f"models:/{NAME}/7", f"'{NAME}' has no version '7'; it has @champion (version 2); versions 1, 2"),
    ("no/such/folder", "no such folder"),
])
def test_a_wrong_model_uri_is_one_line_and_exit_2(registered, command, uri, said, capsys):
    assert run_command(argv=[command, "--model-uri", uri]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err and "Traceback" not in err
    if uri.startswith("models:/nope"):
        assert NAME in err  # what exists is named


def test_an_existing_alias_and_version_pass(registered):
    from parabit.tracking.registry import check_model_uri

    for uri in (f"models:/{NAME}@champion", f"models:/{NAME}/1", f"models:/{NAME}", "runs:/abc/model"):
        assert check_model_uri(uri) == uri
