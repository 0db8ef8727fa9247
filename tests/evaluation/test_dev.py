"""Dev sets: the SICK-es trial parts read the translation ``parabit translate-sick`` made, and score what they read."""

from __future__ import annotations

import numpy as np
import pytest

from parabit.backtranslation.sick_translation import SICKTranslationConfig, run_sick_translation
from parabit.data.sick import read_sick
from parabit.evaluation.dev import BILINGUAL_SICK_DEV_SET, DEV_SETS, TRANSLATED_SICK, DevSet
from parabit.paths import pipeline_stage

PAIRS = 40


@pytest.fixture
def translated_trial(tmp_path, monkeypatch):
    """The first SICK trial pairs translated by real Apertium, where the dev parts look for them."""
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path))
    run_sick_translation(SICKTranslationConfig(splits=("trial",), max_pairs_per_split=PAIRS,
                                               output=str(pipeline_stage(TRANSLATED_SICK).parent)))


def _words(sentence: str) -> set[str]:
    return set(sentence.lower().split())


def test_the_bilingual_sick_dev_set_scores_english_spanish_and_across_on_the_trial_pairs(translated_trial):
    assert BILINGUAL_SICK_DEV_SET in DEV_SETS
    english = {p.sentence_a: p for p in read_sick("trial")[:PAIRS]}
    seen: list[str] = []

    def encode(sentences: list[str]) -> np.ndarray:  # bags of words: no model between the data and the score
        seen.extend(sentences)
        vocabulary = sorted({w for s in sentences for w in _words(s)})
        index = {w: i for i, w in enumerate(vocabulary)}
        vectors = np.zeros((len(sentences), len(vocabulary)), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            for word in _words(sentence):
                vectors[row, index[word]] = 1.0
        return vectors

    score, details = DevSet(BILINGUAL_SICK_DEV_SET)(encode)
    parts = [details[f"dev/{part}"] for part in BILINGUAL_SICK_DEV_SET.split("+")]
    assert score == pytest.approx(sum(parts) / 3)
    # Word overlap tracks relatedness within one language, and hardly at all across two.
    english_r, spanish_r, cross_r = parts
    assert english_r > 0.3 and spanish_r > 0.3 and cross_r < spanish_r
    assert any(sentence in english for sentence in seen)  # the English side was read
    assert any("un" in _words(sentence) for sentence in seen)  # and the Spanish one


def test_a_sick_es_dev_part_without_the_translation_says_how_to_make_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="parabit translate-sick"):
        DevSet("sick-es-trial")
