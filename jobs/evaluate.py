"""Score an encoder on STS 2012–2016, SICK and MSRP: ``python jobs/evaluate.py --help``."""

import sys

from parabit.cli import evaluate_main

if __name__ == "__main__":
    sys.exit(evaluate_main())
