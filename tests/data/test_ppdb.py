"""PPDB 1.0 XXXL lexical synonyms: every shipped line is either a pair or a quarantined control-character row."""

from __future__ import annotations

import pytest

from parabit.data.errors import DataFormatError, Quarantine
from parabit.data.ppdb import read_ppdb_lexical


def test_every_line_is_kept_or_quarantined():
    quarantine = Quarantine()
    pairs = read_ppdb_lexical(quarantine=quarantine)
    assert len(pairs) + len(quarantine) == 210_372
    # 23 rows pair a bare C0/C1 control character (mostly Windows-1252 bytes read as Latin-1) with something.
    assert len(quarantine) == 23
    assert set(quarantine.counts) == {
        "source word has only whitespace or control characters",
        "target word has only whitespace or control characters",
    }
    assert (quarantine.rejected[0].line, quarantine.rejected[0].text) == (15785, "\x86\t†")
    assert pairs[0] == ("10/17/01", "17/10/2001")


def test_crlf_is_not_part_of_the_word():
    assert read_ppdb_lexical(limit=2) == [("10/17/01", "17/10/2001"), ("102,70", "102.70")]


def test_without_quarantine_the_first_control_character_row_raises():
    with pytest.raises(DataFormatError, match=r"uniquepairs\.gz:15785: source word has only whitespace or control"):
        read_ppdb_lexical()


def test_malformed_file_names_file_and_line(tmp_path):
    path = tmp_path / "ppdb.txt"
    path.write_text("big\tlarge\r\nsmall\r\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_ppdb_lexical(path)
    assert str(caught.value) == f"{path}:2: expected 2 tab-separated fields, found 1"
