"""The training kernel's second face: what runs a recipe. :func:`run_training` trains one (a plain run or a Ray Tune
trial), :func:`evaluate_checkpoint` evaluates a checkpoint, :func:`check_resources` refuses a run the cluster cannot
place, and a run's folder and checkpoints are read with :func:`run_directory`, :func:`run_record` and
:func:`load_state`; :func:`random_batch` draws a batch on a training worker.

Importing it loads Ray Train and MLflow (about 2.4 s of CPU and 110 MiB more per process than :mod:`parabit.training`
alone, measured on 2 cores), so what only defines or reads training (recipes, configs, Ray Data workers, the CLI's
config commands) imports :mod:`parabit.training`, and what trains imports this.
"""

from parabit.training.batches import random_batch
from parabit.training.checkpointing import load_state, run_directory, run_record
from parabit.training.driver import TrainingResult, evaluate_checkpoint, open_tracker, remember_run, run_training
from parabit.training.placement import WorkersNotPlaced, check_resources

__all__ = ["TrainingResult", "WorkersNotPlaced", "check_resources", "evaluate_checkpoint", "load_state",
           "open_tracker", "random_batch", "remember_run", "run_directory", "run_record", "run_training"]
