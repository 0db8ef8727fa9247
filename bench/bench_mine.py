"""Bitext mining on the shipped Europarl sample: how many true pairs ``parabit mine`` recovers, and how fast.

    .venv/bin/python bench/bench_mine.py [--model-uri URI] [--repeats 3] [--lines 20000]

Both sides of the 20,000-line Europarl en-es sample (``jobs/configs/mine_europarl.yaml``'s piles) are shuffled with
different seeds and written as two plain files, so line order says nothing; ``parabit mine``'s pipeline
(``pipelines.mine.run``: Ray Data actor pool embedding, then LASER's ratio margin, greedy one-to-one) pairs them
with the bilingual model. A mined pair is true when both sentences come from the same line of the sample. Reported:
every pair the miner returns, best margin first; the most pairs whose precision (share true) is still at least .95,
and the margin there; precision and recall of all of them; sentences per second of the embed stage and of the
whole mining (``--repeats`` fresh runs, medians and spread).

The model should not have been trained on Europarl: the bilingual plan's ``no-europarl`` recipe
(``parabit train --config jobs/configs/bilingual/bilingual.yaml --set "data.sources=[tatoeba, newstest2013]" ...``)
is the default here, as its run folder; a registered model works as well (``--model-uri``).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from _common import machine_line, median, table, write_section

from parabit.config import load_config
from parabit.mining import MineConfig, MineSide
from parabit.output import configure_output
from parabit.paths import output_root, project_path

CONFIG = project_path("jobs/configs/mine_europarl.yaml")
NO_EUROPARL_RUN = "ray_results/bilingual-no-europarl"
PRECISION = 0.95


def shuffled_copy(side: MineSide, folder: Path, seed: int, lines: int) -> tuple[MineSide, list[int]]:
    """The first ``lines`` lines of ``side`` in a seeded random order, as a new file; which original line (1-based)
    each new line is."""
    text = side.file.read_text(encoding="utf-8").split("\n")[:lines]
    order = list(range(len(text)))
    random.Random(seed).shuffle(order)
    path = folder / f"{side.lang}.shuffled"
    path.write_text("\n".join(text[i] for i in order) + "\n", encoding="utf-8")
    return side.model_copy(update={"path": str(path), "limit": None}), [i + 1 for i in order]


def best_run_folder(name: str) -> str:
    """The embedder of a training run's newest checkpoint (``outputs/<name>``): its selected epoch's model."""
    from parabit.training import EMBEDDER_DIR

    folder = output_root() / name
    checkpoints = sorted(folder.glob("checkpoint_*/" + EMBEDDER_DIR)) or sorted(folder.glob("*/checkpoint_*/"
                                                                                           + EMBEDDER_DIR))
    if not checkpoints:
        raise SystemExit(f"no trained model in {folder}: train the bilingual plan's no-europarl recipe first "
                         "(see this file's docstring), or give --model-uri")
    return str(checkpoints[-1])


def precision_curve(pairs, source_lines: list[int], target_lines: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """For the mined pairs best first: whether each is true, and the precision of the first n."""
    source = np.asarray(source_lines)[pairs["source_line"].to_numpy() - 1]
    target = np.asarray(target_lines)[pairs["target_line"].to_numpy() - 1]
    true = source == target
    return true, np.cumsum(true) / np.arange(1, len(true) + 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-uri", help="the bilingual model (default: the no-europarl recipe's run)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lines", type=int, default=20_000)
    args = parser.parse_args()
    configure_output(verbose=False)  # parabit's progress lines, the libraries' logs at warning level

    config = load_config(MineConfig, CONFIG)
    model = args.model_uri or best_run_folder(NO_EUROPARL_RUN)
    results = []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench-mine-") as scratch:
            folder = Path(scratch)
            source, source_lines = shuffled_copy(config.source, folder, seed=1, lines=args.lines)
            target, target_lines = shuffled_copy(config.target, folder, seed=2, lines=args.lines)
            run_config = config.model_copy(update={"model": model, "source": source, "target": target,
                                                   "output_dir": str(folder / "mined"),
                                                   "name": f"bench-mine-{repeat}"})
            from pipelines.mine import run

            started = time.perf_counter()
            result = run(run_config)
            seconds = time.perf_counter() - started
            pairs = pq.read_table(result.output)
            true, precision = precision_curve(pairs, source_lines, target_lines)
            embedded = result.stages["embed"]
            results.append({"seconds": seconds, "embed_seconds": embedded.seconds, "sentences": embedded.rows_out,
                            "true": true, "precision": precision, "margin": pairs["margin"].to_numpy()})
            print(f"run {repeat + 1}: {len(true):,} pairs, {int(true.sum()):,} true, {seconds:.0f} s", flush=True)

    first = results[0]
    reach = np.flatnonzero(first["precision"] >= PRECISION)
    at = int(reach[-1]) + 1 if len(reach) else 0
    lines = args.lines
    rows = [["pairs mined (each sentence in at most one)", f"{len(first['true']):,}"],
            ["of them true", f"{int(first['true'].sum()):,} (precision {first['precision'][-1]:.3f}, recall "
                             f"{first['true'].sum() / lines:.3f} of {lines:,} lines)"],
            [f"most pairs at precision ≥ {PRECISION}", f"{at:,} ({int(first['true'][:at].sum()):,} true, recall "
                                                     f"{first['true'][:at].sum() / lines:.3f}; margin ≥ "
                                                     f"{first['margin'][at - 1]:.3f})" if at else "none"]]
    for name, key in (("embed stage", "embed_seconds"), ("whole mining (read, embed, pair)", "seconds")):
        rates = [r["sentences"] / r[key] for r in results]
        seconds = [r[key] for r in results]
        rows.append([f"{name}: sentences/s",
                     f"{median(rates):,.0f} ({min(rates):,.0f}–{max(rates):,.0f}); {median(seconds):.1f} s"])
    same = all(np.array_equal(r["true"], first["true"]) for r in results)
    body = f"""## Mining the Europarl sample (`bench/bench_mine.py`)

{machine_line()} · model `{model if args.model_uri else NO_EUROPARL_RUN + ' (its newest checkpoint: the selected epoch)'}` · the first
{lines:,} lines of each side of `jobs/configs/mine_europarl.yaml`'s piles, shuffled apart; `parabit mine`'s pipeline
(k = {config.k}, {config.actors} actors × {config.cpus_per_actor} CPU); {args.repeats} fresh runs, medians (min–max).
The pairs were {"the same" if same else "NOT the same"} in every run.

{table(["", "value"], rows)}
"""
    write_section("bench_mine", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
