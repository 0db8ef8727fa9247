"""The names parabit gives MLflow tags and its well-known metrics: one place, so the UI's filters and the code agree.

Filter in the UI with e.g. ``tags.`parabit.kind` = 'trial'``.
"""

# What a run is: training, trial, sweep, pipeline, evaluation, reproduction, ...
KIND = "parabit.kind"
RUN_NAME = "parabit.run_name"
RECIPE = "parabit.recipe"
# Lineage: the prepared data a training run read, the pipeline run and output that made it.
DATA = "parabit.data"
PIPELINE = "parabit.backtranslation"
PIPELINE_DIR = "parabit.pipeline_dir"
PIPELINE_OUTPUT = "parabit.pipeline_output"
PIPELINE_RUN_ID = "parabit.pipeline_run_id"
PHRASE_TABLE = "parabit.phrase_table"
PIVOT_PARAPHRASES = "parabit.pivot_paraphrases"
# Where training ran.
WORKER_NODES = "parabit.worker_nodes"
DEVICE = "parabit.device"
# The model a run registered (``models:/name/version``), so a re-run does not register it again.
MODEL_URI = "parabit.model_uri"
# Grouping: the sweep a trial belongs to, the reproduction a cell belongs to.
SWEEP = "parabit.sweep"
REPRODUCTION = "parabit.reproduction"
# A reproduction cell (one table cell of one seed paper at one training seed): its run name, paper, group and seed,
# how a re-run finds a finished cell instead of training it again.
REPRODUCTION_CELL = "parabit.reproduction.cell"
REPRODUCTION_PAPER = "parabit.reproduction.paper"
REPRODUCTION_GROUP = "parabit.reproduction.group"
REPRODUCTION_SEED = "parabit.reproduction.seed"
# What the cell trains (its ledger digest: parabit.papers.records), so a run of other settings is never reused.
REPRODUCTION_DIGEST = "parabit.reproduction.digest"
# The command line that started the run (also in the registered model's description).
COMMAND = "parabit.command"

# MLflow's own tag nesting a run under another.
PARENT_RUN_ID = "mlflow.parentRunId"

# Metrics every training run reports per epoch, and its final score (the recipe's headline number,
# Recipe.final_score; logged last: marks the evaluation done).
DEV_SCORE = "dev_score"
LOSS = "loss"
FINAL_SCORE = "final/score"
