"""Train a sentence encoder on Ray Train: ``python jobs/train.py --config jobs/configs/bilingual_sentences.yaml``.

Works the same locally and under ``ray job submit --working-dir . -- python jobs/train.py ...``.
"""

import sys

from parabit.cli import train_main

if __name__ == "__main__":
    sys.exit(train_main())
