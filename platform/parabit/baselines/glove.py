"""Untrained GloVe encoders: the plain mean of GloVe 6B 50d vectors (the seed tables' GloVe column) and SIF, the
"simple but tough-to-beat" weighted average with the first common component removed (Arora, Liang & Ma 2017).

Both are parabit's own averaging encoder over GloVe's 400k words, untrained, so they tokenise, encode and export
exactly as a trained model does: a trained SIF-weighted model starts from the ``glove-sif`` baseline itself. SIF's
weights come from GloVe's frequency ranks (:mod:`parabit.text.frequency`) and its common component is fitted on
50,000 English sentences of the Tatoeba bitext (training-side text), never on an evaluation set.
"""

from __future__ import annotations

import numpy as np
import torch

from parabit.data.bitext import read_tatoeba
from parabit.data.errors import Quarantine
from parabit.embedder import SentenceEmbedder
from parabit.encoders.avg import AvgEncoder
from parabit.text.frequency import DEFAULT_A, sif_weights
from parabit.text.glove import GLOVE_DIM, load_glove
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary

COMPONENT_SENTENCES = 50_000
COMPONENT_SEED = 0


def glove_vocabulary() -> tuple[Vocabulary, torch.Tensor]:
    """GloVe's words as an English vocabulary, and the matching word table (unknown word and padding zero)."""
    words, vectors = load_glove()
    vocab = Vocabulary(f"en:{word}" for word in words)
    table = np.zeros((len(vocab), GLOVE_DIM), dtype=np.float32)
    ids = np.asarray([vocab.id(word, "en") for word in words])
    table[ids] = vectors
    return vocab, torch.from_numpy(table)


def training_side_sentences(count: int = COMPONENT_SENTENCES, seed: int = COMPONENT_SEED) -> list[str]:
    """A seeded sample of distinct English sentences of the Tatoeba en-es bitext."""
    distinct = list(dict.fromkeys(pair.en for pair in read_tatoeba(lang="es", quarantine=Quarantine())))
    order = np.random.default_rng(seed).permutation(len(distinct))[:count]
    return [distinct[i] for i in sorted(order)]


def glove_average(tokenizer: Tokenizer | None = None, *, sif: bool = False, a: float = DEFAULT_A,
                  components: int = 1) -> SentenceEmbedder:
    """The mean of GloVe vectors, or (``sif``) SIF: weights ``a/(a+p(w))`` and ``components`` common components
    removed, fitted on :func:`training_side_sentences`."""
    vocab, table = glove_vocabulary()
    components = components if sif else 0
    options = {"weighted": sif, "components": components} if sif else {}
    spec = {"encoder": "avg", "vocab_size": len(vocab), "dim": GLOVE_DIM, "options": options}
    extra = {"initial_weights": torch.from_numpy(sif_weights(vocab, a))} if sif else {}
    encoder = AvgEncoder(len(vocab), GLOVE_DIM, initial_vectors=table, **options, **extra)
    embedder = SentenceEmbedder(encoder.eval(), spec, vocab, tokenizer or Tokenizer(), "en")
    if components:
        ids, lengths = embedder.token_ids(training_side_sentences())
        with torch.no_grad():
            encoder.fit_components(encoder.pool(torch.from_numpy(ids), torch.from_numpy(lengths)))
    return embedder
