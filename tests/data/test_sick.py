import pytest

from parabit.data.errors import DataFormatError
from parabit.data.sick import read_sick


@pytest.mark.parametrize("split,count", [("train", 4500), ("trial", 500), ("test", 4927)])
def test_official_row_counts(split, count):
    assert len(read_sick(split)) == count


def test_crlf_test_file_leaves_no_carriage_returns():
    pairs = read_sick("test")
    assert all("\r" not in p.entailment and "\r" not in p.sentence_b for p in pairs)
    assert {p.entailment for p in pairs} == {"NEUTRAL", "ENTAILMENT", "CONTRADICTION"}
    assert all(1.0 <= p.relatedness <= 5.0 for p in pairs)


def test_bad_relatedness_names_file_and_line(tmp_path):
    bad = tmp_path / "SICK_bad.txt"
    bad.write_text("pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\r\n"
                   "1\tA dog runs\tA dog is running\t4.5\tENTAILMENT\r\n"
                   "2\tA cat\tA cat sleeps\tsix\tNEUTRAL\r\n")
    with pytest.raises(DataFormatError, match=r"SICK_bad\.txt:3: .*relatedness 'six' is not a number"):
        read_sick(path=bad)


def test_wrong_header_is_an_error(tmp_path):
    bad = tmp_path / "no_header.txt"
    bad.write_text("1\tA\tB\t4.5\tENTAILMENT\n")
    with pytest.raises(DataFormatError, match=r"no_header\.txt:1: expected header"):
        read_sick(path=bad)
