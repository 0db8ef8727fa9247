"""A vocabulary with language namespaces, saved with every model.

Entries are keyed ``"<lang>:<word>"``: the English "once" and the Spanish "once" (eleven) are different
rows of the embedding table. Id 0 is padding; each namespace has its own unknown-word entry.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from parabit.text.tokenize import Tokenizer

PAD_TOKEN = "<pad>"
UNK_WORD = "<unk>"
PAD_ID = 0


def _key(lang: str, word: str) -> str:
    return f"{lang}:{word}"


class Vocabulary:
    """Maps (language, word) to integer ids. Build with :meth:`build`, persist with :meth:`save`/:meth:`load`."""

    def __init__(self, keys: Iterable[str]):
        self._keys: list[str] = [PAD_TOKEN]
        self._index: dict[str, int] = {PAD_TOKEN: PAD_ID}
        for key in keys:
            if key == PAD_TOKEN or key in self._index:
                continue
            if ":" not in key:
                raise ValueError(f"vocabulary key {key!r} has no language namespace ('<lang>:<word>')")
            self._index[key] = len(self._keys)
            self._keys.append(key)
        self.languages = tuple(sorted({key.split(":", 1)[0] for key in self._keys[1:]}))
        for lang in self.languages:
            if _key(lang, UNK_WORD) not in self._index:
                self._index[_key(lang, UNK_WORD)] = len(self._keys)
                self._keys.append(_key(lang, UNK_WORD))
        self._by_language: dict[str, dict[str, int]] = {}  # word -> id per language, built on first encode
        self._word_tables: dict[str, tuple[pd.Index, np.ndarray]] = {}  # the same as (words, ids), on first encode_flat

    @classmethod
    def build(
        cls,
        counts: Mapping[str, Counter],
        *,
        min_count: int = 1,
        max_words_per_language: int | None = None,
    ) -> "Vocabulary":
        """Build from per-language token counts, most frequent first (ties broken alphabetically).

        ``counts`` maps a language code to a Counter of its tokens, e.g. ``{"en": Counter(...), "es": ...}``.
        """
        keys = []
        for lang in sorted(counts):
            ranked = sorted(
                (item for item in counts[lang].items() if item[1] >= min_count),
                key=lambda item: (-item[1], item[0]),
            )
            keys.append(_key(lang, UNK_WORD))
            keys.extend(_key(lang, word) for word, _ in ranked[:max_words_per_language])
        return cls(keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def id(self, word: str, lang: str) -> int:
        """The id of ``word`` in ``lang``, or that language's unknown-word id."""
        found = self._index.get(_key(lang, word))
        if found is not None:
            return found
        unk = self._index.get(_key(lang, UNK_WORD))
        if unk is None:
            raise KeyError(f"language {lang!r} is not in this vocabulary (it has {self.languages})")
        return unk

    def key(self, index: int) -> str:
        return self._keys[index]

    def words(self, lang: str) -> list[tuple[int, str]]:
        """``(id, word)`` for every entry of one language, unknown-word entry included."""
        prefix = f"{lang}:"
        return [(i, k[len(prefix):]) for i, k in enumerate(self._keys) if k.startswith(prefix)]

    def _language_index(self, lang: str) -> dict[str, int]:
        """``word -> id`` for one language, so encoding a token is one dict lookup (no key string to build)."""
        if not self._by_language:  # one pass over the keys builds every language's index
            for i, key in enumerate(self._keys[1:], start=1):
                namespace, word = key.split(":", 1)
                self._by_language.setdefault(namespace, {})[word] = i
        index = self._by_language.get(lang)
        if index is None:
            raise KeyError(f"language {lang!r} is not in this vocabulary (it has {self.languages})")
        return index

    def _word_table(self, lang: str) -> tuple[pd.Index, np.ndarray]:
        """One language's words as a pandas index and their ids, to look many tokens up in one vectorised pass."""
        if lang not in self._word_tables:
            index = self._language_index(lang)
            self._word_tables[lang] = (pd.Index(list(index), dtype=object),
                                       np.fromiter(index.values(), dtype=np.int64, count=len(index)))
        return self._word_tables[lang]

    def encode(self, tokens: Iterable[str], lang: str) -> list[int]:
        index = self._language_index(lang)
        unk = index[UNK_WORD]
        return [index.get(token, unk) for token in tokens]

    def encode_all(self, sentences: Iterable[Iterable[str]], lang: str) -> list[list[int]]:
        """:meth:`encode` for many token lists."""
        index = self._language_index(lang)
        unk = index[UNK_WORD]
        return [[index.get(token, unk) for token in tokens] for tokens in sentences]

    def encode_flat(self, tokens: np.ndarray, lang: str) -> np.ndarray:
        """:meth:`encode` for a flat array of tokens (:meth:`Tokenizer.tokenize_flat`), as int64 ids: each distinct
        token is looked up once (texts repeat their words; a dict lookup per token was the largest part of encoding's
        time in a profile of the STS sentences), by one hash-table pass rather than a dict lookup each."""
        return self._encode_flat(tokens, lang, own_unknown=False)[0]

    def _encode_flat(self, tokens: np.ndarray, lang: str, *, own_unknown: bool) -> tuple[np.ndarray, list[str]]:
        """:meth:`encode_flat`; with ``own_unknown``, the k-th distinct unknown token (in order of appearance) gets
        the id ``len(self) + k`` instead of the shared unknown word, and the unknown tokens are returned too."""
        codes, distinct = pd.factorize(tokens)
        words, word_ids = self._word_table(lang)
        found = words.get_indexer(distinct)
        unknown: list[str] = []
        if own_unknown:
            missing = found < 0
            unknown = list(distinct[missing])
            fallback = np.zeros(len(distinct), dtype=np.int64)
            fallback[missing] = len(self) + np.arange(len(unknown))
        else:
            fallback = self._language_index(lang)[UNK_WORD]
        ids = np.where(found >= 0, word_ids[found], fallback)
        return (ids[codes] if len(codes) else np.zeros(0, dtype=np.int64)), unknown

    def texts_to_ids(self, tokenizer: Tokenizer, texts: Sequence[str], lang: str,
                     max_length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Padded ids ``[N, T]`` and lengths ``[N]`` of ``texts`` tokenised by ``tokenizer``; a text without tokens
        becomes the unknown word, so every length is at least 1; ``max_length`` keeps each text's first tokens."""
        ids, lengths, _ = self.texts_to_ids_own_unknown(tokenizer, texts, lang, max_length, own_unknown=False)
        return ids, lengths

    def texts_to_ids_own_unknown(self, tokenizer: Tokenizer, texts: Sequence[str], lang: str,
                                 max_length: int | None = None, *,
                                 own_unknown: bool = True) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """:meth:`texts_to_ids` where each distinct unknown token has an id of its own past the vocabulary
        (``len(self) + k`` for ``unknown[k]``, the third value returned) rather than the shared unknown word; a
        text without tokens is still the shared unknown word."""
        pieces, positions, lengths = tokenizer.tokenize_indexed(texts)
        piece_ids, unknown = self._encode_flat(pieces, lang, own_unknown=own_unknown)
        ids = piece_ids[positions]
        empty = np.flatnonzero(lengths == 0)
        if len(empty):
            starts = np.cumsum(lengths) - lengths
            ids = np.insert(ids, starts[empty], self.id(UNK_WORD, lang))
            lengths = np.where(lengths == 0, 1, lengths)
        return (*pad_flat(ids, lengths, max_length), unknown)

    def texts_to_ids_detected(self, tokenizer: Tokenizer, texts: Sequence[str], langs: Sequence[str],
                              scores: np.ndarray,
                              max_length: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`texts_to_ids` with each text's language chosen among ``langs``: the one under which its tokens
        score highest, a token scoring ``scores[id]`` under each language (e.g. the log-probability of the word in that
        language's text; a word a language lacks scores that language's unknown-word row). Ties go to the first of
        ``langs``. Returns ids, lengths and, per text, the index in ``langs`` of the language read.

        The texts are tokenised once; each language costs one more vectorised lookup of the distinct tokens."""
        pieces, positions, lengths = tokenizer.tokenize_indexed(texts)
        codes, distinct = pd.factorize(pieces)
        token_codes = codes[positions] if len(positions) else np.zeros(0, dtype=np.int64)
        owner = np.repeat(np.arange(len(texts)), lengths)  # the text of each token
        ids_by_lang, totals = [], []
        for lang in langs:
            words, word_ids = self._word_table(lang)
            found = words.get_indexer(distinct)
            ids = np.where(found >= 0, word_ids[found], self._language_index(lang)[UNK_WORD])
            ids_by_lang.append(ids)
            totals.append(np.bincount(owner, weights=scores[ids][token_codes], minlength=len(texts)))
        chosen = np.argmax(np.stack(totals), axis=0) if len(texts) else np.zeros(0, dtype=np.int64)
        ids = np.stack(ids_by_lang)[chosen[owner], token_codes] if len(token_codes) else np.zeros(0, np.int64)
        empty = np.flatnonzero(lengths == 0)
        if len(empty):  # a text without tokens is the unknown word of its language (the first: no token voted)
            starts = np.cumsum(lengths) - lengths
            ids = np.insert(ids, starts[empty], self.id(UNK_WORD, langs[0]))
            lengths = np.where(lengths == 0, 1, lengths)
        return (*pad_flat(ids, lengths, max_length), chosen)

    def encode_batch(self, sentences: Iterable[Iterable[str]], lang: str) -> tuple[np.ndarray, np.ndarray]:
        """Token lists to a padded id matrix ``[B, T]`` (int64) and lengths ``[B]``."""
        return pad_batch(self.encode_all(sentences, lang))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"format": "parabit-vocab-1", "keys": self._keys[1:]}, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> "Vocabulary":
        payload = json.loads(Path(path).read_text())
        if payload.get("format") != "parabit-vocab-1":
            raise ValueError(f"{path}: not a parabit vocabulary file (format {payload.get('format')!r})")
        return cls(payload["keys"])


def pad_batch(sequences: list[list[int]], max_length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pad id lists with ``PAD_ID`` into ``[B, T]`` int64 and return it with the lengths ``[B]``.

    ``max_length`` truncates longer sequences. An empty sequence gets length 0 (its row is all padding).
    """
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    flat = np.fromiter(itertools.chain.from_iterable(sequences), dtype=np.int64, count=int(lengths.sum()))
    return pad_flat(flat, lengths, max_length)


def pad_flat(ids: np.ndarray, lengths: np.ndarray, max_length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pad_batch` for ids given one sequence after another (``lengths`` says where each ends)."""
    kept = lengths if max_length is None else np.minimum(lengths, max_length)
    if max_length is not None and (kept < lengths).any():
        starts = np.cumsum(lengths) - lengths
        position = np.arange(len(ids)) - np.repeat(starts, lengths)
        ids = ids[position < np.repeat(kept, lengths)]
    width = int(kept.max()) if len(kept) and kept.max() > 0 else 1
    padded = np.full((len(kept), width), PAD_ID, dtype=np.int64)
    # One vectorised scatter: the real positions of a row-major [B, T] mask, in order, are the ids one after another.
    padded[np.arange(width) < kept[:, None]] = ids
    return padded, kept.astype(np.int64)
