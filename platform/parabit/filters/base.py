"""The filter contract (as in OpusFilter): ``score`` measures, ``accept`` decides, and the two never mix.

Scores are stored as columns of the pipeline's output, so thresholds can be swept later without re-scoring. Every
filter sees the pair as (reference English, back-translated English); a batch is a ``pyarrow.Table`` or a mapping of
columns with at least ``reference`` and ``translation``.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from parabit.text.tokenize import Tokenizer


class FilterError(ValueError):
    """A filter cannot score this input or was configured wrongly; the message says what to change."""


class PairBatch:
    """A batch of (reference, translation) pairs whose tokens are computed once and shared by every filter.

    Wraps a ``pyarrow.Table`` or a mapping of columns; a column is converted to a Python list only when asked for.
    """

    def __init__(self, columns: pa.Table | Mapping[str, Any], tokenizer: Tokenizer | None = None):
        names = columns.column_names if isinstance(columns, pa.Table) else list(columns)
        missing = {"reference", "translation"} - set(names)
        if missing:
            raise FilterError(f"a filter batch needs columns 'reference' and 'translation'; missing {sorted(missing)}")
        self._columns = columns
        self.tokenizer = tokenizer or Tokenizer("regexp", lowercase=True)

    @classmethod
    def of(cls, batch: "PairBatch | pa.Table | Mapping[str, Any]") -> "PairBatch":
        return batch if isinstance(batch, PairBatch) else cls(batch)

    def has(self, name: str) -> bool:
        return name in (self._columns.column_names if isinstance(self._columns, pa.Table) else self._columns)

    def column(self, name: str) -> list:
        values = self._columns[name]
        return values.to_pylist() if isinstance(values, (pa.Array, pa.ChunkedArray)) else list(values)

    def __len__(self) -> int:
        return len(self._columns["reference"])

    @cached_property
    def reference(self) -> list[str]:
        return self.column("reference")

    @cached_property
    def translation(self) -> list[str]:
        return self.column("translation")

    @cached_property
    def reference_tokens(self) -> list[list[str]]:
        return self.tokenizer.tokenize_all(self.reference)

    @cached_property
    def translation_tokens(self) -> list[list[str]]:
        return self.tokenizer.tokenize_all(self.translation)

    @cached_property
    def token_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(reference, translation) token counts."""
        return (np.fromiter(map(len, self.reference_tokens), dtype=np.int64, count=len(self)),
                np.fromiter(map(len, self.translation_tokens), dtype=np.int64, count=len(self)))


class Filter(ABC):
    """Scores pairs and, separately, accepts or rejects them by thresholds on those scores.

    ``columns`` names the score column(s) ``score`` returns: one column gives an array of shape ``(n,)``, several give
    ``(n, len(columns))``. Filters that learn from data (``needs_fit``) must be :meth:`fit` on held-out pairs first.
    """

    name: ClassVar[str]
    needs_fit: ClassVar[bool] = False
    needs_cost: ClassVar[bool] = False  # scores the engine's per-token costs (column ``token_costs``)
    needs_columns: ClassVar[tuple[str, ...]] = ()  # columns it reads besides the pair (e.g. ``foreign``, ``lang``)

    def pinned_options(self) -> dict:
        """Options that name what this instance scores with as it is now (e.g. a model alias as the version it points
        at), for the score stage's settings: a stage scored with one model is not reused when the alias moves.
        Default: none."""
        return {}

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.name,)

    @property
    def label(self) -> str:
        """How reports name this filter instance (its column, or its name when it writes several)."""
        return self.columns[0] if len(self.columns) == 1 else self.name

    def fit(self, references: Sequence[str], translations: Sequence[str]) -> "Filter":
        """Learn from held-out (reference, translation) pairs; a no-op unless ``needs_fit``."""
        return self

    @abstractmethod
    def score(self, batch: PairBatch | pa.Table | Mapping[str, Any]) -> np.ndarray:
        """One score per pair (one row per pair and one column per entry of ``columns`` when there are several)."""

    @abstractmethod
    def accept(self, scores: np.ndarray, **thresholds: float) -> np.ndarray:
        """Boolean mask: True for pairs whose scores pass ``thresholds`` (each filter documents its own)."""

    @classmethod
    def threshold_names(cls) -> set[str]:
        """The keyword thresholds :meth:`accept` takes, for checking a configuration before any work starts."""
        parameters = inspect.signature(cls.accept).parameters.values()
        return {p.name for p in parameters if p.kind is p.KEYWORD_ONLY}


def within(scores: np.ndarray, minimum: float | None = None, maximum: float | None = None) -> np.ndarray:
    """``minimum <= scores <= maximum`` with open ends for None; a NaN score (no score) fails any bound that is set."""
    scores = np.asarray(scores, dtype=float)
    mask = np.ones(scores.shape, dtype=bool)
    if minimum is not None:
        mask &= scores >= minimum
    if maximum is not None:
        mask &= scores <= maximum
    return mask
