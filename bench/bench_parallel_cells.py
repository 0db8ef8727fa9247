"""Reproduction cells side by side: Bao et al.'s 16 cells trained one at a time vs two at once.

    .venv/bin/python bench/bench_parallel_cells.py [--epochs 30] [--repeats 1]

Each round runs ``parabit reproduce --seed-paper bao --repeats 1`` twice, each time in a fresh MLflow store, output
folder and ledger (so every cell trains): ``--parallel 1`` (the cells one after another, each worker 1 CPU: the
baseline) and ``--parallel 2`` (two cells at once as Ray tasks, each worker 0.5 CPU, so one CPU stays free for Ray
Data as on any 2-core run). ``--epochs`` shortens every cell alike (the configs' 30 by default). The ratio is the
baseline's wall time over the side-by-side run's, per round; the document's findings must come out the same (the
cells train the same settings; only their CPUs differ). The numbers replace this benchmark's section of
``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from _common import machine_line, median, table, timed, write_section

PROJECT = Path(__file__).resolve().parents[1]
PARABIT = Path(sys.executable).with_name("parabit")
CONFIGS = ("jobs/configs/siamese/sick_en.yaml", "jobs/configs/siamese/msrp.yaml")


def reproduce(work: Path, parallel: int, overrides: list[str]) -> tuple[float, int]:
    """Seconds of one whole reproduction of Bao's cells in ``work``, and how many cells it trained."""
    env = {**os.environ, "PARABIT_OUTPUT": str(work / "outputs"), "MLFLOW_TRACKING_URI": f"sqlite:///{work}/mlflow.db"}
    command = [str(PARABIT), "reproduce", "--seed-paper", "bao", "--repeats", "1", "--parallel", str(parallel),
               "--set", f"ledger={work / 'ledger'}", "--set", f"document={work / 'reproduction.md'}", *overrides]
    seconds, done = timed(lambda: subprocess.run(command, env=env, capture_output=True, text=True, cwd=PROJECT))
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    trained = int(re.search(r"(\d+) trained", done.stdout).group(1))
    return seconds, trained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=None, help="epochs per cell (default: the configs' own)")
    parser.add_argument("--repeats", type=int, default=1, help="rounds of (one at a time, two at once)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-parallel-cells-"))
    overrides = []
    if args.epochs is not None:
        for key, path in zip(("bao.sick_config", "bao.msrp_config"), CONFIGS):
            config = yaml.safe_load((PROJECT / path).read_text())
            config["optim"]["epochs"] = args.epochs
            copy = root / Path(path).name
            copy.write_text(yaml.safe_dump(config))
            overrides += ["--set", f"{key}={copy}"]
    rounds = []
    for round_ in range(args.repeats):
        one, cells = reproduce(root / f"r{round_}-one", 1, overrides)
        two, cells_two = reproduce(root / f"r{round_}-two", 2, overrides)
        assert cells == cells_two == 16, (cells, cells_two)
        findings = [(root / f"r{round_}-{kind}" / "reproduction.md").read_text().split("## Findings at a glance")[1]
                    .split("\n## ")[0] for kind in ("one", "two")]
        rounds.append((one, two, findings[0] == findings[1]))
        print(f"round {round_ + 1}: one at a time {one:.0f} s, two at once {two:.0f} s ({one / two:.2f}x)", flush=True)
    rows = [[f"round {i + 1}", f"{one:.0f}", f"{two:.0f}", f"{one / two:.2f}", "same" if same else "differ"]
            for i, (one, two, same) in enumerate(rounds)]
    rows.append(["median", f"{median(r[0] for r in rounds):.0f}", f"{median(r[1] for r in rounds):.0f}",
                 f"{median(r[0] / r[1] for r in rounds):.2f}", ""])
    epochs = f"{args.epochs} epochs per cell" if args.epochs is not None else "the configs' 30 epochs per cell"
    write_section("bench_parallel_cells", "\n\n".join([
        "## Reproduction cells side by side (`bench/bench_parallel_cells.py`)",
        machine_line(),
        f"Bao et al.'s 16 cells (SICK EN and MSRP, four models, lengths 15/20/25; {epochs}), each mode in a fresh "
        "MLflow store and ledger: `--parallel 1` (one cell at a time, its worker 1 CPU) vs `--parallel 2` (two "
        "Ray tasks at once, each cell's worker 0.5 CPU: one CPU stays for Ray Data and the evaluation). Ratio = "
        "one-at-a-time seconds / two-at-once seconds; findings: whether both documents' findings tables agree.",
        table(["round", "one at a time, s", "two at once, s", "ratio", "findings"], rows),
    ]))


if __name__ == "__main__":
    main()
