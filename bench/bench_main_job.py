"""The main job (``make main`` = ``.venv/bin/python jobs/main.py``): wall time by stage, and peak memory.

    .venv/bin/python bench/bench_main_job.py [--runs cold warm] [-- extra jobs/main.py arguments]

Runs ``jobs/main.py`` as a user would, in a subprocess, with its outputs and MLflow store in a scratch folder:

* ``cold``: empty outputs (every pipeline stage runs, data is prepared, the model trains);
* ``warm``: the same command again on those outputs (complete stages are skipped; the finished training run is
  found and resumed, so only Ray start-up, evaluation and registration are left).

The stage split comes from the job's own report (its stage table and its ``time:`` line); the whole command's wall
time and the peak summed RSS of its process tree (driver, Ray, workers, Apertium) are measured here.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import TreeMemory, machine_line, table, write_section

PROJECT = Path(__file__).resolve().parents[1]


def run_main(scratch: Path, extra: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak tree RSS (MiB) and stdout of one ``jobs/main.py`` run."""
    env = {**os.environ, "PARABIT_OUTPUT": str(scratch / "outputs"),
           "MLFLOW_TRACKING_URI": f"sqlite:///{scratch / 'mlflow.db'}", "RAY_DATA_DISABLE_PROGRESS_BARS": "1"}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "jobs/main.py", *extra], cwd=PROJECT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with TreeMemory(process.pid) as memory:
        output, _ = process.communicate()
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        print(output[-5000:])
        raise SystemExit(f"jobs/main.py failed with exit code {process.returncode}")
    return seconds, memory.peak_mib, output


def parse(output: str) -> tuple[dict[str, float], dict[str, float]]:
    """(pipeline stage → seconds, job phase → seconds) from the job's report."""
    stages = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"^(ingest|backtranslate|score|select)\s+\d+\s+\d+\s+\d+\s+([\d.]+)", output, re.M)}
    line = re.search(r"^time: (.*)$", output, re.M)
    phases = {k: float(v) for k, v in re.findall(r"(\w+) ([\d.]+) s", line.group(1))} if line else {}
    return stages, phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=["cold", "warm"], choices=["cold", "warm"])
    parser.add_argument("extra", nargs="*", help="arguments for jobs/main.py (after --)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-main-"))
    results = {}
    for run in args.runs:
        seconds, peak, output = run_main(scratch, args.extra)
        results[run] = (seconds, peak, *parse(output))
        print(f"{run}: {seconds:.1f} s, peak tree RSS {peak:,.0f} MiB, {results[run][2]}, {results[run][3]}", flush=True)

    names = list(dict.fromkeys(k for r in results.values() for k in [*r[2], *r[3]]))
    rows = [[name, *(f"{r[2].get(name, r[3].get(name, float('nan'))):.1f}" for r in results.values())]
            for name in names]
    rows.append(["**whole command (wall)**", *(f"**{r[0]:.1f}**" for r in results.values())])
    rows.append(["peak RSS of the process tree (MiB)", *(f"{r[1]:,.0f}" for r in results.values())])
    body = f"""## Main job by stage (`bench/bench_main_job.py`)

{machine_line()} · `jobs/main.py` {' '.join(args.extra)} in a subprocess, outputs and MLflow store in a scratch folder.
Pipeline stages (ingest … select) are parts of `pipeline`; `train` is Ray Train's `fit()` (start-up included);
`total` is `run_training` (Ray already up). Seconds:

{table(["stage", *results], rows)}
"""
    write_section("bench_main_job", body)


if __name__ == "__main__":
    sys.exit(main())
