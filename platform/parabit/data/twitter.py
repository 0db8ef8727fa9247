"""Twitter URL Paraphrase Corpus (Lan et al., 2017), a stand-in for SemEval-2015 PIT.

Each split is a folder of three line-aligned files: ``a.toks.gz`` and ``b.toks.gz`` (lower-cased,
tokenised tweets, one per line) and ``sim.txt`` (the label, 1 = paraphrase). The text keeps the source's
tokenised HTML entities (e.g. "& amp ;"); it is returned as is.
"""

from __future__ import annotations

from pathlib import Path

from parabit.data.bitext import read_aligned_lines
from parabit.data.errors import DataFormatError, lookup
from parabit.data.msrp import ParaphrasePair
from parabit.paths import data_path

TWITTER_SPLITS = ("train", "test")
TWITTER_FILES = ("a.toks.gz", "b.toks.gz", "sim.txt")


def read_twitter_url(split: str = "test", directory: str | Path | None = None) -> list[ParaphrasePair]:
    """Read a split: "train" (42,200 pairs, 11,167 positive) or "test" (9,324 pairs, 1,820 positive).

    ``directory`` overrides the split's folder; it must hold the three files. Returns the same
    :class:`ParaphrasePair` records as MSRP (``line`` is the shared line number). Raises
    :class:`DataFormatError` when the files differ in length (naming all three), when a label is not
    0 or 1, or when a sentence is empty (file:line).
    """
    if directory is None:
        directory = data_path("twitter-url-corpus", lookup(TWITTER_SPLITS, split, "Twitter URL split"))
    paths = [Path(directory) / name for name in TWITTER_FILES]
    pairs = []
    for number, (sentence_a, sentence_b, label) in read_aligned_lines(paths):
        for path, sentence in zip(paths, (sentence_a, sentence_b)):
            if not sentence.strip():
                raise DataFormatError(path, number, "empty sentence")
        if label not in ("0", "1"):
            raise DataFormatError(paths[2], number, f"label {label!r} is not 0 or 1")
        pairs.append(ParaphrasePair(sentence_a, sentence_b, int(label), number))
    return pairs
