"""Build bilingual phrase pairs and pivot paraphrases: ``python jobs/phrases.py --config jobs/configs/phrases_en_es.yaml``.

The same as ``parabit phrases``; this file is what ``ray job submit -- python jobs/phrases.py ...`` runs.
"""

import sys

from parabit.cli import run_command
from pipelines.commands import phrases

if __name__ == "__main__":
    sys.exit(run_command(phrases))
