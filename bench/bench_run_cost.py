"""What one more small Ray Train run costs the machine, in CPU-seconds, against the training it does.

    .venv/bin/python bench/bench_run_cost.py [--runs 4] [--repeats 2]

The run is the test suite's small one (``tests/conftest.py::pairs_config``: 4,000 Tatoeba en-es pairs, AVG dim 64,
J_bi, 2 epochs, 1 worker × 1 CPU, STS 2016): ``run_training``, as every training test, job, sweep trial and
reproduction cell runs it. Each session is a fresh process with its own local Ray that trains the run 1 time, or
``--runs`` times under new names; the CPU of the whole machine (every process: the driver, Ray's daemons, the Train
controller, workers and helper actors) is read from ``/proc/stat`` around it. The baseline is the 1-run session of
the same repeat: (N-run CPU − 1-run CPU) / (N − 1) is what each further run costs, and the ratio divides it by the
training it did (the workers' epoch seconds). The machine is shared: the spread over repeats is reported.

A table then splits the last N-run session's CPU by process kind (its processes sampled from ``/proc`` every 0.25 s:
one that lives under 0.25 s is missed, so the split sums to a little less than the total).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _common import TreeSampler, machine_line, median, table, write_section

TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU-seconds the whole machine has spent busy since boot (user, nice, system, irq, softirq)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[:7])
    return (user + nice + system + irq + softirq) / TICKS


def process_kind(command: str) -> str:
    """A process's kind from its command line (Ray names its workers ``ray::<actor or task>``)."""
    if command.startswith("ray::"):
        name = command.split()[0][5:].split(".")[0].split("(")[0]
        return "Ray worker, idle when last seen" if name == "IDLE" else f"ray::{name}"
    for daemon in ("raylet", "gcs_server", "dashboard/agent.py", "runtime_env/agent", "dashboard.py",
                   "log_monitor.py", "monitor.py"):
        if daemon in command:
            return f"Ray daemon ({daemon.split('/')[-1]})"
    if "default_worker.py" in command or "setup_worker.py" in command:
        return "Ray worker that died before it was named"
    if "ray-dashboard-" in command:
        return "Ray daemon (dashboard modules)"
    if "bench_run_cost.py" in command:
        return "driver (this session's process)"
    return command.split()[0].rsplit("/", 1)[-1]


class ProcessSampler(TreeSampler):
    """Last-seen command line and CPU-seconds of every process of a tree, by (pid, start time)."""

    def __init__(self, pid: int, interval: float = 0.25):
        super().__init__(pid, interval)
        self.seen: dict[tuple[int, str], tuple[str, float]] = {}

    def sample(self, tree: dict[int, tuple[list[str], str]]) -> None:
        for pid, (fields, command) in tree.items():
            # (pid, start time) names a process even when its pid is reused; utime + stime are fields 14 and 15.
            if command:
                self.seen[(pid, fields[19])] = (command, (int(fields[11]) + int(fields[12])) / TICKS)

    def by_kind(self) -> dict[str, tuple[int, float]]:
        kinds: dict[str, tuple[int, float]] = defaultdict(lambda: (0, 0.0))
        for command, cpu in self.seen.values():
            kind = process_kind(command)
            kinds[kind] = (kinds[kind][0] + 1, kinds[kind][1] + cpu)
        return dict(kinds)


def session(runs: int) -> dict:
    """A fresh session (``--session RUNS``) in a child process: machine CPU, wall, training seconds, process split."""
    started_busy, started = busy_seconds(), time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--session", str(runs)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    with ProcessSampler(child.pid) as sampler:
        output, errors = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"bench_run_cost: the {runs}-run session failed (exit {child.returncode}):\n{errors[-3000:]}")
    report = json.loads(output.strip().splitlines()[-1])
    return {"cpu": busy_seconds() - started_busy, "wall": time.perf_counter() - started,
            "training": report["training_seconds"], "kinds": sampler.by_kind()}


def train_session(runs: int) -> None:
    """The child: one local Ray, ``runs`` small runs; prints the workers' epoch seconds as the last line (JSON)."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-run-cost-"))
    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{scratch / 'mlflow.db'}"
    os.environ["PARABIT_OUTPUT"] = str(scratch / "outputs")
    os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
    from parabit.paths import PROJECT_ROOT
    from parabit.ray_runtime import init_ray
    from parabit.recipes.pairs.recipe import PairsRecipe
    from parabit.training.run import run_training

    sys.path.insert(0, str(PROJECT_ROOT))  # the tests' own definitions of their slice and small run, not copies
    from tests.conftest import pairs_config, write_tatoeba_slice

    path = write_tatoeba_slice(scratch / "slice.parquet")
    init_ray(num_cpus=2)
    training = 0.0
    for run in range(runs):
        config = pairs_config(f"run-cost-{run}", path, scratch / "outputs")
        result = run_training(PairsRecipe(config))
        training += sum(epoch["epoch_seconds"] for epoch in result.history)
    print(json.dumps({"training_seconds": training}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4, help="runs of the longer session (default 4)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--session", type=int, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.session is not None:
        train_session(args.session)
        return
    if args.runs < 2:
        parser.error("--runs must be at least 2: the cost of a further run needs two sessions to differ")

    rows, marginals, ratios = [], [], []
    for repeat in range(1, args.repeats + 1):
        one, many = session(1), session(args.runs)
        marginal = (many["cpu"] - one["cpu"]) / (args.runs - 1)
        trained = (many["training"] - one["training"]) / (args.runs - 1)
        marginals.append(marginal)
        ratios.append(marginal / trained)
        rows.append([repeat, f"{one['cpu']:.1f} / {one['wall']:.0f}", f"{many['cpu']:.1f} / {many['wall']:.0f}",
                     f"{marginal:.1f}", f"{trained:.2f}", f"{marginal / trained:.0f}"])
        print(f"repeat {repeat}: 1 run {one['cpu']:.1f} CPU-s, {args.runs} runs {many['cpu']:.1f} CPU-s: "
              f"{marginal:.1f} CPU-s per further run, {trained:.2f} s of it training", flush=True)

    kinds = sorted(many["kinds"].items(), key=lambda item: -item[1][1])
    split = [[kind, count, f"{cpu:.1f}", f"{cpu / args.runs:.2f}"] for kind, (count, cpu) in kinds if cpu >= 0.5]
    body = "\n".join([
        "## What one more small training run costs (`bench/bench_run_cost.py`)",
        "",
        machine_line(),
        f"The tests' small run (4,000 pairs, AVG dim 64, J_bi, 2 epochs, 1 worker) through `run_training`; "
        f"sessions of 1 and {args.runs} runs, each a fresh process with its own local Ray; CPU of the whole "
        "machine (`/proc/stat`).",
        "",
        table(["repeat", "1-run session: CPU-s / wall s", f"{args.runs}-run session: CPU-s / wall s",
               "CPU-s per further run", "of it training (workers' epoch s)", "ratio"], rows),
        "",
        f"Median over {args.repeats} repeats: **{median(marginals):.1f} CPU-s per further run** "
        f"(spread {min(marginals):.1f}-{max(marginals):.1f}), **{median(ratios):.0f}×** the training it does.",
        "",
        f"Where the last {args.runs}-run session's CPU went, by process kind (sampled every 0.25 s; Ray's start "
        "is in its daemons and the driver):",
        "",
        table(["process kind", "processes", "CPU-s", f"CPU-s per run (÷ {args.runs})"], split),
    ])
    write_section("bench_run_cost", body)


if __name__ == "__main__":
    main()
