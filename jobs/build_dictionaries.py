"""Build the BilDRL dictionaries and the paraphrase set: ``python jobs/build_dictionaries.py``.

The same as ``parabit build-dictionaries``; this file is what ``ray job submit -- python jobs/build_dictionaries.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from parabit.cli.data import build_dictionaries

if __name__ == "__main__":
    sys.exit(run_command(build_dictionaries))
