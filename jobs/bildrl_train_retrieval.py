"""Retrieval on *training* definitions of a finished BilDRL run (seen words), to tell memorisation from
generalisation: ``python jobs/bildrl_train_retrieval.py --config jobs/configs/bildrl/att_en-es.yaml
--run outputs/ray_results/bildrl-e30/bildrl-att-en-es [--rows 2000]``. Uses the run's newest checkpoint and the
space prepared for it (``outputs/bildrl/prepared/<name>``); the first ``--rows`` training rows of its first direction.
"""

import argparse
import sys
from pathlib import Path

from ray.train import Checkpoint

from parabit.config import load_config
from parabit.dictionary.config import DictionaryTrainConfig
from parabit.dictionary.prepare import load_prepared_space, training_rows
from parabit.dictionary.trainer import evaluate_retrieval, load_checkpoint
from parabit.paths import output_root


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True)
    parser.add_argument("--run", required=True, help="the run folder holding checkpoint_* folders")
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args(argv)
    config = load_config(DictionaryTrainConfig, args.config)
    checkpoints = sorted(p for p in Path(args.run).glob("checkpoint_*") if p.is_dir())
    if not checkpoints:
        print(f"{args.run}: no checkpoint_* folder; is this a finished BilDRL run?", file=sys.stderr)
        return 1
    space = load_prepared_space(output_root() / "bildrl" / "prepared" / config.name)
    embedder, history = load_checkpoint(Checkpoint.from_directory(str(checkpoints[-1])), config, space)
    direction = config.directions[0]
    rows = training_rows(config, direction).slice(0, args.rows)
    scores = evaluate_retrieval(embedder, rows, direction)
    print(f"{checkpoints[-1].name} (epoch {len(history)}), {direction}, {rows.num_rows} training definitions: "
          + ", ".join(f"{k} {v:.4g}" for k, v in scores.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
