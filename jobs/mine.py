"""Mine translation pairs from two piles of sentences: ``python jobs/mine.py --config jobs/configs/mine_europarl.yaml``.

The same as ``parabit mine``; this file is what ``ray job submit -- python jobs/mine.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from pipelines.commands import mine

if __name__ == "__main__":
    sys.exit(run_command(mine))
