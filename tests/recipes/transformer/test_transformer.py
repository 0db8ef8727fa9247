"""Recipe ``transformer`` end to end on small real slices, with the packaged all-MiniLM-L6-v2: one Ray Train run trains
it from Tatoeba pairs by multilingual distillation and translation ranking (gradient accumulation, epochs as slices of
the pair stream), beats its untrained start on held-out Tatoeba pairs, and registers ``parabit-encoder-transformer``,
whose pyfunc model returns the vectors of the checkpoint's embedder; a run whose worker is killed resumes from its
checkpoint and ends where an uninterrupted one does; two CPU workers train it over gloo."""

from __future__ import annotations

from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from parabit.data.heldout import HeldoutSets
from parabit.encoders import TransformerEmbedder
from parabit.recipes import recipe_for
from parabit.recipes.transformer.config import TRANSFORMER_MODEL, TransformerConfig
from parabit.tracking.registry import CHAMPION, DEV_SET_TAG, promote_champion
from parabit.training import EMBEDDER_DIR
from parabit.training.run import run_training

from ...training_support import train_with_a_killed_worker

TEXTS = [text for pair in HeldoutSets.load().tatoeba_test[:40] for text in (pair.en, pair.foreign)]


def small_config(name: str, outputs: Path, **changes) -> TransformerConfig:
    """A short run: a seeded sample of Tatoeba pairs (held-out pairs excluded), epochs of ``pairs_per_epoch`` pairs,
    batches of 16, scored on Tatoeba retrieval (and STS 2016) at the end; ``changes`` merged into their sections."""
    settings = {
        "name": name,
        "data": {"sources": ["tatoeba"], "dictionary": False, "max_pairs": 1000},
        "objectives": [{"name": "multilingual_distillation"}, {"name": "translation_ranking", "weight": 0.2}],
        "optim": {"lr": 1e-4, "batch_size": 16, "accumulation_steps": 2, "epochs": 2, "pairs_per_epoch": 192},
        "scaling": {"num_workers": 1, "cpus_per_worker": 1.0, "torch_threads": 1},
        "evaluation": {"sts_years": [2016], "sick": False, "msrp": False, "bitext_retrieval": ["tatoeba-es"],
                       "also": ["untrained"]},
        "storage_path": str(outputs / "ray_results"),
    }
    for section, values in changes.items():
        settings[section] = {**settings.get(section, {}), **values} if isinstance(values, dict) else values
    return TransformerConfig(**settings)


@pytest.fixture(scope="module")
def run(ray_session, outputs):
    config = small_config("transformer-slice", outputs)
    return config, run_training(recipe_for(config))


# Slow (minutes on 2 cores): a Ray Train run of a 22M-parameter transformer, its final evaluation and the untrained
# model's, and registration (the model logged with its 90 MB of weights).
@pytest.mark.slow
def test_the_run_trains_on_slices_of_the_stream_and_beats_its_untrained_start(run, isolated_mlflow_store):
    config, result = run
    assert [h["pairs_seen"] for h in result.history] == [192, 384]
    client = MlflowClient(isolated_mlflow_store)
    metrics = client.get_run(result.mlflow_run_id).data.metrics
    assert {"multilingual_distillation", "translation_ranking"} <= metrics.keys()  # each term reported
    trained = result.report.value("tatoeba-es", "mean", "accuracy")
    untrained = metrics["untrained/tatoeba-es/mean/accuracy"]
    assert trained == result.final_score and trained > untrained + 0.05, (untrained, trained)
    dev = {m.step: m.value for m in client.get_metric_history(result.mlflow_run_id, "dev_score")}
    assert dev[result.selected["epoch"]] > dev[0]  # step 0: the packaged model itself, on Tatoeba dev


@pytest.mark.slow
def test_the_registered_model_is_the_checkpoint_s_embedder_and_is_compared_on_tatoeba_dev(run):
    _, result = run
    assert result.model_uri.startswith(f"models:/{TRANSFORMER_MODEL}/")
    in_checkpoint = TransformerEmbedder.load(Path(result.checkpoint_path) / EMBEDDER_DIR, device="cpu")
    predicted = mlflow.pyfunc.load_model(result.model_uri).predict(pd.DataFrame({"text": TEXTS}))
    np.testing.assert_array_equal(predicted, in_checkpoint.encode(TEXTS))
    version = result.model_uri.rsplit("/", 1)[1]
    client = MlflowClient()
    assert client.get_model_version(TRANSFORMER_MODEL, version).tags[DEV_SET_TAG] == "tatoeba-es-dev"
    promote_champion(TRANSFORMER_MODEL, version=version)
    assert str(client.get_model_version_by_alias(TRANSFORMER_MODEL, CHAMPION).version) == version


# Slow (minutes): two runs of three epochs, the killed one and the uninterrupted one it must match. They train as
# transformer_e5.yaml does (AdamW, warm-up then linear decay, length-bucketed batches, the student's start as its
# teacher), so the resumed run must also find its place in the schedule and the bucketed stream.
@pytest.mark.slow
def test_a_killed_worker_resumes_from_its_checkpoint_and_ends_where_an_uninterrupted_run_does(ray_session, outputs):
    changes = {"optim": {"epochs": 3, "pairs_per_epoch": 64, "name": "adamw", "weight_decay": 0.01, "warmup_steps": 2,
                         "schedule": "linear", "length_buckets": True},
               "teacher": "start", "dev": "sick-trial", "evaluation": {"also": [], "bitext_retrieval": []}}
    interrupted, killed = train_with_a_killed_worker(recipe_for(small_config("transformer-killed", outputs,
                                                                             **changes)), after_checkpoints=1)
    assert killed, "the worker was never killed (training finished before a checkpoint was registered)"
    assert interrupted.history[-1]["resumes"] >= 1
    assert [h["epoch"] for h in interrupted.history] == [1, 2, 3]
    assert [h["pairs_seen"] for h in interrupted.history] == [64, 128, 192]

    reference = run_training(recipe_for(small_config("transformer-uninterrupted", outputs, **changes)))
    assert reference.history[-1]["resumes"] == 0
    np.testing.assert_allclose([h["loss"] for h in interrupted.history], [h["loss"] for h in reference.history],
                               rtol=1e-4)
    assert [h["lr"] for h in interrupted.history] == [h["lr"] for h in reference.history]
    assert interrupted.history[0]["lr"] > interrupted.history[-1]["lr"] >= 0  # decaying
    resumed = TransformerEmbedder.load(Path(interrupted.checkpoint_path) / EMBEDDER_DIR, device="cpu")
    straight = TransformerEmbedder.load(Path(reference.checkpoint_path) / EMBEDDER_DIR, device="cpu")
    np.testing.assert_allclose(resumed.encode(TEXTS), straight.encode(TEXTS), rtol=0, atol=1e-5)


# Slow (minutes): two workers each load the model; the layers' gradients are all-reduced over gloo and the word-piece
# table's exchanged as the rows each worker's batch touched.
@pytest.mark.slow
def test_two_cpu_workers_train_it_over_gloo(ray_session, outputs):
    config = small_config("transformer-two-workers", outputs,
                          optim={"epochs": 1, "pairs_per_epoch": 64, "accumulation_steps": 1},
                          scaling={"num_workers": 2, "cpus_per_worker": 0.5}, dev="sick-trial",
                          evaluation={"also": [], "bitext_retrieval": []}, tracking={"register_as": ""})
    result = run_training(recipe_for(config))
    assert result.history[-1]["workers"] == 2 and result.history[-1]["pairs_seen"] == 128
    assert np.isfinite(result.history[-1]["loss"]) and result.model_uri is None
