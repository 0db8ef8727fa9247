"""Train BilDRL definition encoders on Ray Train and score them (reverse-dictionary retrieval, paraphrase
identification): ``python jobs/train_dictionary.py --config jobs/configs/bildrl/att_mtl.yaml [more.yaml ...]``.

Several configs run one after the other in one Ray session. ``--set optim.epochs=2`` overrides a field of each.
"""

import argparse
import logging
import sys

from parabit.config import load_config, parse_override
from parabit.dictionary.config import DictionaryTrainConfig
from parabit.dictionary.trainer import run_dictionary_training


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", nargs="+", required=True, help="YAML files with DictionaryTrainConfig fields")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    overrides = dict(parse_override(o) for o in args.overrides)
    configs = [load_config(DictionaryTrainConfig, path, overrides) for path in args.config]  # all checked first
    for config in configs:
        result = run_dictionary_training(config)
        for task, scores in result.scores.items():
            print(f"[{config.name}] {task}: " + ", ".join(f"{k} {v:.4g}" for k, v in scores.items()), flush=True)
        print(f"[{config.name}] MLflow run {result.mlflow_run_id}; time " +
              ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
