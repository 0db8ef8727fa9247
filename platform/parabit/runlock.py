"""One process per run name at a time: a lock file beside the run's outputs, held while the run works.

Two commands started at once with the same ``name`` would write the same checkpoints, prepared cache or pipeline
outputs; the second is refused at once with a message saying who holds the name. The lock is an OS file lock
(``flock``), so a process killed with SIGKILL releases it and a later run takes over cleanly.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
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
