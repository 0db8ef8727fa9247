"""Phrase extraction on hand-aligned sentence pairs: exactly the consistent phrase pairs, nothing else."""

from __future__ import annotations

import itertools

import pytest
from nltk.translate.phrase_based import phrase_extraction

from parabit.phrases.align import symmetrise
from parabit.phrases.extract import consistent_spans, count_phrase_pairs, extract_phrase_pairs

# "the green house" / "la casa verde": the ↔ la, green ↔ verde, house ↔ casa (crossing), nothing unaligned.
GREEN_HOUSE = ("the green house".split(), "la casa verde".split(), {(0, 0), (1, 2), (2, 1)})

# "i do not smoke ." / "no fumo .": "do" unaligned, "i" and "smoke" both to "fumo".
NO_SMOKE = ("i do not smoke .".split(), "no fumo .".split(), {(0, 1), (2, 0), (3, 1), (4, 2)})

MICHAEL = ("michael assumes that he will stay in the house".split(),
           "michael geht davon aus , dass er im haus bleibt".split(),
           {(0, 0), (1, 1), (1, 2), (1, 3), (2, 5), (3, 6), (4, 9), (5, 9), (6, 7), (7, 7), (8, 8)})


def brute_force(english, foreign, links, max_length):
    """The definition, checked for every pair of spans."""
    pairs = set()
    for e0, e1 in itertools.combinations(range(len(english) + 1), 2):
        for f0, f1 in itertools.combinations(range(len(foreign) + 1), 2):
            if e1 - e0 > max_length or f1 - f0 > max_length:
                continue
            inside = [(i, j) for i, j in links if e0 <= i < e1 or f0 <= j < f1]
            if inside and all(e0 <= i < e1 and f0 <= j < f1 for i, j in inside):
                pairs.add(((e0, e1), (f0, f1)))
    return pairs


def test_green_house_gives_exactly_the_consistent_pairs():
    english, foreign, links = GREEN_HOUSE
    assert set(extract_phrase_pairs(english, foreign, links, max_length=3)) == {
        ("the", "la"), ("green", "verde"), ("house", "casa"), ("green house", "casa verde"),
        ("the green house", "la casa verde"),
    }


def test_unaligned_words_and_the_length_limit():
    english, foreign, links = NO_SMOKE
    # "i" and "smoke" both link to "fumo", so a consistent English span holds both or neither; "do" is unaligned,
    # so it may join a neighbouring phrase.
    assert set(extract_phrase_pairs(english, foreign, links, max_length=3)) == {
        ("not", "no"), ("do not", "no"), (".", ".")}
    assert set(extract_phrase_pairs(english, foreign, links, max_length=5)) == {
        ("not", "no"), ("do not", "no"), (".", "."), ("i do not smoke", "no fumo"),
        ("i do not smoke .", "no fumo .")}


@pytest.mark.parametrize("example", [GREEN_HOUSE, NO_SMOKE, MICHAEL])
@pytest.mark.parametrize("max_length", [1, 2, 3, 7, 12])
def test_matches_the_definition(example, max_length):
    english, foreign, links = example
    assert set(consistent_spans(len(english), len(foreign), links, max_length)) == \
        brute_force(english, foreign, links, max_length)


def test_agrees_with_nltk_where_its_length_limit_does_not_bind():
    english, foreign, links = MICHAEL
    nltk_pairs = {(e, f) for e, f, _, _ in phrase_extraction(" ".join(english), " ".join(foreign), links, 10)}
    assert set(consistent_spans(len(english), len(foreign), links, 10)) == nltk_pairs


def test_nltk_emits_inconsistent_pairs_under_a_length_limit():
    """Why parabit does not call nltk's phrase_extraction: with max length 3 it truncates spans."""
    english, foreign, links = MICHAEL
    nltk_pairs = {(e, f) for e, f, _, _ in phrase_extraction(" ".join(english), " ".join(foreign), links, 3)}
    assert ((0, 2), (0, 3)) in nltk_pairs  # "michael assumes" / "michael geht davon": "assumes" also links "aus"
    assert ((0, 2), (0, 3)) not in brute_force(english, foreign, links, 3)


def test_alignment_then_extraction_on_a_hand_aligned_pair():
    """Two directional alignments of "the green house" merged by grow-diag-final-and, then extracted."""
    english, foreign, _ = GREEN_HOUSE
    forward = {(0, 0), (1, 2), (2, 1)}          # each Spanish word to one English word
    reverse = {(0, 0), (1, 2), (2, 1), (2, 2)}  # a spurious extra link house ↔ verde
    links = symmetrise(forward, reverse, "grow-diag-final-and")
    assert links == [(0, 0), (1, 2), (2, 1)]
    assert set(extract_phrase_pairs(english, foreign, links, 3)) == {
        ("the", "la"), ("green", "verde"), ("house", "casa"), ("green house", "casa verde"),
        ("the green house", "la casa verde")}


def test_counts_and_bad_links():
    english, foreign, links = GREEN_HOUSE
    counts = count_phrase_pairs([(english, foreign, links)] * 3, max_length=1)
    assert counts == {("the", "la"): 3, ("green", "verde"): 3, ("house", "casa"): 3}
    with pytest.raises(ValueError, match="outside a 3 x 3 sentence pair"):
        extract_phrase_pairs(english, foreign, {(0, 5)}, 3)
