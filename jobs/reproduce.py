"""Reproduce the seed papers' tables: ``python jobs/reproduce.py --help``.

The same as ``parabit reproduce``; this file is what ``ray job submit -- python jobs/reproduce.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from pipelines.commands import reproduce

if __name__ == "__main__":
    sys.exit(run_command(reproduce))
