"""Microsoft Research Paraphrase Corpus: UTF-8 with BOM, CRLF, a header, ``Quality TAB id1 TAB id2 TAB s1 TAB s2``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from parabit.data.errors import DataFormatError, lookup
from parabit.data.lines import iter_table
from parabit.paths import data_path

MSRP_HEADER = ("Quality", "#1 ID", "#2 ID", "#1 String", "#2 String")
MSRP_FILES = {"train": "msr_paraphrase_train.txt", "test": "msr_paraphrase_test.txt"}


@dataclass(frozen=True)
class ParaphrasePair:
    """A sentence pair with a binary paraphrase label (1 = paraphrase)."""

    sentence_a: str
    sentence_b: str
    label: int
    line: int


def read_msrp(split: str = "test", path: str | Path | None = None) -> list[ParaphrasePair]:
    """Read MSRP train (4076 pairs, 2753 positive) or test (1725 pairs, 1147 positive), or an explicit file."""
    if path is None:
        path = data_path("msrp", lookup(MSRP_FILES, split, "MSRP split"))
    path = Path(path)
    pairs = []
    for number, fields in iter_table(path, MSRP_HEADER):
        if fields[0] not in ("0", "1"):
            raise DataFormatError(path, number, f"quality label {fields[0]!r} is not 0 or 1")
        pairs.append(ParaphrasePair(fields[3], fields[4], int(fields[0]), number))
    return pairs
