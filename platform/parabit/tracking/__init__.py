"""MLflow conventions: where runs are stored, and a run tracker that never kills training."""

from parabit.tracking.store import DEFAULT_EXPERIMENT, ensure_experiment, tracking_uri, use_tracking_store
from parabit.tracking.run_tracker import RunTracker, flatten_params

__all__ = ["DEFAULT_EXPERIMENT", "RunTracker", "ensure_experiment", "flatten_params", "tracking_uri", "use_tracking_store"]
