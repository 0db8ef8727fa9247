"""Symmetrisation by hand, and eflomal on real Tatoeba pairs."""

from __future__ import annotations

import pytest

from parabit.data.bitext import read_tatoeba
from parabit.phrases.align import align_tokens, format_links, parse_links, symmetrise
from parabit.phrases.config import AlignConfig
from parabit.text.tokenize import Tokenizer

# English "a b c d", foreign "w x y z"; the two directions agree on 0-0 and 2-2 only.
FORWARD = {(0, 0), (1, 1), (2, 2), (3, 2)}   # each foreign word to one English word ... plus 3-2
REVERSE = {(0, 0), (1, 0), (2, 2), (3, 3)}


def test_intersection_and_union():
    assert symmetrise(FORWARD, REVERSE, "intersection") == [(0, 0), (2, 2)]
    assert symmetrise(FORWARD, REVERSE, "union") == sorted(FORWARD | REVERSE)


def test_grow_diag_final_and_by_hand():
    # grow-diag from {0-0, 2-2}: neighbours in the union with an unaligned word: 1-1 (diag of 0-0 and 2-2),
    # 1-0 (next to 0-0; English 1 unaligned at first), 3-2 / 3-3 (next to / diagonal of 2-2; English 3 unaligned).
    # Points are visited in sorted order, so 0-0 adds 1-0 and 1-1 first; 2-2 then adds 3-2 (English 3 unaligned)
    # and 3-3 (foreign 3 unaligned).
    assert symmetrise(FORWARD, REVERSE, "grow-diag-final-and") == [(0, 0), (1, 0), (1, 1), (2, 2), (3, 2), (3, 3)]


def test_final_and_only_adds_links_between_two_unaligned_words():
    forward, reverse = {(0, 0), (2, 3)}, {(0, 0), (1, 1)}
    # intersection 0-0; grow adds 1-1 (diagonal); 2-3 is not a neighbour: final-and adds it (both words unaligned)
    assert symmetrise(forward, reverse, "grow-diag-final-and") == [(0, 0), (1, 1), (2, 3)]
    forward, reverse = {(0, 0), (0, 2)}, {(0, 0)}
    assert symmetrise(forward, reverse, "grow-diag-final-and") == [(0, 0)]       # English 0 is aligned
    assert symmetrise(forward, reverse, "grow-diag-final") == [(0, 0), (0, 2)]  # foreign 2 is not


def test_links_round_trip():
    assert parse_links(format_links([(2, 1), (0, 0)])) == {(0, 0), (2, 1)}
    assert parse_links("") == set()


def test_eflomal_aligns_real_pairs():
    tokenizer = Tokenizer()
    pairs = read_tatoeba(lang="es")[::40][:1500]
    english = [tokenizer(p.en) for p in pairs]
    foreign = [tokenizer(p.foreign) for p in pairs]
    links = align_tokens(english, foreign, AlignConfig(n_samplers=1))
    assert len(links) == len(pairs)
    assert all(0 <= i < len(e) and 0 <= j < len(f) for e, f, ls in zip(english, foreign, links) for i, j in ls)
    # sentence-final punctuation that matches should be linked to each other almost always
    final = [(len(e) - 1, len(f) - 1) in set(ls) for e, f, ls in zip(english, foreign, links) if e[-1] == f[-1] == "."]
    assert len(final) > 500 and sum(final) / len(final) > 0.9


def test_empty_side_is_refused():
    with pytest.raises(ValueError, match="empty side"):
        align_tokens([["a"], []], [["x"], ["y"]], AlignConfig())
