"""The translator contract: a batch of sentences in, one translation (or one failure) per sentence out.

Engines differ in what they can say about their output: a neural engine knows the cost (negative log-probability)
of every token it emitted, a rule-based one does not. ``TranslationBatch.costs`` is therefore optional, and
``Translator.provides_cost`` lets a pipeline refuse, at configuration time, a cost filter the engine cannot feed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar


class TranslatorError(RuntimeError):
    """A translation engine cannot be used (missing program or model, unsupported direction)."""


@dataclass(frozen=True)
class TranslationBatch:
    """The result of translating ``n`` sentences; every list is aligned with the input.

    ``translations[i]`` is None exactly when sentence ``i`` failed, and ``errors[i]`` then says why (e.g. "apertium
    crashed (exit code -11)"). ``costs`` is None when the engine has no per-token cost; otherwise ``costs[i]`` is the
    list of per-token costs of ``translations[i]`` (None for a failed sentence).
    """

    translations: list[str | None]
    errors: list[str | None]
    costs: list[list[float] | None] | None = None

    def __post_init__(self):
        sizes = {len(self.translations), len(self.errors)} | ({len(self.costs)} if self.costs is not None else set())
        if len(sizes) > 1:
            raise ValueError(f"TranslationBatch lists differ in length: {sorted(sizes)}")

    def __len__(self) -> int:
        return len(self.translations)

    @property
    def failed(self) -> list[int]:
        """Indices of the sentences that could not be translated."""
        return [i for i, error in enumerate(self.errors) if error is not None]


class Translator(ABC):
    """Translates batches of sentences; one instance owns its engine (process, model) until :meth:`close`.

    Use as a context manager, or call :meth:`close`. ``engine`` names the implementation in the registry
    (:func:`parabit.translate.build_translator`); ``provides_cost`` says whether batches carry per-token costs.
    """

    engine: ClassVar[str]
    provides_cost: ClassVar[bool] = False

    @classmethod
    def options_for(cls, src: str, tgt: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options of the instance that translates ``src``→``tgt`` (a round trip builds one instance per
        distinct options). Default: ``options`` as given: one instance serves every direction."""
        return dict(options)

    @classmethod
    def check_options(cls, src: str, tgt: str, options: Mapping[str, Any]) -> None:
        """Fail fast, when a job is configured, if ``cls(**options)`` could not translate ``src``→``tgt``.

        Raises :class:`TranslatorError` saying what to change. The default checks nothing.
        """

    @abstractmethod
    def translate(self, sentences: Sequence[str], src: str, tgt: str) -> TranslationBatch:
        """Translate ``sentences`` from language ``src`` to ``tgt`` (ISO 639-1 codes such as "es", "en").

        A sentence the engine cannot handle is reported in the batch's ``errors``; it never fails the batch.
        Raises :class:`TranslatorError` when this translator does not cover ``src``→``tgt``.
        """

    def close(self) -> None:
        """Release the engine. Safe to call more than once."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
