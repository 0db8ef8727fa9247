"""The pyfunc model is logged from code: saving writes no pickle, and loading it gives the embedder's vectors."""

from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import torch
import yaml

from parabit.embedder import SentenceEmbedder
from parabit.export.pyfunc import save_embedder_model
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary

SENTENCES = ["a man plays a guitar", "the cat sleeps", ""]


def test_saved_model_holds_no_pickle_and_predicts_like_the_embedder(tmp_path):
    torch.manual_seed(0)
    vocab = Vocabulary([f"en:{w}" for w in "a man plays guitar the cat sleeps".split()])
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": 8, "options": {}}
    embedder = SentenceEmbedder(SentenceEmbedder.build_encoder(spec, sparse=False), spec, vocab, Tokenizer("regexp"))

    folder = save_embedder_model(embedder, tmp_path / "model")

    assert not [p for p in Path(folder).rglob("*") if p.suffix in (".pkl", ".pickle", ".cloudpickle")]
    flavor = yaml.safe_load((Path(folder) / "MLmodel").read_text())["flavors"]["python_function"]
    assert flavor["model_code_path"].endswith("model_code.py") and "python_model" not in flavor
    predicted = mlflow.pyfunc.load_model(str(folder)).predict(pd.DataFrame({"text": SENTENCES}))
    np.testing.assert_allclose(predicted, embedder.encode(SENTENCES), rtol=1e-6, atol=1e-6)
