"""Compare every recipe with its untrained initialisation and the GloVe baselines: ``python jobs/quality.py``.

The same as ``parabit quality`` (writes the table of docs/quality.md); what ``ray job submit`` runs.
"""

import sys

from parabit.cli import run_command
from pipelines.quality import quality

if __name__ == "__main__":
    sys.exit(run_command(quality))
