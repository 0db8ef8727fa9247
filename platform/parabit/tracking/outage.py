"""Telling a tracking store that is down from one that says no, and waiting out the first.

A call the store cannot take now (server down, network, database locked or restarting) is an *outage*: the caller
waits or queues it, and the process says so once per outage (:func:`store_unreachable`, :func:`store_reached`), however
many calls wait. A call the store *refuses* (:func:`is_refusal`) is a bug in the caller: retrying can never succeed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from mlflow.exceptions import MlflowException

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_INTERVAL_S = 20.0
# A tracking server restarting (it took ~35 s on a loaded 2-core machine), or too loaded to answer within MLflow's
# timeout: what must reach the store before a command ends (a model's registration, a sweep closing its trials' runs)
# waits this long for it, asking every STORE_POLL_S.
STORE_WAIT_S = 120.0
STORE_POLL_S = 5.0

# MLflow error codes that mean the store answered and said no: retrying the same call can never succeed.
REFUSALS = frozenset({"INVALID_PARAMETER_VALUE", "BAD_REQUEST", "RESOURCE_ALREADY_EXISTS", "RESOURCE_DOES_NOT_EXIST",
                      "INVALID_STATE", "PERMISSION_DENIED", "UNAUTHENTICATED", "RESOURCE_CONFLICT"})




class TrackingRefused(RuntimeError):
    """The tracking store refused a write (not an outage): the message says which call and why."""


def is_refusal(err: Exception) -> bool:
    """Whether ``err`` is the store saying no (a bug to fix), rather than the store being unreachable (to retry)."""
    return isinstance(err, MlflowException) and err.error_code in REFUSALS


# The stores this process found unreachable and has not reached since: an outage is reported once, when it starts,
# and once when it ends, not for every call that waits (a training run makes several per epoch, in several trackers).
_UNREACHABLE: set[str] = set()


def store_unreachable(uri: str, err: Exception, pending: int) -> None:
    """Say that ``uri`` did not answer ``err``, with ``pending`` calls waiting: a warning the first time, until
    :func:`store_reached` (a debug line while the outage lasts)."""
    if uri in _UNREACHABLE:
        log.debug("MLflow tracking store %s still unreachable (%s); %d call(s) queued", uri, brief(err), pending)
        return
    _UNREACHABLE.add(uri)
    log.warning("MLflow tracking store %s unavailable (%s): logging is queued and retried (every %.0f s at most), "
                "the work goes on", uri, brief(err), RETRY_INTERVAL_S)


def store_reached(uri: str) -> None:
    """Say that ``uri`` answers again, if it was reported unreachable."""
    if uri in _UNREACHABLE:
        _UNREACHABLE.discard(uri)
        log.info("MLflow tracking store %s reachable again; what was queued follows", uri)


def call_patiently(call: Callable[[], T], wait_s: float = STORE_WAIT_S) -> T:
    """``call()`` (a few MLflow calls that may be made again, e.g. closing runs that are still open), made again
    every :data:`STORE_POLL_S` while the store does not answer, for up to ``wait_s``: a store restarting, or too
    loaded to answer within MLflow's timeout, costs a wait, not the work. A refusal (:func:`is_refusal`) is raised at
    once, as is any error that is not the store's (a bug); when ``wait_s`` has passed, the last error."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return call()
        except (MlflowException, OSError) as err:  # an outage waits; a refusal, or the deadline, raises
            if is_refusal(err) or time.monotonic() + STORE_POLL_S > deadline:
                raise
            log.debug("MLflow store not answering (%s); trying again in %.0f s", brief(err), STORE_POLL_S)
            time.sleep(STORE_POLL_S)


def brief(err: Exception) -> str:
    """An MLflow error on one line, without the endpoint's boilerplate (HTTP errors span several lines)."""
    text = " ".join(str(err).split())
    return text if len(text) <= 300 else f"{text[:297]}..."
