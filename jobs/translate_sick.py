"""Translate SICK with the pipeline's translator, once: ``python jobs/translate_sick.py``.

The same as ``parabit translate-sick``; this file is what ``ray job submit -- python jobs/translate_sick.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from parabit.cli.data import translate_sick

if __name__ == "__main__":
    sys.exit(run_command(translate_sick))
