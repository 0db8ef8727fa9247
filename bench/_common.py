"""What every benchmark script in bench/ shares: timing, medians, memory, and writing its section of RESULTS.md.

The scripts run as ``python bench/<name>.py`` (this folder is then first on ``sys.path``), so they import this
module as ``_common``. Each script owns one marked section of ``bench/RESULTS.md`` and replaces only that one.
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import resource
import statistics
import sys
import time
from pathlib import Path

from parabit.markdown import table  # noqa: F401 (the scripts' tables, drawn as the library's documents draw theirs)

# PARABIT_BENCH_RESULTS=<file> sends a trial run's section elsewhere, leaving the recorded results alone.
RESULTS = Path(os.environ.get("PARABIT_BENCH_RESULTS") or Path(__file__).with_name("RESULTS.md"))


def timed(action) -> tuple[float, object]:
    """``(seconds, result)`` of ``action()``."""
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def median(values) -> float:
    return float(statistics.median(values))


def peak_rss_mib(children: bool = False) -> float:
    """Peak resident set size of this process (or of its waited-for children) in MiB (``ru_maxrss`` is KiB)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return usage.ru_maxrss / 1024


def machine_line() -> str:
    """Machine, CPUs, load (the machine is shared: say how busy it was), date and command, for a results section."""
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    command = " ".join([".venv/bin/python", *sys.argv])
    return (f"Command: `{command}` · date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC · "
            f"machine: {platform.node()}, {os.cpu_count()} CPUs (shared with other agents), "
            f"load average {load} (1/5/15 min) at the end")


def write_section(name: str, body: str) -> str:
    """Replace (or append) the section ``<!-- name:start --> ... <!-- name:end -->`` of RESULTS.md; returns it."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    section = f"{start}\n{body.strip()}\n{end}"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)
    print(section)
    return section


class TreeSampler:
    """Samples a process and all its descendants (Ray's raylet, workers, actors) from ``/proc`` (Linux) every
    ``interval`` seconds in a thread, as a context manager; a subclass says what it keeps of each sample."""

    def __init__(self, pid: int | None = None, interval: float = 0.5):
        import threading

        self.root = pid or os.getpid()
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def tree(self) -> dict[int, tuple[list[str], str]]:
        """``{pid: (fields of /proc/PID/stat after the command name, command line)}`` of the root and its
        descendants now (a process that ends while being read is left out)."""
        children: dict[int, list[int]] = {}
        stats: dict[int, list[str]] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                fields = stat[stat.rindex(")") + 2:].split()
                children.setdefault(int(fields[1]), []).append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
            stats[int(entry.name)] = fields
        tree, todo = {}, [self.root]
        while todo:
            pid = todo.pop()
            todo.extend(children.get(pid, []))
            try:  # the command line of the tree's processes only: the machine has many others
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if pid in stats:
                tree[pid] = (stats[pid], command.strip())
        return tree

    def sample(self, tree: dict[int, tuple[list[str], str]]) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample(self.tree())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._stop.set()
        self._thread.join()


class TreeMemory(TreeSampler):
    """The summed RSS of a process and all its descendants. ``peak_mib`` is the largest sum seen. RSS counts shared
    pages (Ray's object store, shared libraries) once per process, so the sum over-states what the tree holds: an
    upper bound, for comparisons."""

    def __init__(self, pid: int | None = None, interval: float = 0.5):
        super().__init__(pid, interval)
        self.peak_mib = 0.0

    def sample(self, tree: dict[int, tuple[list[str], str]]) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        self.peak_mib = max(self.peak_mib, sum(int(fields[21]) * page for fields, _ in tree.values()) / 1024**2)
