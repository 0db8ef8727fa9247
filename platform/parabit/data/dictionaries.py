"""Bilingual word lists for bilingual lexicon induction (BLI): MUSE and Wiktionary-derived pairs.

Every file is a two-column word list, one translation pair per line. A word with several translations
appears on several lines. These are lexicons, not noisy bitext: a malformed line (wrong column count,
empty word) raises :class:`DataFormatError` naming file and line, unless a ``quarantine`` is passed.

Note that the Spanish Wiktionary files contain a few entries with an empty English side (es-en.all 3,
.train 2, .test 1); read them with a quarantine.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from parabit.data.errors import DataFormatError, Quarantine, lookup, reject
from parabit.data.lines import iter_lines, split_fields
from parabit.paths import data_path

MUSE_TEST_DIR = "test-5000-6500-annotated"
MUSE_TEST_KINDS = {"o": ("o",), "pn": ("pn",), "all": ("o", "pn")}
"""Annotated MUSE 5000-6500 test dictionaries: "o" ordinary pairs, "pn" proper nouns, "all" both
(the complete official test set)."""

WIKTIONARY_SPLITS = ("all", "train", "test", "testsmall")
_GZIPPED_WIKTIONARY_SPLITS = ("all", "train")


@dataclass(frozen=True)
class DictionaryEntry:
    """One word pair; ``line`` is the 1-based line number in the file it came from."""

    source_word: str
    target_word: str
    line: int


def read_word_pairs(
    path: str | Path,
    *,
    sep: str = "\t",
    quarantine: Quarantine | None = None,
    limit: int | None = None,
) -> list[DictionaryEntry]:
    """Read any two-column word list (``source SEP target``, ``.gz`` read transparently).

    A line without exactly two fields, or with a word that is empty or only whitespace/control characters,
    raises :class:`DataFormatError`, or with a ``quarantine`` is kept aside with its reason.
    ``limit`` stops after that many accepted entries.
    """
    path = Path(path)
    entries: list[DictionaryEntry] = []
    for number, text in iter_lines(path, quarantine=quarantine):
        if limit is not None and len(entries) >= limit:
            break
        try:
            source_word, target_word = split_fields(path, number, text, expected=2, sep=sep)
        except DataFormatError as err:
            reject(quarantine, path, number, err.problem, text)
            continue
        problem = _blank_word_problem(source_word, "source") or _blank_word_problem(target_word, "target")
        if problem is not None:
            reject(quarantine, path, number, problem, text)
            continue
        entries.append(DictionaryEntry(source_word, target_word, number))
    return entries


def _blank_word_problem(word: str, role: str) -> str | None:
    """Why ``word`` is not a word at all (empty, or nothing but whitespace/control characters), else None."""
    if not word:
        return f"empty {role} word"
    if word.isprintable() and not word.isspace():  # the usual word, checked in C: a character neither kind
        return None
    if all(char.isspace() or unicodedata.category(char) == "Cc" for char in word):
        return f"{role} word has only whitespace or control characters"
    return None


def read_muse(
    src: str,
    tgt: str,
    path: str | Path | None = None,
    *,
    quarantine: Quarantine | None = None,
) -> list[DictionaryEntry]:
    """Read a full MUSE ground-truth dictionary (``source SPACE target``).

    Shipped pairs: en-es 112,580, es-en 112,583, en-fr 113,286, fr-en 113,324 lines. ``path`` overrides
    the default ``dictionaries/muse/{src}-{tgt}.txt``. These full dictionaries are *not* a superset of
    the 5000-6500 test dictionaries (:func:`read_muse_test`); remove test source words to build a
    training split.
    """
    if path is None:
        path = data_path("dictionaries", "muse", f"{src}-{tgt}.txt")
    return read_word_pairs(path, sep=" ", quarantine=quarantine)


def read_muse_test(src: str, tgt: str, kind: str = "all") -> list[DictionaryEntry]:
    """Read the annotated MUSE 5000-6500 test dictionary (tab-separated); only en-es and es-en exist.

    ``kind`` is "o" (ordinary words), "pn" (proper nouns) or "all" (both: en-es 4,394 pairs over 1,500
    source words, es-en 2,416 pairs). For "all", the "o" entries come first, then the "pn" entries;
    each ``line`` refers to its own file.
    """
    if kind not in MUSE_TEST_KINDS:
        raise ValueError(f"unknown MUSE test kind {kind!r}; choose one of {sorted(MUSE_TEST_KINDS)}")
    entries: list[DictionaryEntry] = []
    for part in MUSE_TEST_KINDS[kind]:
        path = data_path("dictionaries", "muse", MUSE_TEST_DIR, f"{src}-{tgt}.5000-6500.{part}.txt")
        entries.extend(read_word_pairs(path))
    return entries


def read_muse_train(src: str, tgt: str) -> list[DictionaryEntry]:
    """The full MUSE dictionary ``src``-``tgt`` without the source words of its 5000-6500 test dictionary (where one
    is shipped: en-es, es-en; the other pairs are returned whole): what may be learned from without touching BLI's
    test words."""
    test_words: set[str] = set()
    for first, second in ((src, tgt), (tgt, src)):
        if (data_path("dictionaries", "muse", MUSE_TEST_DIR) / f"{first}-{second}.5000-6500.o.txt").exists():
            entries = read_muse_test(first, second)
            test_words |= {e.source_word if first == src else e.target_word for e in entries}
    return [entry for entry in read_muse(src, tgt) if entry.source_word not in test_words]


def read_wiktionary_bli(
    lang: str,
    split: str,
    *,
    quarantine: Quarantine | None = None,
) -> list[DictionaryEntry]:
    """Read Wiktionary-derived ``foreign TAB english`` pairs for ``lang`` ("es" or "fr").

    ``split`` is "all", "train", "test" or "testsmall" (es: 91,066 / 88,153 / 2,955 / 750 lines;
    fr: 78,837 / 76,145 / 2,742 / 750). ``source_word`` is the foreign word, ``target_word`` the English
    gloss. The Spanish files hold a few entries with an empty English side: without a ``quarantine``
    reading them raises :class:`DataFormatError`.
    """
    split = lookup(WIKTIONARY_SPLITS, split, "Wiktionary BLI split")
    name = f"{lang}-en.{split}" + (".gz" if split in _GZIPPED_WIKTIONARY_SPLITS else "")
    return read_word_pairs(data_path("dictionaries", "wiktionary-bli", name), quarantine=quarantine)
