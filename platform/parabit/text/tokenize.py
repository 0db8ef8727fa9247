"""Word tokenisation with nltk tokenizers that need no downloaded data.

The tokenizer's settings travel with every trained model (``to_dict``/``from_dict``), so a model always
tokenises at inference exactly as it did in training.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import AfterValidator

from parabit.config import check_name

# Penn-Treebank-like splits (clitics such as "n't", "'s" become their own tokens, as in the corpora GloVe
# and PPDB were built from) at regular-expression speed: ~5x faster than nltk's Treebank tokenizer.
TREEBANK_LIKE_PATTERN = r"\w+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|\w+(?:[-.]\w+)*|[^\w\s]"

# The same pattern over many texts joined by newlines, the newline its own token: no alternative of the pattern
# matches whitespace or crosses it, so the tokens of the joined texts are each text's tokens, newline-separated.
_TEXT_BREAK = "\n"
_JOINED_PATTERN = re.compile(TREEBANK_LIKE_PATTERN + "|" + _TEXT_BREAK)
# Between texts joined for splitting at whitespace: a word of its own that the texts almost never hold.
_SEPARATOR_WORD = "\x00"
_TEXT_SEPARATOR = f" {_SEPARATOR_WORD} "


def _regexp() -> Callable[[str], list[str]]:
    # Exactly nltk's RegexpTokenizer(TREEBANK_LIKE_PATTERN).tokenize (findall, no gaps; tests/text checks they agree),
    # minus nltk's per-call ReDoS timeout wrapper around the `regex` module, which cost ~4/5 of the tokenising time
    # (bench/bench_encoding.py); this fixed pattern has no catastrophic backtracking to guard against.
    return re.compile(TREEBANK_LIKE_PATTERN).findall


def _nltk(class_name: str) -> Callable[[], Callable[[str], list[str]]]:
    def make() -> Callable[[str], list[str]]:
        # Imported on use: nltk's package import loads most of nltk and scipy.stats (~1.5 s a process, more on a busy
        # machine), which every training worker and driver paid for the default tokenizer, which does not use it.
        import nltk.tokenize

        return getattr(nltk.tokenize, class_name)().tokenize

    return make


TOKENIZERS: dict[str, Callable[[], Callable[[str], list[str]]]] = {
    "regexp": _regexp,
    "toktok": _nltk("ToktokTokenizer"),
    "treebank": _nltk("TreebankWordTokenizer"),
    "wordpunct": _nltk("WordPunctTokenizer"),
}


TokenizerName = Annotated[str, AfterValidator(lambda name: check_name(name, TOKENIZERS, "tokenizer"))]
"""A config field naming a tokenizer of :data:`TOKENIZERS`."""


def _flatten(tokenized: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter(map(len, tokenized), dtype=np.int64, count=len(tokenized))
    return np.fromiter(chain.from_iterable(tokenized), dtype=object, count=int(lengths.sum())), lengths


def _tokenize_joinable(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The ``regexp`` tokens of already lower-cased ``texts``, one after another, and each text's count: one pass
    over the texts joined (a line break inside a text splits like a space)."""
    if any(_TEXT_BREAK in text for text in texts):
        texts = [text.replace(_TEXT_BREAK, " ") for text in texts]
    tokens = np.array(_JOINED_PATTERN.findall(_TEXT_BREAK.join(texts)) + [_TEXT_BREAK], dtype=object)
    breaks = np.flatnonzero(tokens == _TEXT_BREAK)
    lengths = np.diff(breaks, prepend=-1) - 1
    return np.delete(tokens, breaks), lengths[:len(texts)]


class Tokenizer:
    """Splits a sentence into word tokens, optionally lower-cased.

    ``name`` picks the nltk tokenizer: ``regexp`` (default; Treebank-like, fastest), ``toktok``,
    ``treebank`` or ``wordpunct``.
    """

    def __init__(self, name: str = "regexp", lowercase: bool = True):
        if name not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}")
        self.name = name
        self.lowercase = lowercase
        self._split = TOKENIZERS[name]()

    def __call__(self, text: str) -> list[str]:
        return self._split(text.lower() if self.lowercase else text)

    def tokenize_all(self, texts: Iterable[str]) -> list[list[str]]:
        return [self(text) for text in texts]

    def tokenize_flat(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every text's tokens one after another (an object array) and each text's token count: the same tokens as
        :meth:`tokenize_all`, for encoding many texts at once."""
        pieces, positions, lengths = self.tokenize_indexed(texts)
        return pieces[positions], lengths

    def tokenize_indexed(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`tokenize_flat` as ``(pieces, positions, lengths)``: the tokens one after another are
        ``pieces[positions]``, so a caller can work on the (fewer) pieces and index its results.

        The ``regexp`` tokenizer splits the joined texts at whitespace (which no token holds or crosses) and
        tokenises each distinct whitespace-separated word once, in one pass over the words joined: texts repeat
        their words, and the regular expression was most of encoding's time (bench/bench_encoding.py)."""
        if self.name != "regexp":
            tokens, lengths = _flatten(self.tokenize_all(texts))
            return tokens, np.arange(len(tokens)), lengths
        joined = _TEXT_SEPARATOR.join(texts)
        if self.lowercase:
            joined = joined.lower()
        if joined.count(_SEPARATOR_WORD) != max(len(texts) - 1, 0):  # a text holds the separator: no word split
            tokens, lengths = _tokenize_joinable([t.lower() if self.lowercase else t for t in texts])
            return tokens, np.arange(len(tokens)), lengths
        words = np.array(joined.split() + [_SEPARATOR_WORD], dtype=object)
        word_codes, distinct_words = pd.factorize(words)
        separators = word_codes == word_codes[-1]
        words_per_text = (np.diff(np.flatnonzero(separators), prepend=-1) - 1)[:len(texts)]
        word_codes = word_codes[~separators]
        pieces, tokens_per_distinct = _tokenize_joinable(list(distinct_words))
        # Each word occurrence stands for its distinct word's run of pieces; the runs, in order, are the tokens.
        tokens_per_word = tokens_per_distinct[word_codes]
        run_starts = (np.cumsum(tokens_per_distinct) - tokens_per_distinct)[word_codes]
        token_ends = np.cumsum(tokens_per_word)
        positions = (np.repeat(run_starts - (token_ends - tokens_per_word), tokens_per_word)
                     + np.arange(token_ends[-1] if len(token_ends) else 0))
        text_ends = np.concatenate([[0], token_ends])[np.cumsum(words_per_text)]
        return pieces, positions, np.diff(text_ends, prepend=0)

    def to_dict(self) -> dict:
        return {"name": self.name, "lowercase": self.lowercase}

    @classmethod
    def from_dict(cls, settings: dict) -> "Tokenizer":
        return cls(**settings)

    def __repr__(self) -> str:
        return f"Tokenizer(name={self.name!r}, lowercase={self.lowercase})"
