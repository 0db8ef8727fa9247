"""Every encoder family, with whatever it carries (word weights, removed components, recurrent and attention weights),
round-trips through the saved pyfunc model: the vectors ``mlflow.pyfunc.load_model(...).predict`` returns are the
in-memory encoder's for the same texts; input the model cannot embed is refused, never guessed at."""

from __future__ import annotations

import mlflow
import numpy as np
import pandas as pd
import pytest
import torch

from parabit.embedder import SentenceEmbedder, UnknownWords
from parabit.encoders import ENCODERS
from parabit.export.pyfunc import save_embedder_model
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary

WORDS = "a man plays the guitar cat sleeps on red sofa two dogs run beach".split()
SENTENCES = ["A man plays the guitar.", "The cat sleeps on the red sofa.", "Two dogs run on the beach.",
             "unknownword here", ""]
# Each family with options that exercise what its state holds. The tolerance (1e-6) is float32 rounding: a weight
# left out of the saved state, a spec option lost, or a different tokenizer changes vectors by far more.
FAMILIES = {
    "avg": {},
    "avg-sif": {"weighted": True, "components": 2},
    "avg-learned-weights": {"weighted": True, "learn_weights": True, "components": 1},
    "avg-own-unknown": {},
    "avg-sif-own-unknown": {"weighted": True, "components": 2},
    "gran": {},
    "lstm": {"hidden_size": 6},
    "bilstm": {"hidden_size": 6},
    "attentive_lstm": {"hidden_size": 6, "bidirectional": True},
    "gru": {"hidden_size": 6},
    "attentive_gru": {"hidden_size": 6},
    "cnn": {"filters": 6},
    "linear_bow": {"output_size": 6},
}


# Families whose unknown words get rows of their own (Elgohary & Carpuat's cells) rather than the shared one.
OWN_UNKNOWN = UnknownWords("own", seed=3, std=0.5)


def _embedder(family: str) -> SentenceEmbedder:
    name = family.split("-")[0]
    torch.manual_seed(7)
    vocab = Vocabulary([f"en:{word}" for word in WORDS])
    spec = {"encoder": name, "vocab_size": len(vocab), "dim": 8, "options": FAMILIES[family]}
    extra = {"initial_weights": torch.rand(len(vocab)) + 0.5} if FAMILIES[family].get("weighted") else {}
    encoder = SentenceEmbedder.build_encoder(spec, **extra)
    embedder = SentenceEmbedder(encoder, spec, vocab, Tokenizer(),
                                unknown=OWN_UNKNOWN if family.endswith("own-unknown") else UnknownWords())
    if FAMILIES[family].get("components"):
        ids, lengths = embedder.token_ids(SENTENCES[:3])
        encoder.fit_components(encoder.pool(torch.from_numpy(ids), torch.from_numpy(lengths)).detach())
        assert float(encoder.components.abs().sum()) > 0
    return embedder


# The transformer brings its own tokenizer and checkpoint folder (no word table): its pyfunc round trip is
# tests/export/test_transformer_export.py.
OWN_TEST = {"transformer"}


def test_every_registered_encoder_family_is_covered():
    assert {family.split("-")[0] for family in FAMILIES} == set(ENCODERS) - OWN_TEST
    assert OWN_TEST <= set(ENCODERS)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_pyfunc_model_gives_the_in_memory_vectors(family, tmp_path):
    embedder = _embedder(family)
    expected = embedder.encode(SENTENCES)
    model = mlflow.pyfunc.load_model(str(save_embedder_model(embedder, tmp_path / "model")))
    predicted = model.predict(pd.DataFrame({"text": SENTENCES}))
    assert predicted.shape == expected.shape and predicted.dtype == np.float32
    np.testing.assert_allclose(predicted, expected, rtol=1e-6, atol=1e-6)
    assert not np.allclose(predicted[0], predicted[1])  # not a constant encoder


def test_input_the_model_cannot_embed_is_refused(tmp_path):
    model = mlflow.pyfunc.load_model(str(save_embedder_model(_embedder("avg"), tmp_path / "model")))
    with pytest.raises(Exception, match=r"input needs a 'text' column of sentences; it has \['sentence'\]"):
        model.predict(pd.DataFrame({"sentence": ["a man"]}))
    for missing in (None, float("nan")):
        with pytest.raises(Exception, match=r"the 'text' column must hold strings; row\(s\) \[1\] hold"):
            model.predict(pd.DataFrame({"text": ["a man", missing, "the cat"]}))
    assert model.predict(pd.DataFrame({"text": ["nan", "none"]})).shape == (2, 8)  # the words themselves are fine
