import gzip

import pytest

from parabit.data.errors import DataFormatError, Quarantine
from parabit.data.lines import iter_lines


def test_gzip_bom_and_crlf(tmp_path):
    path = tmp_path / "x.txt.gz"
    with gzip.open(path, "wb") as handle:
        handle.write("\ufeffone\r\ntwo\n".encode())
    assert list(iter_lines(path)) == [(1, "one"), (2, "two")]


def test_undecodable_line_raises_with_file_and_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"fine\ncaf\xe9\n")
    with pytest.raises(DataFormatError, match=r"latin1\.txt:2: undecodable bytes"):
        list(iter_lines(path))


def test_undecodable_line_is_quarantined_with_its_reason(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"fine\ncaf\xe9\nlast\n")
    quarantine = Quarantine()
    assert list(iter_lines(path, quarantine=quarantine)) == [(1, "fine"), (3, "last")]
    assert len(quarantine) == 1
    rejected = quarantine.rejected[0]
    assert (rejected.line, rejected.text) == (2, "caf\ufffd")
    assert "undecodable" in rejected.reason


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match="does not exist"):
        list(iter_lines(tmp_path / "nope.txt"))
