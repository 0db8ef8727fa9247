"""The training kernel: what recipes and commands use to train on Ray Train, in two faces. Everything else in this
package is its own business.

This package is what a recipe is built from. A **recipe** (:class:`Recipe`) says what is trained: its config (a
:class:`TrainingConfig`), its prepared data (:class:`PreparedData`), its :class:`TrainingModule`, its evaluation; a
run stops with :class:`TrainingDiverged` (or another :class:`RunStopped`) for a reason of its own. Importing it loads
no Ray Train and no MLflow.

:mod:`parabit.training.run` is what runs one: :func:`~parabit.training.run.run_training` trains any recipe, as a plain
run or a Ray Tune trial, resuming a run of the same name (see that module for the rest, and for what importing it
costs).
"""

from parabit.training.config import (RESUMABLE_CHANGES, OptimConfig, ScalingSettings, TrackingConfig, TrainingConfig,
                                     trained_settings)
from parabit.training.guard import Divergence, RunStopped, TrainingDiverged
from parabit.training.prepared import (PreparedData, arrow_to_tensors, data_sizes_of, fixed_size_ids, id_table,
                                       write_prepared)
from parabit.training.recipe import (EMBEDDER_DIR, Evaluation, InitialInput, Recipe, RowGradient, ScoredOnDevSet, Step,
                                     TrainingModule, recipe_at)

__all__ = ["EMBEDDER_DIR", "RESUMABLE_CHANGES", "Divergence", "Evaluation", "InitialInput", "OptimConfig",
           "PreparedData", "Recipe", "RowGradient", "RunStopped", "ScalingSettings", "ScoredOnDevSet", "Step",
           "TrackingConfig", "TrainingConfig", "TrainingDiverged", "TrainingModule", "arrow_to_tensors",
           "data_sizes_of", "fixed_size_ids", "id_table", "recipe_at", "trained_settings", "write_prepared"]
