"""Build the BilDRL dictionaries (fr-en, en-es, es-en) and the en-es paraphrase set, once, as parquet.

``python jobs/build_dictionaries.py [--config jobs/configs/bildrl/build.yaml] [--directions fr-en en-es es-en]``;
needs the bilingual spaces (``jobs/configs/bildrl/embeddings_{es,fr}.yaml``) trained first. See the README.
"""

import argparse
import logging
import sys

from parabit.config import load_config
from parabit.dictionary.build import build_dictionaries, summary
from parabit.dictionary.config import DIRECTIONS, DictionaryBuildConfig


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", help="YAML with DictionaryBuildConfig fields (default: the defaults)")
    parser.add_argument("--directions", nargs="+", choices=DIRECTIONS, default=list(DIRECTIONS))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    config = load_config(DictionaryBuildConfig, args.config) if args.config else DictionaryBuildConfig()
    outputs = build_dictionaries(config, directions=tuple(args.directions))
    print(summary(outputs))
    print(f"written under {config.output_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
