"""SemEval STS 2012–2016 (English): ``STS.input.<set>.txt`` + ``STS.gs.<set>.txt`` pairs.

The input line is ``sent1 TAB sent2`` (2016 adds ``TAB src1 TAB src2``); the gold file holds one score in
[0, 5] per input line. In 2015 and 2016 unscored pairs have an empty gold line and are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from parabit.data.errors import DataFormatError
from parabit.data.lines import iter_lines, split_fields
from parabit.paths import data_path


@dataclass(frozen=True)
class SimilarityPair:
    """Two sentences and their gold similarity; ``line`` is the 1-based line in the input file."""

    sentence_a: str
    sentence_b: str
    score: float
    line: int


@dataclass(frozen=True)
class STSSubset:
    """One scored STS subset, e.g. year 2014, split "test", name "deft-forum"."""

    year: int
    split: str
    name: str
    pairs: tuple[SimilarityPair, ...]

    def __len__(self) -> int:
        return len(self.pairs)


# The official subsets of each release, in the order the seed tables list them. Explicit, so a
# missing file is an error rather than a silently smaller benchmark.
STS_SUBSETS: dict[tuple[int, str], tuple[str, ...]] = {
    (2012, "train"): ("MSRpar", "MSRvid", "SMTeuroparl"),
    (2012, "test"): ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.SMTnews", "surprise.OnWN"),
    (2013, "test"): ("headlines", "OnWN", "FNWN"),
    (2014, "test"): ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    (2015, "test"): ("answers-forums", "answers-students", "headlines", "belief", "images"),
    (2016, "test"): ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}

# The benchmark years reported in the seed tables (2012 means the 2012 *test* sets).
STS_BENCHMARK_YEARS: tuple[int, ...] = (2012, 2013, 2014, 2015, 2016)


def _file_names(year: int, name: str) -> tuple[str, str]:
    prefix = "STS2016" if year == 2016 else "STS"
    return f"{prefix}.input.{name}.txt", f"{prefix}.gs.{name}.txt"


def read_sts_files(input_path: str | Path, gold_path: str | Path) -> list[SimilarityPair]:
    """Read one STS input/gold file pair; pairs whose gold line is empty are skipped.

    Raises :class:`DataFormatError` (file and line) on a wrong field count, a non-numeric or out-of-range
    score, or when the two files differ in length.
    """
    input_path, gold_path = Path(input_path), Path(gold_path)
    inputs = list(iter_lines(input_path))
    golds = list(iter_lines(gold_path))
    # A trailing empty line at the end of a gold file is an artefact, not an unscored pair.
    while len(golds) > len(inputs) and not golds[-1][1].strip():
        golds.pop()
    if len(inputs) != len(golds):
        raise DataFormatError(
            gold_path, None, f"has {len(golds)} lines but {input_path} has {len(inputs)}; they must align"
        )
    pairs = []
    for (number, text), (_, gold) in zip(inputs, golds):
        gold = gold.strip()
        if not gold:
            continue
        fields = split_fields(input_path, number, text, expected=(2, 4))
        try:
            score = float(gold)
        except ValueError:
            raise DataFormatError(gold_path, number, f"gold score {gold!r} is not a number") from None
        if not 0.0 <= score <= 5.0:
            raise DataFormatError(gold_path, number, f"gold score {score} is outside [0, 5]")
        pairs.append(SimilarityPair(fields[0], fields[1], score, number))
    return pairs


def read_sts_subset(year: int, split: str, name: str) -> STSSubset:
    """Read one official subset from ``$PARABIT_DATA/sts/<year>-<split>/``."""
    if (year, split) not in STS_SUBSETS:
        raise ValueError(f"no STS release {year}-{split}; known: {sorted(STS_SUBSETS)}")
    folder = f"{year}-{split}"
    input_name, gold_name = _file_names(year, name)
    pairs = read_sts_files(data_path("sts", folder, input_name), data_path("sts", folder, gold_name))
    return STSSubset(year, split, name, tuple(pairs))


def read_sts_year(year: int, split: str = "test") -> list[STSSubset]:
    """Every official subset of one release, in the seed tables' order."""
    if (year, split) not in STS_SUBSETS:
        raise ValueError(f"no STS release {year}-{split}; known: {sorted(STS_SUBSETS)}")
    return [read_sts_subset(year, split, name) for name in STS_SUBSETS[(year, split)]]
