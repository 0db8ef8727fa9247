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


def table(header: list[str], rows: list[list]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


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


class TreeMemory:
    """Samples the summed RSS of a process and all its descendants (Ray's raylet, workers, actors) in a thread.

    Reads ``/proc`` (Linux). ``peak_mib`` is the largest sum seen. RSS counts shared pages (Ray's object store,
    shared libraries) once per process, so the sum over-states what the tree holds: an upper bound, for comparisons.
    """

    def __init__(self, pid: int | None = None, interval: float = 0.5):
        import threading

        self.root = pid or os.getpid()
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.peak_mib = 0.0

    def _sample(self) -> float:
        children: dict[int, list[int]] = {}
        rss: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                fields = stat[stat.rindex(")") + 2:].split()
                children.setdefault(int(fields[1]), []).append(int(entry.name))
                rss[int(entry.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError, IndexError):
                continue
        total, todo = 0, [self.root]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0)
            todo.extend(children.get(pid, []))
        return total / 1024**2

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.peak_mib = max(self.peak_mib, self._sample())

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._stop.set()
        self._thread.join()
