"""Build bilingual phrase pairs and pivot paraphrases: ``python jobs/phrases.py --config jobs/configs/phrases_en_es.yaml``.

``--set key.path=value`` overrides a config value (repeatable). Re-running with the same config resumes: complete
stages are skipped. Works the same under ``ray job submit``.
"""

import sys

from parabit.elgohary.cli import phrases_main

if __name__ == "__main__":
    sys.exit(phrases_main())
