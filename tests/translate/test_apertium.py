"""ApertiumTranslator against the real installed engine, on real sentences."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parabit.data.bitext import read_tatoeba
from parabit.translate import ApertiumTranslator, TranslatorError, build_translator
from parabit.translate.apertium import apertium_pipeline, deformat, reformat

FAULTY_STAGE = Path(__file__).with_name("faulty_stage.py")


@pytest.fixture(scope="module")
def spa_eng():
    with build_translator("apertium", mode="spa-eng") as translator:
        yield translator


def plain_apertium(sentence: str) -> str:
    """What the `apertium` command prints for one sentence: the reference our framing must reproduce."""
    result = subprocess.run(["apertium", "-u", "spa-eng"], input=sentence + "\n", capture_output=True, text=True,
                            check=True)
    return result.stdout.strip()


def test_translates_real_sentences(spa_eng):
    batch = spa_eng.translate(["Tengo hambre.", "¿Dónde está el baño?"], "es", "en")
    assert "hungry" in batch.translations[0]
    assert batch.errors == [None, None]
    assert batch.costs is None  # a rule-based engine has no per-token cost


def test_batch_of_500_tatoeba_sentences_stays_aligned(spa_eng):
    spanish = [pair.foreign for pair in read_tatoeba(limit=20_000)[-500:]]
    batch = spa_eng.translate(spanish, "es", "en")
    assert len(batch) == 500 and not batch.failed
    # Sentences picked across the batch, translated alone by the `apertium` command, must match position for
    # position: any shift in the framing would pair a translation with its neighbour's source.
    for index in (0, 1, 137, 250, 498, 499):
        assert batch.translations[index] == plain_apertium(spanish[index]), spanish[index]


def test_markup_characters_and_newlines_survive():
    sentence = "Precio: $5 [aprox.] <b> a/b ~c\nfin"
    # Reserved characters are escaped on the way in and restored on the way out; the newline becomes a space.
    assert reformat(deformat(sentence)) == "Precio: $5 [aprox.] <b> a/b ~c fin"


def test_direction_must_match_mode(spa_eng):
    with pytest.raises(TranslatorError, match="mode 'eng-spa'"):
        spa_eng.translate(["Hello."], "en", "es")


def test_missing_mode_names_debian_packages():
    with pytest.raises(TranslatorError, match="apertium-eng-spa"):
        ApertiumTranslator("spa-xyz")


def test_unknown_engine_lists_engines():
    with pytest.raises(TranslatorError, match=r"choose one of \['apertium', 'hf-marian', 'marian-pt'\]"):
        build_translator("babelfish")


def faulty(timeout_s: float) -> ApertiumTranslator:
    """A translator whose engine dies on any sentence containing BOOM and hangs on HANG."""
    return ApertiumTranslator("spa-eng", pipeline=[[sys.executable, str(FAULTY_STAGE)], *apertium_pipeline("spa-eng")],
                              timeout_s=timeout_s)


def test_sentence_that_crashes_the_engine_is_isolated():
    with faulty(timeout_s=30) as translator:  # generous: a crash is seen when the process exits, not by timeout
        batch = translator.translate(["Tengo hambre.", "BOOM aquí", "Hola.", "Adiós.", "Sí."], "es", "en")
    assert batch.translations[:1] + batch.translations[2:] == ["I am hungry.", "Hello.", "Goodbye.", "Yes."]
    assert batch.failed == [1]
    assert batch.errors[1] == "apertium crashed (exit code 3)"


@pytest.mark.slow
def test_sentence_that_hangs_the_engine_times_out_and_the_engine_recovers():
    with faulty(timeout_s=1.5) as translator:
        batch = translator.translate(["Tengo hambre.", "HANG aquí", "Hola."], "es", "en")
        assert batch.failed == [1] and "hung" in batch.errors[1]
        assert batch.translations[2] == "Hello."
        assert translator.translate(["Gracias."], "es", "en").translations == ["Thank you."]
