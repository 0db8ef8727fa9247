"""The main job: bitext → back-translation → filtering → training → evaluation → registered model.

``python jobs/main.py`` runs it on the embedded defaults (a Tatoeba slice, Apertium, AVG + J_pa); see ``--help``.
"""

import sys

from parabit.cli import main_job

if __name__ == "__main__":
    sys.exit(main_job())
