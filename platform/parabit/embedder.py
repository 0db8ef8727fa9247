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
LANGUAGE_SCORES_FILE = "language_scores.npy"


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
    """``encode(list[str]) -> np.ndarray [N, dim]`` for one language side of a trained model, or for several.

    ``spec`` is what rebuilds the encoder: ``{"encoder": name, "vocab_size": V, "dim": d, "options": {...}}``;
    ``unknown``: how words the vocabulary lacks are encoded (:class:`UnknownWords`).

    A model of one space for several languages (``langs``, e.g. ``("en", "es")``; ``lang``, the first, is the
    default) reads each sentence with the words of its language: given (``encode(..., lang=)``), or detected from
    its words, each scoring ``language_scores[id]`` (the log-probability of the word in its language's training
    text; a word a language lacks scores that language's unknown-word row), the language whose words score highest
    winning (ties: ``lang``). Detection costs one more lookup of the distinct words per language.
    """

    def __init__(self, encoder: SentenceEncoder, spec: dict, vocab: Vocabulary, tokenizer: Tokenizer,
                 lang: str = "en", max_tokens: int | None = None, unknown: UnknownWords = UnknownWords(),
                 langs: Sequence[str] | None = None, language_scores: np.ndarray | None = None):
        if unknown.rule == "own" and not getattr(encoder, "accepts_extra_rows", False):
            raise ValueError(f"unknown words with rows of their own need an encoder that takes rows beyond its table "
                             f"(the averaging encoder), not {type(encoder).__name__}")
        langs = tuple(langs or (lang,))
        if langs[0] != lang:
            raise ValueError(f"the embedder's language {lang!r} must be the first of its languages {list(langs)}")
        if len(langs) > 1 and (language_scores is None or len(language_scores) != len(vocab)):
            raise ValueError(f"an embedder of languages {list(langs)} detects them with one language score per "
                             f"vocabulary row ({len(vocab)})")
        if len(langs) > 1 and unknown.rule == "own":
            raise ValueError("unknown words with rows of their own are for one-language embedders")
        self.encoder = encoder
        self.spec = spec
        self.vocab = vocab
        self.tokenizer = tokenizer
        self.lang = lang
        self.max_tokens = max_tokens
        self.unknown = unknown
        self.langs = langs
        self.language_scores = None if language_scores is None else np.asarray(language_scores, dtype=np.float32)

    def with_unknown(self, unknown: UnknownWords) -> "SentenceEmbedder":
        """The same model with another rule for unknown words (the encoder is shared, not copied)."""
        return SentenceEmbedder(self.encoder, self.spec, self.vocab, self.tokenizer, self.lang, self.max_tokens,
                                unknown, self.langs, self.language_scores)

    def detect(self, sentences: Sequence[str]) -> list[str]:
        """The language each sentence is read in when none is given (always ``lang`` for a one-language model)."""
        sentences = list(sentences)
        if len(self.langs) == 1:
            return [self.lang] * len(sentences)
        chosen = self.vocab.texts_to_ids_detected(self.tokenizer, sentences, self.langs, self.language_scores,
                                                  self.max_tokens)[2]
        return [self.langs[i] for i in chosen]

    @staticmethod
    def build_encoder(spec: dict, **overrides) -> SentenceEncoder:
        options = {**spec.get("options", {}), **overrides}
        return build_encoder(spec["encoder"], spec["vocab_size"], spec["dim"], **options)

    def token_ids(self, sentences: Sequence[str], lang: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Padded ids and lengths, read in ``lang`` (default: ``lang``, or each sentence's detected language); a
        sentence with no tokens becomes the unknown word, so it still has a vector."""
        if lang is None and len(self.langs) > 1:
            return self.vocab.texts_to_ids_detected(self.tokenizer, sentences, self.langs, self.language_scores,
                                                    self.max_tokens)[:2]
        return self.vocab.texts_to_ids(self.tokenizer, sentences, lang or self.lang, self.max_tokens)

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 4096,
               lang: str | Sequence[str | None] | None = None) -> np.ndarray:
        """One vector per sentence. ``lang``: the language of every sentence, or one per sentence (None: detect);
        default: each sentence's detected language (a one-language model: its language)."""
        sentences = list(sentences)
        if not sentences:
            return np.zeros((0, self.encoder.output_dim), dtype=np.float32)
        if lang is not None and not isinstance(lang, str):
            return self._encode_by_language(sentences, list(lang), batch_size)
        if lang is not None and lang not in self.langs:
            raise ValueError(f"this model reads {list(self.langs)}, not {lang!r}")
        # Each distinct sentence is tokenised and encoded once (evaluation sets repeat sentences across pairs).
        where, distinct = pd.factorize(np.asarray(sentences, dtype=object), use_na_sentinel=False)
        if len(distinct) < len(sentences):
            return self._encode_distinct(list(distinct), batch_size, lang)[where]
        return self._encode_distinct(sentences, batch_size, lang)

    def _encode_by_language(self, sentences: list[str], langs: list[str | None], batch_size: int) -> np.ndarray:
        """:meth:`encode` with a language (or None) per sentence: each group of one language in one call."""
        if len(langs) != len(sentences):
            raise ValueError(f"{len(langs)} languages for {len(sentences)} sentences; give one per sentence")
        out = np.empty((len(sentences), self.encoder.output_dim), dtype=np.float32)
        for lang in dict.fromkeys(langs):
            rows = [i for i, value in enumerate(langs) if value == lang]
            out[rows] = self.encode([sentences[i] for i in rows], batch_size, lang)
        return out

    def _encode_distinct(self, sentences: list[str], batch_size: int, lang: str | None = None) -> np.ndarray:
        extra = {}
        if self.unknown.rule == "own":
            ids, lengths, unknown = self.vocab.texts_to_ids_own_unknown(self.tokenizer, sentences, self.lang,
                                                                        self.max_tokens)
            extra["extra_rows"] = torch.from_numpy(self.unknown.rows(unknown, self.lang, self.spec["dim"]))
        else:
            ids, lengths = self.token_ids(sentences, lang)
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
        """Write ``embedder.json``, ``vocab.json`` and ``weights.pt`` (a plain state dict) into ``directory``, and
        ``language_scores.npy`` for a model of several languages."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.vocab.save(directory / "vocab.json")
        state = {k: v.detach().cpu() for k, v in self.encoder.state_dict().items()}
        torch.save(state, directory / "weights.pt")
        meta = {"format": EMBEDDER_FORMAT, "spec": self.spec, "tokenizer": self.tokenizer.to_dict(),
                "lang": self.lang, "max_tokens": self.max_tokens, "unknown": asdict(self.unknown)}
        if len(self.langs) > 1:
            meta["langs"] = list(self.langs)
            np.save(directory / LANGUAGE_SCORES_FILE, self.language_scores)
        (directory / "embedder.json").write_text(json.dumps(meta, indent=1))
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
        scores = directory / LANGUAGE_SCORES_FILE
        return cls(encoder, meta["spec"], Vocabulary.load(directory / "vocab.json"),
                   Tokenizer.from_dict(meta["tokenizer"]), meta["lang"], meta["max_tokens"],
                   UnknownWords(**meta.get("unknown", {})),  # embedders saved before the rule: shared
                   meta.get("langs"), np.load(scores, allow_pickle=False) if scores.is_file() else None)
