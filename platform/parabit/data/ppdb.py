"""PPDB 1.0 XXXL lexical paraphrases, synonyms subset (the word pairs used by Sultan et al.'s aligner).

The file is ``word1 TAB word2`` (gzipped, CRLF line endings), 210,372 unique pairs. Many pairs are
noise such as number formats ("102,70" / "102.70"), so filter before using them as synonyms. In 23
lines one "word" is a bare C0/C1 control character (mostly Windows-1252 bytes read as Latin-1, e.g.
"\x80" for "€"), so read the shipped file with a ``quarantine``: 210,349 pairs are kept.
"""

from __future__ import annotations

from pathlib import Path

from parabit.data.dictionaries import read_word_pairs
from parabit.data.errors import Quarantine
from parabit.paths import data_path

PPDB_LEXICAL_FILE = ("paraphrases", "ppdb-1.0-xxxl-lexical-synonyms",
                     "ppdb-1.0-xxxl-lexical.extended.synonyms.uniquepairs.gz")


def read_ppdb_lexical(
    path: str | Path | None = None,
    *,
    quarantine: Quarantine | None = None,
    limit: int | None = None,
) -> list[tuple[str, str]]:
    """Read PPDB lexical paraphrase pairs as ``(word1, word2)`` tuples, in file order.

    ``limit`` stops after that many pairs. A malformed line (see
    :func:`parabit.data.dictionaries.read_word_pairs`) raises :class:`DataFormatError` naming file and
    line, or with a ``quarantine`` is kept aside; the shipped file needs one (see the module docstring).
    """
    if path is None:
        path = data_path(*PPDB_LEXICAL_FILE)
    return [(e.source_word, e.target_word) for e in read_word_pairs(path, quarantine=quarantine, limit=limit)]
