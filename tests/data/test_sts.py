import pytest

from parabit.data.errors import DataFormatError
from parabit.data.sts import STS_SUBSETS, read_sts_files, read_sts_subset, read_sts_year

# Pairs with a gold score, from shared/data/SOURCES.md (official counts).
EXPECTED_PAIRS = {
    (2012, "train"): {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 734},
    (2012, "test"): {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750, "surprise.SMTnews": 399},
    (2013, "test"): {"FNWN": 189, "OnWN": 561, "headlines": 750},
    (2014, "test"): {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750, "OnWN": 750, "tweet-news": 750},
    (2015, "test"): {"answers-forums": 375, "answers-students": 750, "belief": 375, "headlines": 750, "images": 750},
    (2016, "test"): {"answer-answer": 254, "headlines": 249, "plagiarism": 230, "postediting": 244, "question-question": 209},
}


@pytest.mark.parametrize("release", sorted(EXPECTED_PAIRS))
def test_every_subset_has_the_official_number_of_scored_pairs(release):
    subsets = read_sts_year(*release)
    assert {s.name: len(s) for s in subsets} == EXPECTED_PAIRS[release]
    assert [s.name for s in subsets] == list(STS_SUBSETS[release])


def test_unscored_pairs_are_skipped_and_line_numbers_kept():
    forums = read_sts_subset(2015, "test", "answers-forums")
    assert len(forums) == 375  # of 2000 input lines
    assert all(0.0 <= p.score <= 5.0 for p in forums.pairs)
    assert forums.pairs[-1].line <= 2000
    assert len({p.line for p in forums.pairs}) == 375


def test_2016_four_column_lines_keep_only_the_sentences():
    first = read_sts_subset(2016, "test", "headlines").pairs[0]
    assert "\t" not in first.sentence_a and "\t" not in first.sentence_b
    assert "Europe Media Monitor" not in first.sentence_b


def test_malformed_score_names_file_and_line(tmp_path):
    inputs, gold = tmp_path / "STS.input.x.txt", tmp_path / "STS.gs.x.txt"
    inputs.write_text("a\tb\nc\td\ne\tf\n")
    gold.write_text("1.0\n\nhigh\n")
    with pytest.raises(DataFormatError, match=r"STS\.gs\.x\.txt:3: gold score 'high' is not a number"):
        read_sts_files(inputs, gold)


def test_missing_tab_names_file_and_line(tmp_path):
    inputs, gold = tmp_path / "STS.input.x.txt", tmp_path / "STS.gs.x.txt"
    inputs.write_text("a\tb\nno tab here\n")
    gold.write_text("1\n2\n")
    with pytest.raises(DataFormatError, match=r"STS\.input\.x\.txt:2: expected 2 or 4 tab-separated fields, found 1"):
        read_sts_files(inputs, gold)


def test_files_of_different_length_are_an_error(tmp_path):
    inputs, gold = tmp_path / "in.txt", tmp_path / "gs.txt"
    inputs.write_text("a\tb\nc\td\n")
    gold.write_text("1\n")
    with pytest.raises(DataFormatError, match="has 1 lines but .* has 2"):
        read_sts_files(inputs, gold)


def test_score_out_of_range(tmp_path):
    inputs, gold = tmp_path / "in.txt", tmp_path / "gs.txt"
    inputs.write_text("a\tb\n")
    gold.write_text("7.5\n")
    with pytest.raises(DataFormatError, match=r"gs\.txt:1: gold score 7.5 is outside \[0, 5\]"):
        read_sts_files(inputs, gold)
