"""What every Ray worker of a local parabit Ray gets from ``parabit.ray_runtime.init_ray``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parabit.ray_runtime import TORCH_ENV_DEFAULTS, torch_env

THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _worker_view() -> dict:
    """In a Ray worker: torch's settings as the worker sees them, and the huge pages behind a fresh 64 MiB tensor."""
    import torch

    table = torch.ones(16 * 1024 * 1024)  # 64 MiB, touched: a word table's worth of pages
    huge_kib = int(Path("/proc/self/smaps_rollup").read_text().split("AnonHugePages:")[1].split()[0])
    return {"env": {name: os.environ.get(name) for name in TORCH_ENV_DEFAULTS}, "huge_kib": huge_kib,
            "sum": float(table.sum())}


def test_workers_get_torchs_settings_and_their_large_tensors_sit_on_huge_pages(ray_session):
    view = ray_session.get(ray_session.remote(_worker_view).remote())
    assert view["env"] == TORCH_ENV_DEFAULTS
    assert view["sum"] == 16 * 1024 * 1024
    if not THP_MODE.exists() or "[never]" in THP_MODE.read_text():
        pytest.skip("transparent huge pages are off on this machine: nothing more to check")
    assert view["huge_kib"] >= 32 * 1024, view


def test_a_users_own_setting_wins(monkeypatch):
    monkeypatch.setenv("THP_MEM_ALLOC_ENABLE", "0")
    assert torch_env()["THP_MEM_ALLOC_ENABLE"] == "0"
    monkeypatch.delenv("THP_MEM_ALLOC_ENABLE")
    assert torch_env() == TORCH_ENV_DEFAULTS


def test_a_local_ray_cannot_grow(ray_session):
    """Its autoscaler is Ray's read-only one (a cluster started by hand has the same); an autoscaling cluster's is
    tests/infra/test_autoscaling_cluster.py's."""
    import time

    from ray._private.ray_constants import DEBUG_AUTOSCALING_STATUS
    from ray.experimental.internal_kv import _internal_kv_get

    from parabit.ray_runtime import cluster_can_grow

    deadline = time.time() + 60
    while _internal_kv_get(DEBUG_AUTOSCALING_STATUS) is None:  # its first report, seconds after Ray starts
        assert time.time() < deadline, "Ray's autoscaler never reported"
        time.sleep(0.5)
    assert not cluster_can_grow()
