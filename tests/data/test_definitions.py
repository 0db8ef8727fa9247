"""WordNet 3.0 glosses, WOLF French lemmas, and the join between them."""

from __future__ import annotations

import gzip
import re
from collections import Counter

import pytest

from parabit.data.definitions import (
    join_wolf_to_wordnet,
    lemma_text,
    read_wolf,
    read_wordnet_glosses,
    split_gloss,
    wordnet_join_key,
)
from parabit.data.errors import DataFormatError


@pytest.fixture(scope="module")
def synsets():
    return read_wordnet_glosses()


@pytest.fixture(scope="module")
def wolf():
    return read_wolf()


def test_wordnet_synset_counts_per_pos(synsets):
    assert len(synsets) == 117_659
    assert Counter(s.pos for s in synsets) == {"n": 82_115, "v": 13_767, "a": 7_463, "s": 10_693, "r": 3_621}
    assert len({s.synset_id for s in synsets}) == 117_659


def test_wordnet_record_fields(synsets):
    by_id = {s.synset_id: s for s in synsets}
    abstraction = by_id["00002137-n"]
    assert abstraction.lemmas == ("abstraction", "abstract entity")
    assert abstraction.lex_filenum == 3
    assert abstraction.examples == ()
    assert abstraction.definition == abstraction.gloss
    decelerate = by_id["00439958-v"]
    assert decelerate.lemmas == ("decelerate", "slow", "slow down", "slow up", "retard")
    assert decelerate.definition == "lose velocity; move more slowly"
    assert decelerate.examples == ("The car decelerated",)
    # Attributions after an example are dropped; ';' inside a quoted example does not split it.
    vengeance = by_id["01235463-n"]
    assert vengeance.examples[:2] == (
        "Vengeance is mine; I will repay, saith the Lord",
        "For vengeance I would do nothing. This nation is too great to look for mere revenge",
    )
    assert len(vengeance.examples) == 4


def test_every_synset_has_a_definition_and_example_totals(synsets):
    assert all(s.definition for s in synsets)
    assert sum(bool(s.examples) for s in synsets) == 32_884
    assert sum(len(s.examples) for s in synsets) == 48_277


@pytest.mark.parametrize(("gloss", "definition", "examples"), [
    ("a thing", "a thing", ()),
    ('significant progress (especially in the phrase "make strides"); "they made big strides"',
     'significant progress (especially in the phrase "make strides")', ("they made big strides",)),
    ('capable of taking in; "an assimilative substance', "capable of taking in", ("an assimilative substance",)),
    ('a group; "a"; "b"- Bible; "c"', "a group", ("a", "b", "c")),
])
def test_split_gloss(gloss, definition, examples):
    assert split_gloss(gloss) == (definition, examples)


def test_lemma_text():
    assert lemma_text("slow_down") == "slow down"


def test_wolf_rows(wolf):
    assert len(wolf) == 102_647
    assert (wolf[0].synset_id, wolf[0].lemma) == ("00001740-a", "comptable")
    assert not any(entry.synset_id.endswith("-s") for entry in wolf)


def test_wordnet_join_key():
    assert wordnet_join_key("00005930-s") == "00005930-a"
    assert wordnet_join_key("00001740-a") == "00001740-a"
    assert wordnet_join_key("00001740-n") == "00001740-n"


def test_wolf_joins_wordnet_as_documented(wolf, synsets):
    joined = join_wolf_to_wordnet(wolf, synsets)
    assert len(joined) == 87_312
    assert len({entry.synset_id for entry, _ in joined}) == 50_763
    assert len({entry.synset_id for entry in wolf}) == 59_091
    # Satellite adjectives only join through the "-s" -> "-a" mapping.
    assert any(synset.pos == "s" for _, synset in joined)
    matched = {id(entry) for entry, _ in joined}
    unmatched = Counter(entry.synset_id[-1] for entry in wolf if id(entry) not in matched)
    assert unmatched == {"v": 10_467, "a": 4_868}


def _write_gz(path, text: str):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(text)
    return path


def test_wordnet_wrong_header(tmp_path):
    path = _write_gz(tmp_path / "glosses.tsv.gz", "id\tpos\tlex\tlemmas\tgloss\n")
    with pytest.raises(DataFormatError, match=rf"^{re.escape(str(path))}:1: expected header"):
        read_wordnet_glosses(path)


def test_wordnet_bad_synset_id(tmp_path):
    header = "synset_id\tpos\tlex_filenum\tlemmas\tgloss\n"
    path = _write_gz(tmp_path / "glosses.tsv.gz", header + "00001740-n\tv\t03\tentity\ta thing\n")
    with pytest.raises(DataFormatError) as caught:
        read_wordnet_glosses(path)
    assert str(caught.value) == f"{path}:2: bad synset id '00001740-n' for pos 'v'"


def test_wolf_unexpected_row_type(tmp_path):
    path = _write_gz(tmp_path / "wn-data-fra.tab.gz", "# WOLF\tfra\turl\tCeCILL-C\n00001740-n\tfra:def\tun truc\n")
    with pytest.raises(DataFormatError, match=rf"^{re.escape(str(path))}:2: expected row type 'fra:lemma', found 'fra:def'$"):
        read_wolf(path)
