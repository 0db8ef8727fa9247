"""Bitext readers on the shipped Tatoeba and Europarl/WMT files, and on hand-made broken files."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from parabit.data.bitext import read_aligned_lines, read_europarl, read_line_aligned, read_tatoeba
from parabit.data.errors import DataFormatError, Quarantine
from parabit.paths import data_path


@pytest.fixture(scope="module")
def tatoeba_es():
    quarantine = Quarantine()
    return read_tatoeba(lang="es", quarantine=quarantine), quarantine


@pytest.fixture(scope="module")
def europarl_es():
    quarantine = Quarantine()
    return read_europarl("es", "train", quarantine=quarantine), quarantine


def test_tatoeba_es_has_every_pair_and_nothing_rejected(tatoeba_es):
    pairs, quarantine = tatoeba_es
    assert len(pairs) == 118_964
    assert len(quarantine) == 0
    assert (pairs[0].en, pairs[0].foreign, pairs[0].line, pairs[0].lang, pairs[0].source) == ("Go.", "Ve.", 1, "es", "tatoeba")
    assert pairs[-1].line == 118_964
    # Distinct sentence counts stated in SOURCES.md.
    assert len({p.en for p in pairs}) == 102_904
    assert len({p.foreign for p in pairs}) == 113_322


def test_tatoeba_fr_default_path_and_limit():
    pairs = read_tatoeba(lang="fr", limit=3)
    # The narrow no-break space of French typography is kept, not turned into a plain space.
    assert [(p.en, p.foreign) for p in pairs] == [("Go.", "Va !"), ("Hi.", "Salut !"), ("Run!", "Cours\u202f!")]
    assert [p.line for p in pairs] == [1, 2, 3]


def test_tatoeba_fr_full_count():
    assert len(read_tatoeba(lang="fr")) == 167_130


def test_tatoeba_unknown_language():
    with pytest.raises(ValueError, match="unknown Tatoeba language 'de'"):
        read_tatoeba(lang="de")


def _write_gz(path, data: bytes):
    with gzip.open(path, "wb") as handle:
        handle.write(data)
    return path


def test_tatoeba_malformed_line_raises_with_file_and_line(tmp_path):
    path = _write_gz(tmp_path / "spa.txt.gz", "Go.\tVe.\nonly one column\nHi.\tHola.\n".encode())
    with pytest.raises(DataFormatError) as caught:
        read_tatoeba(path)
    assert str(caught.value) == f"{path}:2: expected 2 or 3 tab-separated fields, found 1"


def test_tatoeba_quarantine_keeps_bad_lines_with_reasons(tmp_path):
    lines = [
        b"Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM)",  # newer 3-column format
        b"one column",
        b"Hi.\t   ",
        b"  Run!  \tCorre.",
        b"Bad\t\xff\xfe",
        b"a\tb\tc\td",
    ]
    path = _write_gz(tmp_path / "spa.txt.gz", b"\n".join(lines) + b"\n")
    quarantine = Quarantine()
    pairs = read_tatoeba(path, quarantine=quarantine)
    assert [(p.line, p.en, p.foreign) for p in pairs] == [(1, "Go.", "Ve."), (4, "Run!", "Corre.")]
    assert [(r.line, r.reason) for r in quarantine.rejected] == [
        (2, "expected 2 or 3 tab-separated fields, found 1"),
        (3, "empty Spanish side"),
        (5, "undecodable bytes (not UTF-8: invalid start byte at byte 4)"),
        (6, "expected 2 or 3 tab-separated fields, found 4"),
    ]
    assert quarantine.rejected[1].text == "Hi.\t   "


def test_europarl_train_empty_english_lines_are_quarantined(europarl_es):
    pairs, quarantine = europarl_es
    assert len(pairs) == 20_000 - 22
    assert quarantine.counts == {"empty English side": 22}
    en_file = str(data_path("bitext", "europarl-wmt-en-es", "europarl-v7.es-en.en"))
    assert {r.path for r in quarantine.rejected} == {en_file}
    first = quarantine.rejected[0]
    assert (first.line, first.text) == (1039, "\tParece que esto le interesa a la gente .")
    # Every line is accounted for exactly once: kept or quarantined.
    assert sorted([p.line for p in pairs] + [r.line for r in quarantine.rejected]) == list(range(1, 20_001))
    assert {p.source for p in pairs} == {"europarl-v7.es-en"}


def test_europarl_without_quarantine_stops_at_first_empty_side():
    with pytest.raises(DataFormatError, match=r"europarl-v7\.es-en\.en:1039: empty English side$"):
        read_europarl("es", "train")


def test_europarl_fr_train_has_35_empty_english_lines():
    quarantine = Quarantine()
    pairs = read_europarl("fr", "train", quarantine=quarantine)
    assert len(pairs) == 20_000 - 35
    assert quarantine.counts == {"empty English side": 35}


@pytest.mark.parametrize(("lang", "split", "count", "source"), [
    ("es", "dev", 3003, "newstest2012"),
    ("es", "test", 3000, "newstest2013"),
    ("fr", "dev", 3003, "newstest2012"),
    ("fr", "test", 3000, "newstest2013"),
])
def test_newstest_splits_are_complete(lang, split, count, source):
    pairs = read_europarl(lang, split)
    assert len(pairs) == count
    assert {p.source for p in pairs} == {source}
    assert {p.lang for p in pairs} == {lang}


def test_moses_escapes_are_undone(europarl_es):
    pairs, _ = europarl_es
    by_line = {p.line: p for p in pairs}
    # Raw line 29 of europarl-v7.es-en.en is "Is the Pensioners &apos; Party on the left or the right ?".
    assert by_line[29].en == "Is the Pensioners ' Party on the left or the right ?"
    assert by_line[2].en == "So , c 'est la vie !"
    escape = re.compile(r"&(?:[a-z]+|#\d+|#x[0-9a-f]+);", re.IGNORECASE)
    assert not [p.line for p in pairs if escape.search(p.en) or escape.search(p.foreign)]
    # Unescaping happens once: the source's doubly-escaped "&amp; # x02BC ;" stays a literal "&".
    assert by_line[3065].en == "Of the EU & # x02BC ; s film market , 76 % consists of American films ."


def test_unescape_can_be_turned_off():
    pairs = read_europarl("es", "dev", unescape=False, limit=1000)
    assert len(pairs) == 1000
    assert pairs[987].line == 988
    assert pairs[987].en == "The broader S &amp; P 500 index closed at 1251 point , down one percent ."
    assert read_europarl("es", "dev", limit=988)[987].foreign.startswith("El índice S & P 500 cerró")


def test_unknown_europarl_split():
    with pytest.raises(ValueError, match="unknown Europarl split 'valid'"):
        read_europarl("es", "valid")


def test_line_count_mismatch_names_both_files_even_with_quarantine(tmp_path):
    en = tmp_path / "corpus.en"
    es = tmp_path / "corpus.es"
    en.write_text("one\ntwo\nthree\n", encoding="utf-8")
    es.write_text("uno\ndos\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_line_aligned(en, es, lang="es", quarantine=Quarantine())
    message = str(caught.value)
    assert f"{en} has 3 lines" in message
    assert f"{es} has 2 lines" in message


def test_line_aligned_cleans_and_quarantines(tmp_path):
    en = tmp_path / "corpus.en"
    es = tmp_path / "corpus.es"
    en.write_bytes(b"  It &apos;s   a  test . \n\nfine\nlong\nbad \xff byte\nlast &quot;one&quot;\n")
    es.write_bytes(b"Es una prueba .\nvac\xc3\xado\nbien\n" + b"x" * 30 + b"\nmal\n\xc3\xbaltima\n")
    quarantine = Quarantine()
    pairs = read_line_aligned(en, es, lang="es", quarantine=quarantine, max_chars=20)
    assert [(p.line, p.en, p.foreign) for p in pairs] == [
        (1, "It 's a test .", "Es una prueba ."),
        (3, "fine", "bien"),
        (6, 'last "one"', "última"),
    ]
    assert {p.source for p in pairs} == {"corpus"}
    # Read in step, so rejects come in line order.
    assert [(r.path, r.line, r.reason) for r in quarantine.rejected] == [
        (str(en), 2, "empty English side"),
        (str(es), 4, "Spanish side longer than 20 characters"),
        (str(en), 5, "undecodable bytes (not UTF-8: invalid start byte at byte 4)"),
    ]


def test_line_aligned_limit_still_checks_alignment(tmp_path):
    en = tmp_path / "a.en"
    fr = tmp_path / "a.fr"
    en.write_text("a\nb\nc\n", encoding="utf-8")
    fr.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="line-aligned files differ in length"):
        read_line_aligned(en, fr, lang="fr", limit=1)


def test_read_aligned_lines_without_quarantine_raises_on_undecodable_bytes(tmp_path):
    first = tmp_path / "a.txt"
    second = tmp_path / "b.txt"
    first.write_bytes(b"ok\n\xff\n")
    second.write_bytes(b"ok\nok\n")
    with pytest.raises(DataFormatError, match=r"a\.txt:2: undecodable bytes"):
        read_aligned_lines([first, second])


def test_aligned_lines_read_in_step_skip_a_line_bad_in_either_file(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_bytes(b"1\n\xff2\n3\n4\n5\n")
    second.write_bytes(b"one\ntwo\nthree\n\xfefour\nfive\n")
    quarantine = Quarantine()
    assert read_aligned_lines([first, second], quarantine=quarantine) == [
        (1, ("1", "one")), (3, ("3", "three")), (5, ("5", "five"))]
    assert [(Path(r.path).name, r.line) for r in quarantine.rejected] == [("a.txt", 2), ("b.txt", 4)]
