"""The training kernel: what recipes and commands call to train on Ray Train. Everything else in this package is its
own business.

A **recipe** (:class:`Recipe`) says what is trained: its config (a :class:`TrainingConfig`), its prepared data
(:class:`PreparedData`), its :class:`TrainingModule`, its evaluation. :func:`run_training` trains any recipe, as a plain
run or a Ray Tune trial, resuming a run of the same name; it raises :class:`TrainingDiverged` or
:class:`WorkersNotPlaced` when a run stops for those reasons.
"""

from parabit.training.batches import random_batch
from parabit.training.checkpointing import EMBEDDER_DIR, load_state, run_directory, run_record
from parabit.training.config import (RESUMABLE_CHANGES, OptimConfig, ScalingSettings, TrackingConfig, TrainingConfig,
                                     trained_settings)
from parabit.training.driver import TrainingResult, evaluate_checkpoint, open_tracker, remember_run, run_training
from parabit.training.guard import RunStopped, TrainingDiverged
from parabit.training.placement import WorkersNotPlaced, check_resources
from parabit.training.prepared import (PreparedData, arrow_to_tensors, data_sizes_of, fixed_size_ids, id_table,
                                       write_prepared)
from parabit.training.recipe import Evaluation, InitialInput, Recipe, Step, TrainingModule

__all__ = [
    "EMBEDDER_DIR", "RESUMABLE_CHANGES", "Evaluation", "InitialInput", "OptimConfig", "PreparedData", "Recipe",
    "RunStopped", "ScalingSettings", "Step", "TrackingConfig", "TrainingConfig", "TrainingDiverged", "TrainingModule",
    "TrainingResult", "WorkersNotPlaced", "arrow_to_tensors", "check_resources", "data_sizes_of", "evaluate_checkpoint",
    "fixed_size_ids", "id_table", "load_state", "open_tracker", "random_batch", "remember_run", "run_directory",
    "run_record", "run_training", "trained_settings", "write_prepared",
]
