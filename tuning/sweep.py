"""Launch a Ray Tune sweep: ``python tuning/sweep.py --space tuning/spaces/jbi_elgohary.yaml``.

The same as ``parabit sweep``; re-running the same command after an interruption resumes the sweep.
"""

import sys

from parabit.cli import run_command
from parabit.cli.training import sweep

if __name__ == "__main__":
    sys.exit(run_command(sweep))
