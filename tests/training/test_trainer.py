"""Real Ray Train runs on real data: data-parallel workers that learn, a killed worker, the registered pyfunc model."""

import tempfile
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from parabit.embedder import SentenceEmbedder
from parabit.evaluation.dev import DevSet
from parabit.export.pyfunc import load_encoder
from parabit.recipes.pairs.recipe import PairsRecipe
from parabit.training import EMBEDDER_DIR
from parabit.training import ScalingSettings
from parabit.training.run import check_resources, run_training
from parabit.training.loop import selected_prefix

from ..conftest import pairs_config
from ..training_support import train_with_a_killed_worker, translation_retrieval

SENTENCES = ["A man is playing a guitar.", "Two dogs run on the beach.", "The cat sleeps.", ""]
EPOCHS = 6  # of each run of the killed-worker test


@pytest.fixture(scope="module")
def two_worker_run(ray_session, tatoeba_slice, outputs):
    """Two data-parallel CPU workers, 2 epochs of J_bi on the slice, registered. lr 0.1: with the slice's 80 steps
    per epoch, the default 0.005 barely moves N(0, 1) word vectors (held-out P@10 0.06 after 2 epochs).

    The workers are the elastic range [1, 2] of 0.5 CPU: on the session's 2-CPU Ray both fit beside Ray Data's CPU, so
    the group starts with every worker the cluster can place and trains as a fixed one does. (This run holds the
    assertions of the former tests/training/test_placement.py::
    test_an_elastic_range_starts_with_every_worker_the_cluster_can_place: two workers in every epoch, registered.)"""
    config = pairs_config("two-cpu-workers", tatoeba_slice, outputs, optim__lr=0.1,
                          scaling=ScalingSettings(num_workers=[1, 2], cpus_per_worker=0.5))
    config.tracking.register_as = "parabit-encoder-test"
    recipe = PairsRecipe(config)
    return recipe, run_training(recipe)


@pytest.mark.slow
def test_two_cpu_workers_train_log_and_register(two_worker_run, isolated_mlflow_store):
    recipe, result = two_worker_run
    assert [h["epoch"] for h in result.history] == [1, 2]
    # The workers' temporary copies of the selected embedder go with them (one per run once filled a disk).
    assert not list(Path(tempfile.gettempdir()).glob(selected_prefix(recipe.config.name) + "*"))
    assert all(h["workers"] == 2 for h in result.history)
    assert result.history[1]["loss"] < result.history[0]["loss"]

    client = MlflowClient(isolated_mlflow_store)
    run = client.get_run(result.mlflow_run_id)
    assert run.data.params["objective.name"] == "jbi" and run.data.params["scaling.num_workers"] == "[1, 2]"
    assert [m.step for m in client.get_metric_history(run.info.run_id, "loss")] == [1, 2]
    # Step 0 is the untrained model, then one dev score per epoch, each once.
    assert sorted(m.step for m in client.get_metric_history(run.info.run_id, "dev_score")) == [0, 1, 2]
    assert run.data.metrics["sts2016/mean/pearson"] == pytest.approx(result.report.value("sts2016", "mean", "pearson"))
    assert "dev/sts2016/mean/pearson" in run.data.metrics
    assert {a.path for a in client.list_artifacts(run.info.run_id, "evaluation")} >= {"evaluation/table.txt"}
    assert result.model_uri.startswith("models:/parabit-encoder-test/")


@pytest.mark.slow
def test_the_trained_model_beats_the_same_model_untrained_on_held_out_pairs(two_worker_run, tatoeba_heldout):
    """J_bi teaches translations to lie close: find each held-out English sentence's Spanish translation among 1,000.
    The untrained model is at chance (P@1 .002, P@10 .008); trained, P@1 .21 and P@10 .54. The margins (.1, .25)
    leave room for seeds and library versions, and fail a run that did not learn (lr 1e-12: untrained scores)."""
    recipe, result = two_worker_run
    untrained = recipe.untrained_embedder()
    trained = SentenceEmbedder.load(Path(result.checkpoint_path) / EMBEDDER_DIR)
    # Same init as the run's: the untrained model here scores exactly the dev score the run logged at step 0.
    assert DevSet(recipe.config.dev)(untrained.encode)[0] == pytest.approx(result.record.initial["dev_score"],
                                                                          abs=1e-6)
    before, after = translation_retrieval(untrained, tatoeba_heldout), translation_retrieval(trained, tatoeba_heldout)
    assert after["p_at_1"] >= before["p_at_1"] + 0.1, (before, after)
    assert after["p_at_10"] >= before["p_at_10"] + 0.25, (before, after)


@pytest.mark.slow
def test_the_registered_model_is_the_model_trained(two_worker_run):
    """The registered pyfunc model scores the dev set exactly as the worker's in-memory model did at the selected
    epoch (the tolerance, 1e-6, is float32 rounding: another epoch's model, or the untrained one, differs by > .001),
    and gives the checkpoint's vectors."""
    recipe, result = two_worker_run
    encode = load_encoder(result.model_uri)
    assert result.selected["epoch"] == 2  # selection "last"
    assert DevSet(recipe.config.dev)(encode)[0] == pytest.approx(result.selected["dev_score"], abs=1e-6)
    assert result.selected["dev_score"] == pytest.approx(result.report.value("sts2016", "mean", "pearson"), abs=1e-6)
    assert abs(result.selected["dev_score"] - result.record.initial["dev_score"]) > 1e-3  # so the check can tell

    predicted = mlflow.pyfunc.load_model(result.model_uri).predict(pd.DataFrame({"text": SENTENCES}))
    in_checkpoint = SentenceEmbedder.load(Path(result.checkpoint_path) / EMBEDDER_DIR).encode(SENTENCES)
    assert predicted.shape == (4, 64) and predicted.dtype == np.float32
    np.testing.assert_allclose(predicted, in_checkpoint, rtol=1e-6, atol=1e-6)


# Near 120 s on 2 cores: two six-epoch runs, the killed one and the uninterrupted one it must match, each with its own
# Ray Train start-up. The kill follows the second registered checkpoint at once; the four epochs after it (over a
# second each with batches of 4) leave the kill time to land before training ends.
@pytest.mark.slow
def test_a_killed_worker_resumes_from_its_checkpoint_and_matches_an_uninterrupted_run(ray_session, small_config,
                                                                                     isolated_mlflow_store):
    # Tiny batches make each epoch last over a second, so the kill lands mid-run.
    changes = dict(optim__epochs=EPOCHS, optim__batch_size=4)
    interrupted, killed = train_with_a_killed_worker(PairsRecipe(small_config(**changes)), after_checkpoints=2)

    assert killed, "the worker was never killed (training finished before a checkpoint was registered)"
    assert interrupted.history[-1]["resumes"] >= 1
    # No epoch skipped or repeated: in the checkpoint's history, and in the MLflow run (live logging + catch-up);
    # the untrained model's dev score once, at step 0.
    assert [h["epoch"] for h in interrupted.history] == list(range(1, EPOCHS + 1))
    client = MlflowClient(isolated_mlflow_store)
    for key, first in (("loss", 1), ("dev_score", 0)):
        logged = sorted(m.step for m in client.get_metric_history(interrupted.mlflow_run_id, key))
        assert logged == list(range(first, EPOCHS + 1)), (key, logged)
    assert max(m.value for m in client.get_metric_history(interrupted.mlflow_run_id, "resumes")) >= 1

    reference_config = small_config(**changes)
    reference_config.name += "-uninterrupted"
    reference = run_training(PairsRecipe(reference_config))
    assert reference.history[-1]["resumes"] == 0
    # Resumed exactly: same losses (1e-5: float summation order; a restart from scratch or a lost optimiser state
    # changes the losses after the kill in the third digit) and the same final vectors.
    np.testing.assert_allclose([h["loss"] for h in interrupted.history], [h["loss"] for h in reference.history],
                               rtol=1e-5)
    resumed = SentenceEmbedder.load(Path(interrupted.checkpoint_path) / EMBEDDER_DIR).encode(SENTENCES)
    straight = SentenceEmbedder.load(Path(reference.checkpoint_path) / EMBEDDER_DIR).encode(SENTENCES)
    np.testing.assert_allclose(resumed, straight, rtol=1e-4, atol=1e-5)


def test_scaling_that_leaves_no_cpu_for_ray_data_fails_at_start(ray_session, small_config):
    config = small_config(scaling=ScalingSettings(num_workers=2, cpus_per_worker=1.0))
    with pytest.raises(ValueError, match="leaving no whole CPU for Ray Data; lower scaling.cpus_per_worker"):
        run_training(PairsRecipe(config))


def test_concurrent_runs_that_leave_no_cpu_for_ray_data_fail_at_start(ray_session, small_config):
    with pytest.raises(ValueError, match="2 concurrent runs x 1 workers x 1.0 CPU = 2 of the cluster's 2 CPUs"):
        check_resources(small_config(), concurrent_runs=2)
    # What it suggests fits: one trial's worker and its driver (0.01 CPU) beside a whole CPU for Ray Data.
    with pytest.raises(ValueError, match=r"= 1\.01 of the cluster's 2 CPUs.*\(e\.g\. 0\.99\)"):
        check_resources(small_config(), concurrent_runs=1, cpus_per_run_driver=0.01)
    check_resources(small_config(scaling=ScalingSettings(cpus_per_worker=0.99)), concurrent_runs=1,
                    cpus_per_run_driver=0.01)
