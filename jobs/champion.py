"""Re-create the champion encoder from scratch: ``python jobs/champion.py`` (``make champion``).

The same as ``parabit champion``; this file is what ``ray job submit -- python jobs/champion.py`` runs.
"""

import sys

from parabit.cli import run_command
from pipelines.quality import champion

if __name__ == "__main__":
    sys.exit(run_command(champion))
