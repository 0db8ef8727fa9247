"""Replay MLflow calls that a run could not deliver: ``python -m parabit.tracking.replay SPOOL.json ...``."""

import sys

from parabit.tracking.run_tracker import RunTracker

if __name__ == "__main__":
    for spool in sys.argv[1:]:
        tracker = RunTracker.replay(spool)
        print(f"replayed {spool} into run {tracker.run_id}")
