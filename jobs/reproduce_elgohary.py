"""Reproduce Elgohary & Carpuat (2017): ``python jobs/reproduce_elgohary.py --config jobs/configs/elgohary.yaml``.

Builds the phrase table and pivot paraphrases (resumable), trains AVG with J_bi and J_pa on bilingual sentences,
bilingual phrases, pivot paraphrases and PPDB, runs the paper's analyses and prints the tables with the paper's numbers
beside parabit's (also in MLflow, experiment ``parabit-elgohary``). Re-running skips finished runs.
"""

import sys

from parabit.elgohary.cli import reproduce_main

if __name__ == "__main__":
    sys.exit(reproduce_main())
