import pytest

from parabit.data.errors import DataFormatError
from parabit.data.msrp import read_msrp


@pytest.mark.parametrize("split,count,positives", [("train", 4076, 2753), ("test", 1725, 1147)])
def test_official_counts(split, count, positives):
    pairs = read_msrp(split)
    assert len(pairs) == count
    assert sum(p.label for p in pairs) == positives


def test_bom_and_crlf_are_stripped():
    first = read_msrp("test")[0]
    assert first.line == 2
    assert first.sentence_a.startswith("PCCW's chief operating officer")
    assert not first.sentence_b.endswith("\r")


def test_bad_label_names_file_and_line(tmp_path):
    bad = tmp_path / "msrp_bad.txt"
    bad.write_bytes("\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n1\t1\t2\ta\tb\r\nyes\t3\t4\tc\td\r\n".encode())
    with pytest.raises(DataFormatError, match=r"msrp_bad\.txt:3: quality label 'yes' is not 0 or 1"):
        read_msrp(path=bad)
