"""One process per run name at a time, and one builder per cached dataset: OS file locks beside the outputs.

Two commands started at once with the same ``name`` would write the same checkpoints or pipeline outputs: the second
is refused at once (:func:`exclusive_run`) with a message saying who holds the name. Two different runs that need the
same prepared data take turns building it (:func:`one_builder`): the first builds, the second finds it done; a folder
made once and then only read (:func:`built_once`) appears whole or not at all. The locks are ``flock`` locks, so a
process killed with SIGKILL releases them and a later run takes over cleanly.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


class RunInUse(RuntimeError):
    """Another process is running under the same name right now."""


@contextlib.contextmanager
def exclusive_run(lock_path: Path, what: str) -> Iterator[None]:
    """Hold ``lock_path`` for the block; raise :class:`RunInUse` naming ``what`` if another process holds it."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise RunInUse(f"{what} is already running ({holder}); wait for it to end or choose another name") \
                from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {os.uname().nodename}")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def one_builder(lock_path: Path) -> Iterator[None]:
    """Hold ``lock_path`` for the block, waiting for another process that holds it: two runs that need the same
    cached data build it once (the second finds it complete when its turn comes)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def built_once(folder: Path, build: Callable[[Path], object]) -> Path:
    """``folder``, made by ``build(staging)`` unless it exists: ``build`` fills a hidden staging folder beside it,
    which is then renamed into place, so ``folder`` is whole or absent. Processes that need it at once take turns
    (:func:`one_builder`): the first builds, the others find it made. What a killed builder left is removed by the
    next one."""
    if folder.is_dir():
        return folder
    with one_builder(folder.with_name(f"{folder.name}.lock")):
        if not folder.is_dir():
            for left in folder.parent.glob(f".{folder.name}-*"):  # under the lock, no builder is using them
                shutil.rmtree(left, ignore_errors=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
            try:
                build(staging)
                staging.rename(folder)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
    return folder
