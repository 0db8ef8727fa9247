"""Recipe ``bilingual`` end to end on a small real slice: one Ray Train run over a real English averaging model (the
GloVe-SIF baseline) trains Spanish rows on 3,000 Tatoeba pairs, registers ``parabit-encoder-bilingual``, and leaves
every English row, weight and component exactly the base model's."""

from __future__ import annotations

from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from mlflow.tracking import MlflowClient

from parabit.data.heldout import HELDOUT_REASON, HeldoutSets
from parabit.data.sts import read_sts_year
from parabit.embedder import SentenceEmbedder
from parabit.recipes import recipe_for
from parabit.recipes.bilingual.config import BILINGUAL_MODEL, BilingualConfig
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary
from parabit.tracking.registry import CHAMPION, DEV_SET_TAG, promote_champion
from parabit.training import EMBEDDER_DIR
from parabit.training.run import run_training

from ...bilingual_support import english_rows, english_weights, glove_sif_base, small_config


@pytest.fixture(scope="module")
def base(outputs) -> Path:
    return glove_sif_base(outputs / "glove-sif-base")


@pytest.fixture(scope="module")
def run(ray_session, base, outputs):
    config = small_config("bilingual-slice", base, outputs,
                          evaluation={"also": ["untrained"], "sts_years": [2016]})
    return config, run_training(recipe_for(config))


@pytest.fixture(scope="module")
def trained(run) -> SentenceEmbedder:
    return SentenceEmbedder.load(Path(run[1].checkpoint_path) / EMBEDDER_DIR)


def test_the_run_registers_the_bilingual_model_and_beats_its_untrained_start(run):
    config, result = run
    assert result.model_uri.startswith(f"models:/{BILINGUAL_MODEL}/")
    run_data = MlflowClient().get_run(result.mlflow_run_id).data
    untrained = run_data.metrics["untrained/tatoeba-es/mean/accuracy"]
    trained = result.report.value("tatoeba-es", "mean", "accuracy")
    assert trained == result.final_score
    assert trained > untrained + 0.03, (untrained, trained)  # Spanish rows learned from the pairs, on unseen pairs
    dev = {m.step: m.value for m in MlflowClient().get_metric_history(result.mlflow_run_id, "dev_score")}
    assert dev[result.selected["epoch"]] > dev[0] + 0.03, dev  # step 0: the untrained model on Tatoeba dev


def test_english_rows_weights_components_and_scores_are_the_base_models(run, trained, base):
    english = SentenceEmbedder.load(base)
    ours, theirs = english_rows(trained), english_rows(english)
    assert ours.keys() == theirs.keys() and len(ours) > 400_000
    assert all(np.array_equal(ours[word], theirs[word]) for word in theirs)
    assert english_weights(trained) == english_weights(english)
    assert np.array_equal(trained.encoder.components.numpy(), english.encoder.components.numpy())
    sentences = [s for subset in read_sts_year(2016, "test") for p in subset.pairs for s in (p.sentence_a, p.sentence_b)]
    assert np.array_equal(trained.encode(sentences, lang="en"), english.encode(sentences))
    # Without a language given, each sentence is read in the language its words score higher in: nearly all English.
    read_english = np.asarray(trained.detect(sentences)) == "en"
    assert read_english.mean() >= 0.99, read_english.mean()
    assert np.array_equal(trained.encode(sentences)[read_english], english.encode(sentences)[read_english])


def test_the_registered_model_returns_the_in_memory_vectors_in_either_language(run, trained):
    model = mlflow.pyfunc.load_model(run[1].model_uri)
    pairs = HeldoutSets.load().tatoeba_test[:200]
    texts = [p.en for p in pairs] + [p.foreign for p in pairs]
    detected = model.predict(pd.DataFrame({"text": texts}))
    assert np.array_equal(detected, trained.encode(texts))
    told = model.predict(pd.DataFrame({"text": texts, "lang": ["en"] * 200 + [None] * 200}))
    assert np.array_equal(told, detected)
    as_spanish = model.predict(pd.DataFrame({"text": texts, "lang": ["es"] * 400}))
    assert np.array_equal(as_spanish, trained.encode(texts, lang="es"))
    assert not np.allclose(as_spanish[:200], detected[:200])  # the column is read, not dropped by the signature
    with pytest.raises(Exception, match="reads \\['en', 'es'\\]"):
        model.predict(pd.DataFrame({"text": texts[:2], "lang": ["fr", "en"]}))


def test_each_language_is_told_apart(run):
    report = run[1].report
    for subset in ("tatoeba-en", "tatoeba-es", "sts-sick-en"):
        assert report.value("language-id", subset, "accuracy") >= 0.99, subset


def test_the_prepared_spanish_holds_no_held_out_sentence(run):
    config = run[0]
    prepared = recipe_for(config).prepare()
    assert prepared.stats["rejected"][HELDOUT_REASON] == 2000
    table = pq.read_table(prepared.pairs_path).to_pydict()
    spanish = {tuple(prepared.vocab.key(i).split(":", 1)[1] for i in row[:n])
               for row, n in zip(table["ids_a"], table["len_a"])}
    tokenizer = Tokenizer.from_dict(prepared.stats["tokenizer"])
    heldout = HeldoutSets.load()
    held = {tuple(tokenizer(p.foreign)) for p in heldout.tatoeba_test + heldout.tatoeba_dev}
    assert len(spanish) > 2500 and not spanish & held
    assert sorted(table["row"]) == list(range(len(table["row"])))  # every pair has its English target


def test_promotion_compares_bilingual_versions_on_tatoeba_dev(run):
    name = BILINGUAL_MODEL
    version = run[1].model_uri.rsplit("/", 1)[1]
    client = MlflowClient()
    assert client.get_model_version(name, version).tags[DEV_SET_TAG] == "tatoeba-es-dev"
    promote_champion(name, version=version)
    assert str(client.get_model_version_by_alias(name, CHAMPION).version) == version


def test_the_aligned_start_places_spanish_words_by_their_ibm1_translations(base, outputs):
    config = small_config("bilingual-aligned", base, outputs, model={"foreign_init": "aligned"},
                          data={"max_pairs": 20_000})
    embedder = recipe_for(config).untrained_embedder()
    assert recipe_for(config).prepare().stats["foreign_rows_placed"] > 5000
    table = embedder.encoder.embedding.weight.detach().numpy()
    english = [(index, word) for index, word in embedder.vocab.words("en")][:20_000]  # GloVe's most frequent
    candidates = table[[index for index, _ in english]]
    candidates = candidates / np.maximum(np.linalg.norm(candidates, axis=1, keepdims=True), 1e-9)
    expected = {"perro": "dog", "gato": "cat", "casa": "house", "libro": "book", "agua": "water", "coche": "car",
                "dinero": "money", "tiempo": "time", "trabajo": "work", "padre": "father"}
    nearest = {}
    for spanish in expected:
        row = table[embedder.vocab.id(spanish, "es")]
        nearest[spanish] = english[int(np.argmax(candidates @ row))][1]
    assert sum(nearest[w] == expected[w] for w in expected) >= 7, nearest


def test_a_sentence_is_read_in_the_language_whose_words_score_higher():
    vocab = Vocabulary(["en:the", "en:cat", "es:el", "es:gato"])
    scores = np.zeros(len(vocab), dtype=np.float32)
    scores[[vocab.id("the", "en"), vocab.id("cat", "en")]] = -2.0
    scores[[vocab.id("el", "es"), vocab.id("gato", "es")]] = -2.0
    scores[[vocab.id("<unk>", "en"), vocab.id("<unk>", "es")]] = -10.0
    ids, lengths, chosen = vocab.texts_to_ids_detected(Tokenizer(), ["the cat", "el gato", "el cat", "", "xyz"],
                                                       ("en", "es"), scores)
    assert chosen.tolist() == [0, 1, 0, 0, 0]  # a tie ("el cat"), no word, no known word: the first language
    assert ids[1, :2].tolist() == [vocab.id("el", "es"), vocab.id("gato", "es")]
    assert ids[3, 0] == vocab.id("<unk>", "en") and lengths.tolist() == [2, 2, 2, 1, 1]


def test_a_bilingual_config_must_train_something_and_name_its_base():
    with pytest.raises(ValueError, match="nothing would train"):
        BilingualConfig(model={"base": "x"}, objective={"target": 0})
    with pytest.raises(ValueError, match="model"):
        BilingualConfig()
    with pytest.raises(ValueError, match="unknown pair objective"):
        BilingualConfig(model={"base": "x"}, objective={"pair": "jpq"})


def test_a_missing_base_model_fails_before_any_work(outputs):
    config = BilingualConfig(name="no-base", model={"base": str(outputs / "no-such-model")})
    with pytest.raises(FileNotFoundError, match="no parabit embedder here"):
        recipe_for(config).check_inputs()
