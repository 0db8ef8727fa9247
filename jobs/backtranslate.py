"""Build back-translated paraphrase pairs: ``python jobs/backtranslate.py --config jobs/configs/backtranslate_slice.yaml``.

The same as ``parabit backtranslate``; this file is what ``ray job submit -- python jobs/backtranslate.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from pipelines.commands import backtranslate

if __name__ == "__main__":
    sys.exit(run_command(backtranslate))
