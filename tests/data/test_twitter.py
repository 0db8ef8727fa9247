"""Twitter URL paraphrase corpus: three line-aligned files per split."""

from __future__ import annotations

import gzip

import pytest

from parabit.data.errors import DataFormatError
from parabit.data.twitter import read_twitter_url


@pytest.mark.parametrize(("split", "pairs", "positive"), [("train", 42_200, 11_167), ("test", 9_324, 1_820)])
def test_split_sizes_and_positives(split, pairs, positive):
    records = read_twitter_url(split)
    assert len(records) == pairs
    assert sum(r.label for r in records) == positive
    assert {r.label for r in records} == {0, 1}
    assert records[-1].line == pairs


def test_first_training_pair():
    first = read_twitter_url("train")[0]
    assert first.sentence_a == "how the metaphors we use to describe discovery affect men and women in the sciences"
    assert first.sentence_b == "light bulbs or seeds ? how metaphors for ideas influence judgments about genius"
    assert (first.label, first.line) == (0, 1)


def _make_split(folder, a_lines, b_lines, labels):
    folder.mkdir()
    for name, lines in (("a.toks.gz", a_lines), ("b.toks.gz", b_lines)):
        with gzip.open(folder / name, "wt", encoding="utf-8") as handle:
            handle.write("".join(f"{line}\n" for line in lines))
    (folder / "sim.txt").write_text("".join(f"{label}\n" for label in labels), encoding="utf-8")
    return folder


def test_length_mismatch_names_all_three_files(tmp_path):
    folder = _make_split(tmp_path / "split", ["a one", "a two"], ["b one", "b two"], ["1"])
    with pytest.raises(DataFormatError) as caught:
        read_twitter_url(directory=folder)
    message = str(caught.value)
    for name, count in (("a.toks.gz", 2), ("b.toks.gz", 2), ("sim.txt", 1)):
        assert f"{folder / name} has {count} lines" in message


def test_bad_label_names_file_and_line(tmp_path):
    folder = _make_split(tmp_path / "split", ["a one", "a two"], ["b one", "b two"], ["1", "0.5"])
    with pytest.raises(DataFormatError) as caught:
        read_twitter_url(directory=folder)
    assert str(caught.value) == f"{folder / 'sim.txt'}:2: label '0.5' is not 0 or 1"


def test_empty_sentence_names_file_and_line(tmp_path):
    folder = _make_split(tmp_path / "split", ["a one", "a two"], ["b one", " "], ["1", "0"])
    with pytest.raises(DataFormatError, match=r"b\.toks\.gz:2: empty sentence$"):
        read_twitter_url(directory=folder)


def test_unknown_split():
    with pytest.raises(ValueError, match="unknown Twitter URL split 'dev'"):
        read_twitter_url("dev")
