"""The main job: bitext → back-translation → filtering → training → evaluation → registered model.

The same as ``parabit main``; this file is what ``ray job submit -- python jobs/main.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from pipelines.commands import main_job

if __name__ == "__main__":
    sys.exit(run_command(main_job))
