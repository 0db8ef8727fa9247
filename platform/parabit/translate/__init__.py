"""Machine translation behind one contract (:class:`Translator`), built by engine name.

``build_translator("apertium", mode="spa-eng")`` returns a ready translator; ``"marian-pt"`` is the offline neural
en↔pt engine (:mod:`parabit.translate.marian`); ``"hf-marian"`` runs a Hugging Face Marian model directory the user
provides and reports per-token costs (:mod:`parabit.translate.hf_marian`). Another engine registers here under its
own name.
"""

from __future__ import annotations

from parabit.translate.apertium import ApertiumTranslator
from parabit.translate.base import TranslationBatch, Translator, TranslatorError
from parabit.translate.hf_marian import HFMarianTranslator
from parabit.translate.marian import MarianTranslator

TRANSLATORS: dict[str, type[Translator]] = {cls.engine: cls for cls in (ApertiumTranslator, MarianTranslator,
                                                                          HFMarianTranslator)}


def translator_class(engine: str) -> type[Translator]:
    """The class registered for ``engine``; raises :class:`TranslatorError` listing the engines otherwise."""
    if engine not in TRANSLATORS:
        raise TranslatorError(f"unknown translation engine {engine!r}; choose one of {sorted(TRANSLATORS)}")
    return TRANSLATORS[engine]


def build_translator(engine: str, **options) -> Translator:
    """Construct the translator registered as ``engine`` with its keyword ``options`` (e.g. ``mode="spa-eng"``)."""
    return translator_class(engine)(**options)


__all__ = ["TRANSLATORS", "ApertiumTranslator", "HFMarianTranslator", "MarianTranslator", "TranslationBatch",
           "Translator", "TranslatorError", "build_translator", "translator_class"]
