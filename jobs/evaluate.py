"""Score an encoder on STS 2012–2016, SICK and MSRP: ``python jobs/evaluate.py --help``.

The same as ``parabit evaluate``; this file is what ``ray job submit -- python jobs/evaluate.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from parabit.cli.training import evaluate

if __name__ == "__main__":
    sys.exit(run_command(evaluate))
