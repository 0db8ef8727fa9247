"""A reproduction cell's time outside its epochs: cells trained in process (the default) vs each in a Ray Train run.

    .venv/bin/python bench/bench_cell_overhead.py [--cells 3] [--epochs 10] [--pairs 20000]

The cell is Elgohary & Carpuat's BiSent J_bi as the reproduction trains it (AVG sum, 300-d, rows N(0, 0.1²), AdaGrad
lr 0.05, Euclidean, margin 1, k 15, λ 1e-3, batch 25, the paper's 10 epochs; evaluated on STS 2012–2016 and SICK as
trained, untrained and with a shared unknown word), on ``--pairs`` of the en-es sentence pairs. ``--cells`` seeds
are trained one after another by the reproduction's own :class:`~parabit.reproduction.cells.CellRunner` in one process
with one Ray, as ``parabit reproduce`` trains them: first each in the calling process (``cells_in_process``, its
checkpoint every 5 epochs), then each in a Ray Train run of its own with a checkpoint every epoch (what every cell
did before). A cell's time outside its epochs is its MLflow run's ``time/total_seconds`` minus its epochs' training
and dev-scoring seconds: Ray Train's start, the data, the checkpoints, the final evaluation, the tracking. The
numbers replace this benchmark's section of ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _common import machine_line, median, table, write_section

PROJECT = Path(__file__).resolve().parents[1]
CELL = {
    "optim.name": "adagrad", "optim.lr": 0.05, "optim.batch_size": 25, "objective.negatives": 15,
    "objective.regularization": 1e-3, "model.init_std": 0.1, "model.options": {"pooling": "sum"},
    "evaluation.msrp": False, "evaluation.also": ["untrained", "shared_unknown"], "dev": "sts2012-train-smteuroparl",
    "tracking.register_as": "",
}


def outside_seconds(client, run_id: str) -> tuple[float, float]:
    """A run's total seconds and the seconds of them outside its epochs' training and dev scoring."""
    run = client.get_run(run_id)
    inside = sum(m.value for key in ("epoch_seconds", "dev_seconds") for m in client.get_metric_history(run_id, key))
    total = run.data.metrics["time/total_seconds"]
    return total, total - inside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=3, help="cells (seeds) per mode")
    parser.add_argument("--epochs", type=int, default=10, help="epochs per cell (the paper's 10)")
    parser.add_argument("--pairs", type=int, default=20_000, help="training pairs per cell")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cell-overhead-"))
    os.environ["PARABIT_OUTPUT"] = str(work / "outputs")
    os.environ["MLFLOW_TRACKING_URI"] = uri = f"sqlite:///{work / 'mlflow.db'}"

    from mlflow.tracking import MlflowClient

    from parabit.output import configure_output
    from parabit.papers.cells import Group
    from parabit.reproduction.cells import make_cell
    from parabit.reproduction.cells import CellRunner
    from parabit.reproduction.ledger import Ledger
    from parabit.ray_runtime import init_ray
    from parabit.recipes import load_run_config

    configure_output(verbose=False)
    init_ray()
    config = load_run_config(PROJECT / "jobs/configs/bilingual_sentences.yaml",
                             {**CELL, "optim.epochs": args.epochs, "data.max_pairs": args.pairs})
    client = MlflowClient(uri)
    rows, summary = [], []
    for mode, in_process, every in (("in process", True, 5), ("Ray Train run each", False, 1)):
        group = Group(f"bisent-jbi-{'local' if in_process else 'workers'}", config)
        cells = [make_cell("bench", "bench-cell-overhead", "elgohary", group, seed) for seed in range(1, args.cells + 1)]
        runner = CellRunner(Ledger(work / "ledger" / group.key), uri=uri, in_process=in_process,
                            checkpoint_every=every)
        results = runner.train_all(cells)
        failed = [r.error for r in results if not r.ok]
        if failed:
            raise SystemExit(f"{mode}: {failed}")
        measured = [outside_seconds(client, r.run_id) for r in results]
        for cell, (total, outside) in zip(cells, measured):
            rows.append([mode, cell.name, f"{total:.1f}", f"{outside:.1f}"])
        outsides = [outside for _, outside in measured]
        summary.append([mode, f"{median(outsides):.1f}", f"{min(outsides):.1f} – {max(outsides):.1f}",
                        f"{median(t for t, _ in measured):.1f}"])
        print(f"{mode}: outside the epochs {', '.join(f'{o:.1f}' for o in outsides)} s", flush=True)
    write_section("bench_cell_overhead", "\n\n".join([
        "## A reproduction cell's time outside its epochs (`bench/bench_cell_overhead.py`)",
        machine_line(),
        f"Elgohary & Carpuat's BiSent J_bi cell as the reproduction trains it ({args.pairs:,} en-es pairs, "
        f"{args.epochs} epochs, evaluated as trained, untrained and with a shared unknown word), {args.cells} seeds "
        "one after another through the reproduction's `CellRunner` in one process and one Ray: in process (the "
        "default: Ray Train's local mode, a checkpoint every 5 epochs) vs a Ray Train run per cell with a checkpoint "
        "every epoch (before). Outside = the run's total seconds minus its epochs' training and dev scoring.",
        table(["mode", "outside the epochs, median s", "min – max", "cell total, median s"], summary),
        table(["mode", "cell", "total s", "outside s"], rows),
    ]))


if __name__ == "__main__":
    main()
