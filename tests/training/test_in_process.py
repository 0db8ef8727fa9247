"""A run in the calling process (``scaling.in_process``, Ray Train's local mode): the same training as a Ray Train
worker's, its checkpoints in the run's folder every few epochs, resumed from them, and a finished run not trained again;
with ``selection_includes_start`` a run that no epoch improves exports the untrained model."""

import json
from pathlib import Path

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.training import ScalingSettings
from parabit.training.run import run_directory, run_training
from parabit.training.checkpointing import COMPLETE_FILE

from ..training_support import untrained_evaluation

EPOCHS = 4


def _losses(result) -> list[float]:
    return [h["loss"] for h in result.history]


def test_it_trains_what_a_ray_train_worker_trains_with_a_checkpoint_every_few_epochs(ray_session, small_config,
                                                                                      isolated_mlflow_store):
    in_process = run_training(PairsRecipe(_config(small_config, "in-process", checkpoint_every=3)))
    worker = run_training(PairsRecipe(_config(small_config, "ray-worker", in_process=False, checkpoint_every=1)))

    np.testing.assert_allclose(_losses(in_process), _losses(worker), rtol=1e-5)
    assert in_process.history[-1]["dev_score"] == pytest.approx(worker.history[-1]["dev_score"], abs=1e-4)
    # Epochs 3 and 4 checkpointed (every 3rd, and the last), each written whole; the MLflow run has every epoch.
    folders = sorted(Path(run_directory(_config(small_config, "in-process"))).glob("checkpoint_*"))
    assert [json.loads((f / COMPLETE_FILE).read_text())["epoch"] for f in folders] == [3, EPOCHS]
    assert Path(in_process.checkpoint_path) == folders[-1]
    logged = MlflowClient(isolated_mlflow_store).get_metric_history(in_process.mlflow_run_id, "loss")
    assert sorted(m.step for m in logged) == list(range(1, EPOCHS + 1))


def test_a_longer_rerun_resumes_from_its_last_checkpoint_and_a_finished_one_trains_nothing(ray_session, small_config,
                                                                                          capsys):
    first = run_training(PairsRecipe(_config(small_config, "resumed", epochs=2)))
    resumed = run_training(PairsRecipe(_config(small_config, "resumed", checkpoint_every=3)))
    straight = run_training(PairsRecipe(_config(small_config, "straight", checkpoint_every=3)))

    assert [h["epoch"] for h in first.history] == [1, 2]
    assert [h["epoch"] for h in resumed.history] == list(range(1, EPOCHS + 1))
    assert resumed.history[-1]["resumes"] == 1 and straight.history[-1]["resumes"] == 0
    np.testing.assert_allclose(_losses(resumed), _losses(straight), rtol=1e-5)

    capsys.readouterr()
    again = run_training(PairsRecipe(_config(small_config, "resumed", checkpoint_every=3)))
    assert "without training again" in capsys.readouterr().out
    assert again.checkpoint_path == resumed.checkpoint_path


def test_with_the_start_a_candidate_a_run_no_epoch_improves_exports_its_untrained_model(ray_session, small_config):
    # A learning rate far below float32's resolution of the weights: training cannot change (so cannot beat) them.
    recipe = PairsRecipe(_config(small_config, "start-kept", epochs=2, optim__lr=1e-15, selection="best",
                                 selection_includes_start=True))
    result = run_training(recipe)

    assert result.selected == {"epoch": 0, **result.record.initial}
    assert [h["selected_epoch"] for h in result.history] == [0, 0]
    assert [h["dev_score"] for h in result.history] == [result.record.initial["dev_score"]] * 2  # ties keep epoch 0
    untrained = untrained_evaluation(recipe).report
    assert result.report.value("sts2016", "mean", "pearson") == pytest.approx(
        untrained.value("sts2016", "mean", "pearson"), abs=1e-6)


def test_the_start_is_a_candidate_of_best_only():
    from parabit.config import ConfigError, from_dict
    from parabit.training import TrainingConfig
    from parabit.training.loop import _better

    with pytest.raises(ConfigError, match="set selection to 'best'"):
        from_dict(TrainingConfig, {"name": "x", "recipe": "pairs", "selection_includes_start": True})
    start = {"epoch": 0, "dev_score": 0.5}  # the untrained model, selected before the first epoch
    assert not _better("best", {"dev_score": 0.5}, start) and not _better("best", {"dev_score": 0.4}, start)
    assert _better("best", {"dev_score": 0.51}, start)  # only a strictly better epoch replaces it


def test_in_process_is_one_cpu_worker():
    with pytest.raises(ValueError, match="in_process trains one CPU worker"):
        ScalingSettings(num_workers=2, in_process=True)
    with pytest.raises(ValueError, match="in_process trains one CPU worker"):
        ScalingSettings(use_gpu=True, in_process=True)


def _config(small_config, suffix: str, *, in_process: bool = True, checkpoint_every: int = 1, epochs: int = EPOCHS,
            **changes):
    config = small_config(**{"optim__epochs": epochs, "checkpoint_every": checkpoint_every, "optim__lr": 0.05,
                             "scaling": ScalingSettings(num_workers=1, cpus_per_worker=1.0, in_process=in_process),
                             **changes})
    config.name += f"-{suffix}"
    return config


def test_a_worker_in_process_trains_on_the_threads_of_its_cpus_and_gives_the_process_its_own_back():
    import torch

    from parabit.training.loop import _torch_threads

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with _torch_threads(ScalingSettings(in_process=True)):
            assert torch.get_num_threads() == 1  # one CPU: one thread, as Ray gives a worker process of one CPU
        assert torch.get_num_threads() == 2
        with _torch_threads(ScalingSettings(in_process=True, cpus_per_worker=0.5)):
            assert torch.get_num_threads() == 1  # a share of a CPU (cells side by side): at least one
        with _torch_threads(ScalingSettings(in_process=True, torch_threads=2, cpus_per_worker=1)):
            assert torch.get_num_threads() == 2  # the config's own number wins
    finally:
        torch.set_num_threads(before)
