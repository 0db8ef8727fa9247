"""Logging in to a shared tracking server: MLflow's own credential variables, and one line when the server says no.

A server started with MLflow's login app (``mlflow server --app-name basic-auth``, ``infra/local/start.sh --auth``)
answers 401 to a request without a valid login and 403 to one its user may not make. parabit's clients log in as
every MLflow client does: ``MLFLOW_TRACKING_USERNAME`` and ``MLFLOW_TRACKING_PASSWORD`` (or MLflow's
``~/.mlflow/credentials`` file). Such an answer is the user's to fix, not an outage to wait out: :func:`check_access`
asks the server once before a command does any work, and a run the server refuses to create raises the same
:class:`TrackingAccessDenied` (a :class:`~parabit.config.ConfigError`: one line, exit 2), before anything is written.
A server that does not answer at all is left to the run tracker's queue and retries.
"""

from __future__ import annotations

import logging

from mlflow.exceptions import MlflowException
from mlflow.utils.credentials import get_default_host_creds
from mlflow.utils.rest_utils import http_request

from parabit.config import ConfigError
from parabit.tracking.store import tracking_uri

log = logging.getLogger(__name__)

USERNAME_VARIABLE = "MLFLOW_TRACKING_USERNAME"
PASSWORD_VARIABLE = "MLFLOW_TRACKING_PASSWORD"
# MLflow's error codes for HTTP 401 and 403.
UNAUTHENTICATED = "UNAUTHENTICATED"
PERMISSION_DENIED = "PERMISSION_DENIED"
ACCESS_ERRORS = frozenset({UNAUTHENTICATED, PERMISSION_DENIED})
# A cheap request every user who may log in may make (an empty answer for a user with no role).
PROBE = "/api/2.0/mlflow/experiments/search"


class TrackingAccessDenied(ConfigError):
    """The tracking server refused this process's login, or an action its user may not take."""


def is_access_error(err: BaseException) -> bool:
    """Whether ``err`` is the server refusing the login (401) or the action (403)."""
    return isinstance(err, MlflowException) and err.error_code in ACCESS_ERRORS


def access_denied(uri: str, error_code: str, action: str = "use it") -> TrackingAccessDenied:
    """The one-line error for a refusal (``error_code`` UNAUTHENTICATED or PERMISSION_DENIED) by server ``uri``:
    what was refused, for which user, and the variables that choose the login."""
    creds = get_default_host_creds(uri)
    if error_code == UNAUTHENTICATED and not (creds.username and creds.password):
        return TrackingAccessDenied(
            f"the MLflow server {uri} asks for a login and none is set: set {USERNAME_VARIABLE} and "
            f"{PASSWORD_VARIABLE} to a user of that server")
    if error_code == UNAUTHENTICATED:
        return TrackingAccessDenied(
            f"the MLflow server {uri} refused the login of user {creds.username!r} (HTTP 401): check "
            f"{PASSWORD_VARIABLE} (and {USERNAME_VARIABLE})")
    return TrackingAccessDenied(
        f"the MLflow server {uri} does not let user {creds.username!r} {action} (HTTP 403): set {USERNAME_VARIABLE} "
        f"and {PASSWORD_VARIABLE} to a user with edit access, or ask the server's admin for it")


def check_access(uri: str | None = None) -> None:
    """Raise :class:`TrackingAccessDenied` if tracking server ``uri`` (default: the store in force) refuses this
    process's login; nothing is written. A local store, or a server that does not answer, passes: the first needs
    no login, the second is an outage the run tracker rides out."""
    uri = uri or tracking_uri()
    if not uri.startswith(("http://", "https://")):
        return
    try:
        response = http_request(get_default_host_creds(uri), PROBE, "GET", max_retries=0, timeout=10,
                                params={"max_results": 1})
    except Exception as err:  # noqa: BLE001 - unreachable or failing: not a refusal; tracking queues and retries
        log.debug("tracking server %s did not answer the login check (%s)", uri, err)
        return
    if response.status_code == 401:
        raise access_denied(uri, UNAUTHENTICATED)
    if response.status_code == 403:
        raise access_denied(uri, PERMISSION_DENIED, "read runs")
