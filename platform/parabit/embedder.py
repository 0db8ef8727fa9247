"""A trained encoder packaged with its vocabulary and tokenizer: text in, one vector per sentence out.

The same class serves the dev evaluation inside training, the final evaluation, and the exported MLflow pyfunc
model, so all three tokenise, look up and batch identically.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import torch

from parabit.encoders import SentenceEncoder, build_encoder
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import Vocabulary

EMBEDDER_FORMAT = "parabit-embedder-1"


@dataclass(frozen=True)
class UnknownWords:
    """How a word the vocabulary lacks is encoded. ``shared``: the language's one unknown-word row. ``own``: a row
    of its own, what an untrained row of a randomly initialised table is (Elgohary & Carpuat's W has a column for
    every word, trained or not): N(0, ``std``²), drawn by a generator seeded from ``seed`` and the word, so a word
    gets the same row in every call and process. ``own`` needs an encoder that takes rows beyond its table (the
    averaging encoder)."""

    rule: Literal["shared", "own"] = "shared"
    seed: int = 0
    std: float = 1.0

    def rows(self, words: Sequence[str], lang: str, dim: int) -> np.ndarray:
        """``[len(words), dim]`` float32: each word's own row."""
        rows = np.empty((len(words), dim), dtype=np.float32)
        for index, word in enumerate(words):
            key = hashlib.blake2b(f"{self.seed}\0{lang}\0{word}".encode(), digest_size=8).digest()
            rows[index] = np.random.default_rng(int.from_bytes(key, "little")).standard_normal(dim) * self.std
        return rows


class SentenceEmbedder:
    """``encode(list[str]) -> np.ndarray [N, dim]`` for one language side of a trained model.

    ``spec`` is what rebuilds the encoder: ``{"encoder": name, "vocab_size": V, "dim": d, "options": {...}}``;
    ``unknown``: how words the vocabulary lacks are encoded (:class:`UnknownWords`).
    """

    def __init__(self, encoder: SentenceEncoder, spec: dict, vocab: Vocabulary, tokenizer: Tokenizer,
                 lang: str = "en", max_tokens: int | None = None, unknown: UnknownWords = UnknownWords()):
        if unknown.rule == "own" and not getattr(encoder, "accepts_extra_rows", False):
            raise ValueError(f"unknown words with rows of their own need an encoder that takes rows beyond its table "
                             f"(the averaging encoder), not {type(encoder).__name__}")
        self.encoder = encoder
        self.spec = spec
        self.vocab = vocab
        self.tokenizer = tokenizer
        self.lang = lang
        self.max_tokens = max_tokens
        self.unknown = unknown

    def with_unknown(self, unknown: UnknownWords) -> "SentenceEmbedder":
        """The same model with another rule for unknown words (the encoder is shared, not copied)."""
        return SentenceEmbedder(self.encoder, self.spec, self.vocab, self.tokenizer, self.lang, self.max_tokens,
                                unknown)

    @staticmethod
    def build_encoder(spec: dict, **overrides) -> SentenceEncoder:
        options = {**spec.get("options", {}), **overrides}
        return build_encoder(spec["encoder"], spec["vocab_size"], spec["dim"], **options)

    def token_ids(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Padded ids and lengths; a sentence with no tokens becomes the unknown word, so it still has a vector."""
        return self.vocab.texts_to_ids(self.tokenizer, sentences, self.lang, self.max_tokens)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 4096) -> np.ndarray:
        sentences = list(sentences)
        if not sentences:
            return np.zeros((0, self.encoder.output_dim), dtype=np.float32)
        # Each distinct sentence is tokenised and encoded once (evaluation sets repeat sentences across pairs).
        where, distinct = pd.factorize(np.asarray(sentences, dtype=object), use_na_sentinel=False)
        if len(distinct) < len(sentences):
            return self._encode_distinct(list(distinct), batch_size)[where]
        return self._encode_distinct(sentences, batch_size)

    def _encode_distinct(self, sentences: list[str], batch_size: int) -> np.ndarray:
        extra = {}
        if self.unknown.rule == "own":
            ids, lengths, unknown = self.vocab.texts_to_ids_own_unknown(self.tokenizer, sentences, self.lang,
                                                                        self.max_tokens)
            extra["extra_rows"] = torch.from_numpy(self.unknown.rows(unknown, self.lang, self.spec["dim"]))
        else:
            ids, lengths = self.token_ids(sentences)
        was_training = self.encoder.training
        self.encoder.eval()
        device = next(self.encoder.parameters()).device
        extra = {name: rows.to(device) for name, rows in extra.items()}
        # Sorting by length keeps padding (and recurrent work) per batch small.
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(sentences), self.encoder.output_dim), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = int(lengths[rows].max())
            batch_ids = torch.from_numpy(ids[rows, :width]).to(device)
            batch_lengths = torch.from_numpy(lengths[rows]).to(device)
            out[rows] = self.encoder(batch_ids, batch_lengths, **extra).float().cpu().numpy()
        self.encoder.train(was_training)
        return out

    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        return self.encode(sentences)

    # -- persistence -----------------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write ``embedder.json``, ``vocab.json`` and ``weights.pt`` (a plain state dict) into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.vocab.save(directory / "vocab.json")
        state = {k: v.detach().cpu() for k, v in self.encoder.state_dict().items()}
        torch.save(state, directory / "weights.pt")
        (directory / "embedder.json").write_text(json.dumps({
            "format": EMBEDDER_FORMAT, "spec": self.spec, "tokenizer": self.tokenizer.to_dict(),
            "lang": self.lang, "max_tokens": self.max_tokens, "unknown": asdict(self.unknown),
        }, indent=1))
        return directory

    @classmethod
    def load(cls, directory: str | Path, device: str = "cpu") -> "SentenceEmbedder":
        directory = Path(directory)
        meta = json.loads((directory / "embedder.json").read_text())
        if meta.get("format") != EMBEDDER_FORMAT:
            raise ValueError(f"{directory}: not a parabit embedder (format {meta.get('format')!r})")
        encoder = cls.build_encoder(meta["spec"], sparse=False)
        encoder.load_state_dict(torch.load(directory / "weights.pt", map_location=device, weights_only=True))
        encoder.to(device).eval()
        return cls(encoder, meta["spec"], Vocabulary.load(directory / "vocab.json"),
                   Tokenizer.from_dict(meta["tokenizer"]), meta["lang"], meta["max_tokens"],
                   UnknownWords(**meta.get("unknown", {})))  # embedders saved before the rule: shared
