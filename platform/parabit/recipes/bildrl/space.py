"""The target space of BilDRL: a bilingual word table learned by parabit (AVG + J_bi on bitext).

Chen et al. map definitions onto 50-d BilBOWA vectors; here the space is the word table of a parabit training run
(``jobs/configs/bildrl/embeddings_*.yaml``), read from its last Ray Train checkpoint. Words are the vocabulary's
language-namespaced rows, so the English and the Spanish "once" are different points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from parabit.embedder import SentenceEmbedder
from parabit.evaluation.metrics import unit_rows
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import UNK_WORD, Vocabulary

EMBEDDER_DIR = "embedder"


@dataclass
class BilingualSpace:
    """A word table ``vectors [V, dim]`` indexed by ``vocab`` ids (row 0 is padding), and the tokenizer its words
    came from (definitions are tokenised the same way)."""

    vocab: Vocabulary
    vectors: np.ndarray
    tokenizer: Tokenizer = field(default_factory=Tokenizer)

    @classmethod
    def from_embedder(cls, embedder: SentenceEmbedder) -> "BilingualSpace":
        return cls(embedder.vocab, embedder.encoder.embedding.weight.detach().cpu().numpy().astype(np.float32),
                   embedder.tokenizer)

    @classmethod
    def load(cls, path: str | Path) -> "BilingualSpace":
        """From an embedder folder, a checkpoint holding one, or a run folder (its newest checkpoint is used)."""
        return cls.from_embedder(SentenceEmbedder.load(find_embedder(Path(path))))

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def words(self, lang: str) -> dict[str, int]:
        """``word -> id`` for every real word of ``lang`` (the unknown-word row left out)."""
        return {word: index for index, word in self.vocab.words(lang) if word != UNK_WORD}

    def ids(self, words: list[str], lang: str) -> np.ndarray:
        """Vocabulary ids of ``words``; raises KeyError naming the first word not in the space."""
        table = self.words(lang)
        missing = [w for w in words if w not in table]
        if missing:
            raise KeyError(f"{len(missing)} {lang} word(s) are not in the space, e.g. {missing[0]!r}")
        return np.asarray([table[w] for w in words], dtype=np.int64)

    def language_range(self, lang: str) -> tuple[int, int]:
        """``[low, high)``: the contiguous ids of ``lang``'s rows (unknown word included)."""
        ids = [index for index, _ in self.vocab.words(lang)]
        return min(ids), max(ids) + 1

    def token_ids(self, texts: list[str], lang: str, max_tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """Padded ``lang`` ids ``[N, max_tokens]`` and lengths of ``texts``; a text without tokens becomes the
        unknown word, so that every length is at least 1."""
        ids, lengths = self.vocab.texts_to_ids(self.tokenizer, texts, lang, max_tokens)
        return np.pad(ids, ((0, 0), (0, max_tokens - ids.shape[1]))), lengths

    def average(self, texts: list[str], lang: str, max_tokens: int = 15) -> np.ndarray:
        """``[N, dim]``: the mean word vector of each text's first ``max_tokens`` tokens (an untrained baseline)."""
        ids, lengths = self.token_ids(texts, lang, max_tokens)
        return self.vectors[ids].sum(axis=1) / lengths[:, None]

    def nearest(self, words: list[str], lang: str, k: int, among: list[str] | None = None) -> list[list[str]]:
        """The ``k`` nearest ``lang`` words (cosine) of each of ``words``, itself excluded; ``among`` restricts
        the candidates."""
        table = self.words(lang)
        candidates = list(among) if among is not None else list(table)
        matrix = unit_rows(self.vectors[[table[w] for w in candidates]])
        queries = unit_rows(self.vectors[[table[w] for w in words]])
        result = []
        for start in range(0, len(words), 1024):
            scores = queries[start:start + 1024] @ matrix.T
            top = np.argsort(-scores, axis=1)[:, :k + 1]
            for word, row in zip(words[start:start + 1024], top):
                result.append([candidates[j] for j in row if candidates[j] != word][:k])
        return result


def find_embedder(path: Path) -> Path:
    """The embedder folder at or under ``path`` (a run folder's newest ``checkpoint_*`` wins)."""
    if (path / "embedder.json").is_file():
        return path
    if (path / EMBEDDER_DIR / "embedder.json").is_file():
        return path / EMBEDDER_DIR
    checkpoints = sorted(path.glob("checkpoint_*"), key=lambda p: p.stat().st_mtime)
    for checkpoint in reversed(checkpoints):
        if (checkpoint / EMBEDDER_DIR / "embedder.json").is_file():
            return checkpoint / EMBEDDER_DIR
    raise FileNotFoundError(f"{path}: no parabit embedder here (expected embedder.json, {EMBEDDER_DIR}/ or a "
                            "checkpoint_* folder of a training run); train the space first, e.g. "
                            "python jobs/train.py --config jobs/configs/bildrl/embeddings_es.yaml")
