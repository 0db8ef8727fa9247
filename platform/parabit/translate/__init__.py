"""Machine translation behind one contract (:class:`Translator`), built by engine name.

``build_translator("apertium", mode="spa-eng")`` returns a ready translator; a neural engine that reports per-token
costs registers here under its own name.
"""

from __future__ import annotations

from parabit.translate.apertium import ApertiumTranslator
from parabit.translate.base import TranslationBatch, Translator, TranslatorError

TRANSLATORS: dict[str, type[Translator]] = {ApertiumTranslator.engine: ApertiumTranslator}


def translator_class(engine: str) -> type[Translator]:
    """The class registered for ``engine``; raises :class:`TranslatorError` listing the engines otherwise."""
    if engine not in TRANSLATORS:
        raise TranslatorError(f"unknown translation engine {engine!r}; choose one of {sorted(TRANSLATORS)}")
    return TRANSLATORS[engine]


def build_translator(engine: str, **options) -> Translator:
    """Construct the translator registered as ``engine`` with its keyword ``options`` (e.g. ``mode="spa-eng"``)."""
    return translator_class(engine)(**options)


__all__ = ["TRANSLATORS", "ApertiumTranslator", "TranslationBatch", "Translator", "TranslatorError",
           "build_translator", "translator_class"]
