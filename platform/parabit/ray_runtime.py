"""Starting or joining Ray the same way from every entry point.

With ``RAY_ADDRESS`` set (``ray job submit`` sets it, or a user pointing at a cluster) the job joins that cluster.
Otherwise a local Ray starts with all local CPUs, its dashboard on 127.0.0.1 (Ray Train's placement-group cleaner
polls the state API, which the dashboard serves; without it every run logs a warning every second) and a small
object store: jobs here move token ids, not images, and the default store would reserve 30% of memory.

The local dashboard gets a port chosen here, and every worker is told it through ``RAY_API_SERVER_ADDRESS``: Ray's
state API, called inside Ray Train's controller and placement-group cleaner, otherwise looks for "the" Ray on the
machine and fails with "multiple active Ray instances" as soon as a second one runs (a test head, a user's own
cluster), leaking placement groups that then stall later runs.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import ray

from parabit.output import library_log_level, worker_env

log = logging.getLogger(__name__)

LOCAL_OBJECT_STORE_BYTES = 512 * 1024**2

# Variables a worker must see exactly as the driver does (data location, outputs, tracking store).
FORWARDED_ENV = ("PARABIT_DATA", "PARABIT_OUTPUT", "MLFLOW_TRACKING_URI", "NLTK_DATA")

# torch reads these once, at its first allocation, so a process must have them before it starts (workers get them
# from the runtime environment; a benchmark sets them before importing torch). THP_MEM_ALLOC_ENABLE backs torch's
# large CPU tensors with transparent huge pages: a step on a 2M-word table touches thousands of random rows, and
# with 4 KiB pages nearly each is a TLB miss (costly in a VM). bench/bench_vocab_scaling.py measures it.
TORCH_ENV_DEFAULTS = {"THP_MEM_ALLOC_ENABLE": "1"}

# Ray settings for a local Ray, each overridden by this process's own value. A run's controller polls its workers
# every RAY_TRAIN_HEALTH_CHECK_INTERVAL_S (2 s by default): the end of training and each checkpoint wait for the next
# poll, and polling one machine's workers is cheap. The preemption watcher (an extra actor per run) watches for cloud
# spot nodes being reclaimed; a local Ray has none. Together they took the Ray Train time of the tests' small run
# (4,000 pairs, 2 epochs) from 30-35 s to 21-27 s on 2 cores (2026-11-26, two runs each). Ray's log monitor lists
# the session's log folder 10 times a second until it holds RAY_LOG_MONITOR_MANY_FILES_THRESHOLD files, then twice
# a second; a local Ray that has started ~200 workers (a few runs) spent 2.2% of a core on it, 1.1% with 0 here
# (2026-11-27, 30 s idle after 120 actors). A new worker's output then reaches the driver up to 0.5 s later.
# Ray starts its workers at nice 15 (RAY_worker_niceness), so any normal-priority process on the machine (an editor's
# indexer, a second job) took the CPU ahead of training: a local Ray's workers run at the priority of the command.
LOCAL_RAY_ENV_DEFAULTS = {"RAY_TRAIN_HEALTH_CHECK_INTERVAL_S": "0.5", "RAY_TRAIN_ENABLE_PREEMPTION_WATCHER": "0",
                          "RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "0", "RAY_worker_niceness": "0"}


def torch_env() -> dict[str, str]:
    """:data:`TORCH_ENV_DEFAULTS`, each overridden by this process's own value (``THP_MEM_ALLOC_ENABLE=0`` opts out)."""
    return {name: os.environ.get(name, default) for name, default in TORCH_ENV_DEFAULTS.items()}


def init_ray(num_cpus: int | None = None) -> None:
    """Join ``RAY_ADDRESS`` if set, else start a local Ray; a no-op when Ray is already up in this process."""
    if ray.is_initialized():
        return
    if os.environ.get("RAY_ADDRESS"):
        # On a cluster the job's runtime environment (declared once, at `ray job submit`) is the one in force;
        # passing another here would replace it. (The README shows TORCH_ENV_DEFAULTS in its submit command.)
        log.info("joining the Ray cluster at %s", os.environ["RAY_ADDRESS"])
        ray.init()
        return
    dashboard_port = _free_local_port()
    env_vars = torch_env() | worker_env() | {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    env_vars |= {name: os.environ.get(name, default) for name, default in LOCAL_RAY_ENV_DEFAULTS.items()}
    # Ray Train's print patch sends a worker's print to both its stdout and its logger: every line came twice.
    env_vars["RAY_TRAIN_ENABLE_PRINT_PATCH"] = "0"
    env_vars["RAY_API_SERVER_ADDRESS"] = f"http://127.0.0.1:{dashboard_port}"
    # The workers inherit these from the Ray processes that ray.init starts, not from a runtime_env: with env_vars in
    # the job's runtime_env, Ray starts each worker through setup_worker.py, a second Python start and `import ray`
    # (a trivial actor: 1.0-2.3 s instead of 0.2-0.8 s on a quiet machine; a Ray Train run starts several).
    # address="local": always a new local Ray, never one named by a stale /tmp/ray/ray_current_cluster file.
    with _environment(env_vars):
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=True,
            dashboard_host="127.0.0.1",
            dashboard_port=dashboard_port,
            object_store_memory=LOCAL_OBJECT_STORE_BYTES,
            log_to_driver=True,
            logging_level=library_log_level(),
        )


@contextmanager
def _environment(variables: dict[str, str]) -> Iterator[None]:
    """This process's environment with ``variables`` set, restored on exit."""
    previous = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _free_local_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def available_cpus() -> float:
    return float(ray.cluster_resources().get("CPU", 0.0))


def cluster_can_grow() -> bool:
    """Whether the Ray cluster this process joined has an autoscaler that can add nodes: one started from an
    autoscaling config (Ray's cluster launcher, KubeRay with autoscaling, Ray's fake multi-node provider), as that
    autoscaler last reported to the cluster (what ``ray status`` shows). A local Ray, or a cluster started by hand
    with ``ray start`` on each node, runs Ray's read-only autoscaler, which only mirrors the nodes there are and names
    each node's type after the node itself; so does a cluster whose autoscaler has not reported yet (a few seconds
    after the head starts). Both autoscaler versions (``RAY_enable_autoscaler_v2``) are read."""
    # Private (Ray 2.60, no public equivalent; `ray status` reads the same): how the read-only autoscaler names a
    # node's type, and below the key of the v1 autoscaler's report.
    from ray.autoscaler._private.util import format_readonly_node_type
    from ray.autoscaler.v2.utils import is_autoscaler_v2

    if is_autoscaler_v2(fetch_from_server=True):
        from ray.autoscaler.v2.sdk import get_cluster_status

        status = get_cluster_status(ray.get_runtime_context().gcs_address)
        node_types = {node.node_id: node.ray_node_type_name for node in status.active_nodes + status.idle_nodes}
    else:
        from ray._private.ray_constants import DEBUG_AUTOSCALING_STATUS
        from ray.experimental.internal_kv import _internal_kv_get

        report = json.loads(_internal_kv_get(DEBUG_AUTOSCALING_STATUS) or "{}").get("autoscaler_report") or {}
        node_types = report.get("node_type_mapping") or {}
    return any(node_type != format_readonly_node_type(node_id) for node_id, node_type in node_types.items())
