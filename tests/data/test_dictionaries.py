"""MUSE and Wiktionary BLI word lists: exact sizes of the shipped files and errors on broken ones."""

from __future__ import annotations

import pytest

from parabit.data.dictionaries import read_muse, read_muse_test, read_wiktionary_bli, read_word_pairs
from parabit.data.errors import DataFormatError, Quarantine


@pytest.fixture(scope="module")
def muse_en_es():
    return read_muse("en", "es")


def test_muse_en_es_full_dictionary(muse_en_es):
    assert len(muse_en_es) == 112_580
    assert [(e.source_word, e.target_word, e.line) for e in muse_en_es[:3]] == [
        ("the", "el", 1), ("the", "las", 2), ("the", "los", 3),
    ]


@pytest.mark.parametrize(("src", "tgt", "count"), [("es", "en", 112_583), ("en", "fr", 113_286), ("fr", "en", 113_324)])
def test_muse_other_directions(src, tgt, count):
    assert len(read_muse(src, tgt)) == count


@pytest.mark.parametrize(("src", "tgt", "kind", "count"), [
    ("en", "es", "o", 3883),
    ("en", "es", "pn", 511),
    ("en", "es", "all", 4394),
    ("es", "en", "o", 1942),
    ("es", "en", "pn", 474),
    ("es", "en", "all", 2416),
])
def test_muse_test_dictionaries(src, tgt, kind, count):
    assert len(read_muse_test(src, tgt, kind)) == count


def test_muse_test_set_is_not_nested_in_the_full_dictionary(muse_en_es):
    test = read_muse_test("en", "es")
    assert len({e.source_word for e in test}) == 1500
    full = {(e.source_word, e.target_word) for e in muse_en_es}
    assert sum((e.source_word, e.target_word) not in full for e in test) == 1419


def test_muse_test_unknown_kind():
    with pytest.raises(ValueError, match="unknown MUSE test kind 'proper'"):
        read_muse_test("en", "es", "proper")


@pytest.mark.parametrize(("lang", "split", "lines", "empty_english_lines"), [
    ("es", "all", 91_066, [64957, 82514, 82598]),
    ("es", "train", 88_153, [62354, 79671]),
    ("es", "test", 2_955, [2886]),
    ("es", "testsmall", 750, []),
    ("fr", "all", 78_837, []),
    ("fr", "train", 76_145, []),
    ("fr", "test", 2_742, []),
    ("fr", "testsmall", 750, []),
])
def test_wiktionary_splits(lang, split, lines, empty_english_lines):
    quarantine = Quarantine()
    entries = read_wiktionary_bli(lang, split, quarantine=quarantine)
    assert len(entries) + len(quarantine) == lines
    assert [r.line for r in quarantine.rejected] == empty_english_lines
    assert set(quarantine.counts) <= {"empty target word"}


def test_wiktionary_orientation_is_foreign_then_english():
    entries = read_wiktionary_bli("es", "testsmall")
    assert [(e.source_word, e.target_word, e.line) for e in entries[:2]] == [("ya", "now", 1), ("ya", "already", 2)]


def test_wiktionary_empty_english_side_raises_without_quarantine():
    with pytest.raises(DataFormatError, match=r"es-en\.test:2886: empty target word$"):
        read_wiktionary_bli("es", "test")


def test_wiktionary_unknown_split():
    with pytest.raises(ValueError, match="unknown Wiktionary BLI split 'dev'"):
        read_wiktionary_bli("es", "dev")


def test_malformed_muse_line_names_file_and_line(tmp_path):
    path = tmp_path / "en-es.txt"
    path.write_text("the el\nhouse casa hogar\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_muse("en", "es", path)
    assert str(caught.value).startswith(f"{path}:2: expected 2 ")
    assert str(caught.value).endswith("fields, found 3")


def test_word_pairs_quarantine_reasons(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("casa\thouse\n\tempty\nperro\n\x1e\tcontrol\nfin\tend\n", encoding="utf-8")
    quarantine = Quarantine()
    entries = read_word_pairs(path, quarantine=quarantine)
    assert [(e.source_word, e.target_word, e.line) for e in entries] == [("casa", "house", 1), ("fin", "end", 5)]
    assert [(r.line, r.reason) for r in quarantine.rejected] == [
        (2, "empty source word"),
        (3, "expected 2 tab-separated fields, found 1"),
        (4, "source word has only whitespace or control characters"),
    ]
