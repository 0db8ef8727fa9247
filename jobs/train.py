"""Train encoders of any recipe on Ray Train: ``python jobs/train.py --config jobs/configs/bilingual_sentences.yaml``.

The same as ``parabit train``; this file is what ``ray job submit -- python jobs/train.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from parabit.cli.training import train

if __name__ == "__main__":
    sys.exit(run_command(train))
