"""The training kernel: what recipes and commands call to train on Ray Train. Everything else in this package is its
own business.

A **recipe** (:class:`Recipe`) says what is trained: its config (a :class:`TrainingConfig`), its prepared data
(:class:`PreparedData`), its :class:`TrainingModule`, its evaluation. :func:`run_training` trains any recipe, as a plain
run or a Ray Tune trial, resuming a run of the same name; it raises :class:`TrainingDiverged` or
:class:`WorkersNotPlaced` when a run stops for those reasons.
"""

import importlib

# What the face exports, by the module of this package that defines it. Each name is imported on first use (PEP
# 562), so a recipe or a config that needs only `TrainingConfig` or `Recipe` does not pull in Ray Train and the
# driver at start-up.
_MODULES = {
    "batches": ("random_batch",),
    "checkpointing": ("EMBEDDER_DIR", "load_state", "run_directory", "run_record"),
    "config": ("RESUMABLE_CHANGES", "OptimConfig", "ScalingSettings", "TrackingConfig", "TrainingConfig",
               "trained_settings"),
    "driver": ("TrainingResult", "evaluate_checkpoint", "open_tracker", "remember_run", "run_training"),
    "guard": ("Divergence", "RunStopped", "TrainingDiverged"),
    "placement": ("WorkersNotPlaced", "check_resources"),
    "prepared": ("PreparedData", "arrow_to_tensors", "data_sizes_of", "fixed_size_ids", "id_table", "write_prepared"),
    "recipe": ("Evaluation", "InitialInput", "Recipe", "RowGradient", "ScoredOnDevSet", "Step", "TrainingModule",
               "recipe_at"),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
