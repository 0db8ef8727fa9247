"""A fresh machine's `make setup`: this commit's scripts/setup.sh against the one of an earlier commit, in alternating
pairs (baseline first in each round), each in a new clone with empty package caches, as on a fresh CI machine.

Each run clones the checkout's HEAD, puts the set-up script of the commit it stands for in place, and times
``bash scripts/setup.sh`` as a whole (virtualenv, packages, bytecode). pip's cache is off and uv gets an empty cache
of its own, so every package is downloaded again. The Debian packages are assumed present (set-up only checks them).
Ratio = baseline seconds / current seconds. Also checks that both give the same packages at the same versions.

    .venv/bin/python bench/bench_setup.py --baseline 95c5d5e --repeats 2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from _common import machine_line, median, table, timed, write_section

CHECKOUT = Path(__file__).resolve().parents[1]


def fresh_setup(revision: str, work: Path) -> tuple[float, list[str]]:
    """Seconds of a fresh ``bash scripts/setup.sh`` whose script is ``revision``'s; the packages it installed."""
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(CHECKOUT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", revision, "--", "scripts/setup.sh"], check=True)
    env = {**os.environ, "PIP_NO_CACHE_DIR": "1", "UV_CACHE_DIR": str(work / "uv-cache")}
    seconds, done = timed(lambda: subprocess.run(["bash", "scripts/setup.sh"], cwd=clone, env=env,
                                                 capture_output=True, text=True))
    if done.returncode != 0:
        raise SystemExit(f"set-up of {revision} failed:\n{done.stderr[-3000:]}")
    frozen = subprocess.run([str(clone / ".venv/bin/pip"), "freeze", "--exclude-editable"], capture_output=True,
                            text=True, check=True).stdout.split()
    return seconds, sorted(p for p in frozen if not p.startswith("uv=="))  # uv is the installer, not a dependency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the commit whose scripts/setup.sh is the yardstick")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    rows, times, same = [], {"baseline": [], "current": []}, True
    for round_ in range(1, args.repeats + 1):
        packages = {}
        for label, revision in (("baseline", args.baseline), ("current", "HEAD")):
            with tempfile.TemporaryDirectory(prefix="parabit-bench-setup-") as work:
                seconds, packages[label] = fresh_setup(revision, Path(work))
            times[label].append(seconds)
            print(f"round {round_}: {label} {seconds:.0f} s", flush=True)
        same &= packages["baseline"] == packages["current"]
        baseline, current = times["baseline"][-1], times["current"][-1]
        rows.append([f"round {round_}", f"{baseline:.0f}", f"{current:.0f}", f"{baseline / current:.2f}",
                     len(packages["current"])])
    ratios = [b / c for b, c in zip(times["baseline"], times["current"])]
    rows.append(["median", f"{median(times['baseline']):.0f}", f"{median(times['current']):.0f}",
                 f"{median(ratios):.2f}", ""])
    write_section("bench_setup", "\n\n".join([
        "## Fresh set-up (`bench/bench_setup.py`)", machine_line(),
        f"`bash scripts/setup.sh` in a new clone with empty package caches: the script of {args.baseline} (baseline) "
        f"against this commit's ({head}), alternating. Ratio = baseline seconds / current seconds. Same packages "
        f"at the same versions in every round: {'yes' if same else 'NO'}.",
        table(["round", "baseline, s", "current, s", "ratio", "packages"], rows)]))


if __name__ == "__main__":
    main()
