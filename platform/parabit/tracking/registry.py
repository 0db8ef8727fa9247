"""The model registry: one registered model per encoder family name, versions promoted with aliases.

Every training run that exports a sentence embedder logs it as a pyfunc model and registers it as a new version of
``config.tracking.register_as`` (default ``parabit-encoder``), described by the command that made it and tagged with
its dev score on :data:`~parabit.evaluation.dev.PROMOTION_DEV_SET` (STS 2012-train and SICK trial: no test set).
Versions are promoted with registry aliases, MLflow's way to name a version: a sweep's best version becomes
``@candidate``, and ``parabit promote`` moves ``@champion`` to the version with the highest dev score
(:func:`promote_champion`), so ``models:/parabit-encoder@champion`` is always the best known on dev.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import time
from pathlib import Path

import mlflow
from mlflow.tracking import MlflowClient

from parabit.config import to_dict
from parabit.embedder import SentenceEmbedder
from parabit.export.pyfunc import load_embedder, log_embedder, save_embedder_model
from parabit.export.translate_test import TranslateTestConfig, TranslateTestEmbedder
from parabit.paths import output_root
from parabit.tracking import tags
from parabit.tracking.lineage import command_line
from parabit.tracking.outage import STORE_WAIT_S, call_patiently, is_refusal
from parabit.tracking.run_tracker import RunTracker

log = logging.getLogger(__name__)

CANDIDATE = "candidate"
CHAMPION = "champion"
DEV_SCORE_TAG = "parabit.dev_score"
DEV_SET_TAG = "parabit.dev_set"
# What MLflow prints on stderr when it registers (not through logging, so no log level hides it); parabit says which
# version it registered itself.
MLFLOW_REGISTRATION_LINES = ("Successfully registered model ", "Created version ")


@contextlib.contextmanager
def fluent_store(uri: str):
    """Point MLflow's fluent API (model logging has no client form) at ``uri`` for the block only, leaving the
    process's own setting (and the ``MLFLOW_*_URI`` variables, which MLflow rewrites) as they were."""
    if mlflow.get_tracking_uri() == uri and mlflow.get_registry_uri() == uri:
        yield
        return
    saved = {name: os.environ.get(name) for name in ("MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI")}
    mlflow.set_tracking_uri(uri)
    mlflow.set_registry_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def register_model(config, tracker: RunTracker, embedder: SentenceEmbedder, *, alias: str | None = None,
                   registered_name: str | None = None) -> str | None:
    """Log ``embedder`` as a pyfunc model in the tracker's run and register it (``models:/<name>/<version>``); if
    the tracking store stops answering, wait up to :data:`~parabit.tracking.outage.STORE_WAIT_S` for it, then
    save the model locally instead and say where (at once when the run never reached the store).

    A run that already registered its model (a re-run after the driver was killed before the run finished, or a
    first attempt whose version the store created but whose answer never came back) keeps that model version
    instead of registering a second one. ``alias`` (e.g. ``candidate``) is set on the version."""
    name = registered_name or config.tracking.register_as
    registered = tracker.logged_tag(tags.MODEL_URI)
    if registered:
        log.info("the run already registered %s; not registering it again", registered)
        if alias and registered.startswith("models:/"):
            set_alias(tracker.uri, name, alias, registered.rsplit("/", 1)[1])
        return registered
    try:
        return _log_and_register(config, tracker, embedder, name, alias)
    except Exception as err:  # noqa: BLE001 - a tracking failure must not lose the trained model
        failure = err
    if tracker.run_id is not None and not is_refusal(failure):
        log.warning("could not log the model to MLflow (%s); waiting up to %.0f s for the store to answer",
                    failure, STORE_WAIT_S)
        try:
            return call_patiently(lambda: _log_and_register(config, tracker, embedder, name, alias, again=True))
        except Exception as err:  # noqa: BLE001
            failure = err
    fallback = output_root() / "models" / f"{config.name}-{int(time.time())}"
    save_embedder_model(embedder, fallback)
    log.warning("could not log the model to MLflow (%s); saved it to %s instead", failure, fallback)
    return str(fallback)


def _log_and_register(config, tracker: RunTracker, embedder: SentenceEmbedder, name: str | None,
                      alias: str | None, again: bool = False) -> str:
    """Log and register; ``again``: after a failed attempt, whose version of ``name`` (if the store made one before
    its answer was lost) is taken instead of logging a second model."""
    if tracker.run_id is None:
        raise ConnectionError("no MLflow run (tracking store unreachable)")
    client = MlflowClient(tracker.uri, registry_uri=tracker.uri)
    made = client.search_model_versions(f"name = '{name}' and run_id = '{tracker.run_id}'") if again and name else []
    if made:
        version = str(min(int(v.version) for v in made))
        uri = f"models:/{name}/{version}"
    else:
        with fluent_store(tracker.uri), mlflow.start_run(run_id=tracker.run_id), registration_quietly():
            info = log_embedder(embedder, registered_model_name=name or None)
        uri = info.model_uri
        version = str(info.registered_model_version) if name and info.registered_model_version else None
    if version is not None:
        client.update_model_version(name, version, description=f"{config.name}: {command_line()}")
        for key, value in {tags.RUN_NAME: config.name, **dev_tags(embedder, promotion_dev_set(config))}.items():
            client.set_model_version_tag(name, version, key, value)
        if alias:
            set_alias(tracker.uri, name, alias, version)
        uri = f"models:/{name}/{version}"
    tracker.set_tags({tags.MODEL_URI: uri})
    return uri


@contextlib.contextmanager
def registration_quietly():
    """Drop MLflow's own registration lines (:data:`MLFLOW_REGISTRATION_LINES`) from what the block prints on stderr;
    every other line passes on, in order, when the block ends."""
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            yield
    finally:
        for line in captured.getvalue().splitlines(keepends=True):
            if not line.startswith(MLFLOW_REGISTRATION_LINES):
                sys.stderr.write(line)


def set_alias(uri: str, name: str, alias: str, version: str) -> None:
    """Point ``models:/<name>@<alias>`` at ``version``."""
    MlflowClient(uri, registry_uri=uri).set_registered_model_alias(name, alias, str(version))


def promotion_dev_set(config) -> str:
    """The dev set the registered versions of ``config``'s model are compared by: its config class's
    ``promotion_dev_set`` (a bilingual model: Tatoeba dev retrieval), else
    :data:`~parabit.evaluation.dev.PROMOTION_DEV_SET`."""
    from parabit.evaluation.dev import PROMOTION_DEV_SET

    return getattr(config, "promotion_dev_set", PROMOTION_DEV_SET)


def dev_tags(embedder: SentenceEmbedder, dev_set: str | None = None) -> dict[str, str]:
    """The version tags that :func:`promote_champion` compares: the score on ``dev_set`` (default
    :data:`~parabit.evaluation.dev.PROMOTION_DEV_SET`) and its parts."""
    from parabit.evaluation.dev import PROMOTION_DEV_SET, DevSet

    dev_set = dev_set or PROMOTION_DEV_SET
    score, details = DevSet(dev_set)(embedder.encode)
    parts = {f"parabit.{key}": f"{value:.6f}" for key, value in details.items() if key.count("/") == 1}
    return {DEV_SCORE_TAG: f"{score:.6f}", DEV_SET_TAG: dev_set, **parts}


def promote_champion(name: str, *, version: str | None = None, dry_run: bool = False, uri: str | None = None) -> str:
    """Point ``models:/<name>@champion`` at ``version``, or at the version with the highest dev score (the rule of
    the module docstring); returns what was (or, with ``dry_run``, would be) done, in one line."""
    from parabit.config import ConfigError
    from parabit.tracking.store import tracking_uri

    uri = uri or tracking_uri()
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).is_file():
        raise ConfigError(f"no MLflow store at {uri}; train a model first or set MLFLOW_TRACKING_URI to the store")
    client = MlflowClient(uri, registry_uri=uri)
    try:
        versions = client.search_model_versions(f"name = '{name}'")
    except Exception as err:  # noqa: BLE001 - an unknown model or store: say which
        raise ConfigError(f"registered model {name!r} not found in {uri}: {err}") from None
    if not versions:
        raise ConfigError(f"registered model {name!r} has no versions in {uri}; train and register one first")
    if version is None:
        scored = [v for v in versions if DEV_SCORE_TAG in v.tags]
        if not scored:
            raise ConfigError(f"no version of {name!r} carries a dev score ({DEV_SCORE_TAG}); pass --version")
        best = max(scored, key=lambda v: (float(v.tags[DEV_SCORE_TAG]), int(v.version)))
        version, reason = str(best.version), f"dev score {float(best.tags[DEV_SCORE_TAG]):.4f}, the highest of " \
                                        f"{len(scored)} scored version(s)"
    else:
        if str(version) not in {str(v.version) for v in versions}:
            raise ConfigError(f"{name!r} has no version {version}; it has {sorted(int(v.version) for v in versions)}")
        reason = "chosen on the command line"
    try:
        current = str(client.get_model_version_by_alias(name, CHAMPION).version)
    except Exception:  # noqa: BLE001 - no champion yet
        current = None
    if current == str(version):
        return f"models:/{name}@{CHAMPION} is already version {version} ({reason})"
    if dry_run:
        return f"would move models:/{name}@{CHAMPION} from {current or 'nothing'} to version {version} ({reason})"
    set_alias(uri, name, CHAMPION, str(version))
    return f"models:/{name}@{CHAMPION} -> version {version} (was {current or 'unset'}; {reason})"


def check_model_uri(model_uri: str, uri: str | None = None) -> str:
    """``model_uri`` when the model it names exists; else :class:`~parabit.config.ConfigError` in one line, naming
    what was not found and what exists (the registered names, or that name's aliases and versions). Checks
    ``models:/NAME@ALIAS`` and ``models:/NAME/VERSION`` against the registry of ``uri`` (default: the tracking
    store in force) and a local path for existence; other schemes (``runs:/``, ``s3://``) are left to MLflow."""
    import re

    from parabit.config import ConfigError
    from parabit.tracking.store import tracking_uri

    uri = uri or tracking_uri()
    match = re.fullmatch(r"models:/([^/@]+)(?:@([^/]+)|/([^/]+))?", model_uri)
    if match is None:
        if "://" not in model_uri and ":/" not in model_uri and not Path(model_uri).expanduser().exists():
            raise ConfigError(f"model {model_uri!r}: no such folder (give models:/NAME@ALIAS, models:/NAME/VERSION, "
                              "runs:/RUN_ID/PATH or a model folder)")
        return model_uri
    name, alias, version = match.groups()
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).is_file():
        raise ConfigError(f"model {model_uri!r}: no MLflow store at {uri} (set MLFLOW_TRACKING_URI to the store "
                          "that registered it)")
    client = MlflowClient(uri, registry_uri=uri)
    names = sorted(m.name for m in client.search_registered_models())
    if name not in names:
        known = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "") or "none"
        raise ConfigError(f"model {model_uri!r}: no registered model named {name!r} in {uri}; registered: {known}")
    versions = client.search_model_versions(f"name = '{name}'")
    numbers = sorted(int(v.version) for v in versions)
    aliases = client.get_registered_model(name).aliases  # alias -> version
    described = (", ".join(f"@{a} (version {v})" for a, v in sorted(aliases.items())) or "no aliases") + \
        f"; versions {', '.join(map(str, numbers)) or 'none'}"
    if alias is not None and alias not in aliases:
        raise ConfigError(f"model {model_uri!r}: {name!r} has no alias {alias!r}; it has {described}")
    if version is not None and (not version.isdigit() or int(version) not in numbers):
        raise ConfigError(f"model {model_uri!r}: {name!r} has no version {version!r}; it has {described}")
    return model_uri


def pinned_model_uri(model_uri: str, uri: str | None = None) -> str:
    """``models:/NAME@ALIAS`` as the version the alias points at now (``models:/NAME/VERSION``), so what a pipeline
    stage records as its model stays the same model when the alias moves later; any other URI as given."""
    import re

    from parabit.tracking.store import tracking_uri

    match = re.fullmatch(r"models:/([^/@]+)@([^/]+)", model_uri)
    if match is None:
        return model_uri
    uri = uri or tracking_uri()
    version = MlflowClient(uri, registry_uri=uri).get_model_version_by_alias(*match.groups()).version
    return f"models:/{match.group(1)}/{version}"


def register_translate_test(config: TranslateTestConfig) -> str:
    """Build the translate-test model of ``config``, log it in an MLflow run (the reader pinned to its version),
    register it, and point ``@champion`` at its best version on dev; returns the registered version's URI."""
    reader = load_embedder(check_model_uri(config.reader))  # a reader that is not there: one line, naming it
    embedder = TranslateTestEmbedder(reader, config.engine, config.options, config.source, config.detector)
    tracker = RunTracker(config.experiment, config.name, tags={tags.KIND: "baseline", tags.RUN_NAME: config.name})
    tracker.start()
    with tracker.closing():
        tracker.log_params({**to_dict(config), "reader_version": pinned_model_uri(config.reader)})
        uri = register_model(config, tracker, embedder, registered_name=config.register_as)
    if uri and uri.startswith("models:/"):
        print(promote_champion(config.register_as))
    return uri
