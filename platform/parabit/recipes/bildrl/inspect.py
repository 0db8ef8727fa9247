"""Looking inside a finished BilDRL run: retrieval on its *training* definitions (seen words), to tell memorisation
from generalisation."""

from __future__ import annotations

from parabit.config import ConfigError
from parabit.recipes.bildrl.config import BilDRLConfig
from parabit.recipes.bildrl.evaluation import DefinitionEmbedder, evaluate_retrieval, seen_rows
from parabit.recipes.bildrl.prepare import prepare_dictionary_run, prepared_space
from parabit.training.run import load_state, run_directory


def seen_word_retrieval(config: BilDRLConfig, rows: int) -> tuple[int, dict[str, float]]:
    """The epoch of the run's newest checkpoint and the retrieval scores of ``rows`` of its training definitions of
    the first direction (:func:`~parabit.recipes.bildrl.evaluation.seen_rows`, the sample ``evaluate_seen`` scores)."""
    run = run_directory(config)
    checkpoints = sorted(folder for folder in run.glob("checkpoint_*") if folder.is_dir())
    if not checkpoints:
        raise ConfigError(f"{run}: no checkpoint_* folder; train {config.name} first")
    state = load_state(checkpoints[-1])
    embedder = DefinitionEmbedder.from_state(state["model"], config, prepared_space(prepare_dictionary_run(config)))
    direction = config.directions[0]
    scores = evaluate_retrieval(embedder, seen_rows(config, direction, rows), direction)
    return state["epoch"], scores
