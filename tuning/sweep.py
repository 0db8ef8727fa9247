"""Launch a Ray Tune sweep: ``python tuning/sweep.py --space tuning/spaces/jbi_elgohary.yaml``.

Re-running the same command after an interruption resumes the sweep. Works the same through
``ray job submit --working-dir . -- python tuning/sweep.py --space ...``.
"""

import sys

from parabit.cli import sweep_main

if __name__ == "__main__":
    sys.exit(sweep_main())
