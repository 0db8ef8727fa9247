"""Sentence-aligned English–foreign bitext: Tatoeba (manythings.org) and Moses-style line-aligned corpora.

Two formats are read:

* Tatoeba/manythings: one pair per line, ``english TAB foreign`` (newer manythings files add a third
  attribution column, which is ignored).
* Line-aligned (Moses) corpora such as Europarl and WMT newstest: two files, line *i* of one is the
  translation of line *i* of the other. The text is Moses-tokenised with XML escapes (``&apos;``,
  ``&quot;``, ``&amp;`` ...), which are unescaped by default.

Bitext is noisy, so bad lines (an empty side, an over-long line, undecodable bytes, a wrong column count)
go through :func:`parabit.data.errors.reject`: without a ``quarantine`` the first one raises
:class:`DataFormatError`; with one, they are kept aside with their reason and reading goes on. A corpus
whose two files differ in length is always an error, because every pair after the gap would be wrong.

With ``heldout`` (a :class:`HeldOutSentences`, e.g. :class:`parabit.data.heldout.HeldoutSets`), a pair that shares a
sentence with the held-out evaluation sets is quarantined too, with its ``reason`` (``held-out evaluation sentence``;
a ``quarantine`` is then required: such a line is not an error).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from parabit.data.errors import DataFormatError, Quarantine, lookup, reject
from parabit.data.lines import count_lines, iter_lines, split_fields
from parabit.paths import data_path


class HeldOutSentences(Protocol):
    """What a reader asks of the sentences it must leave out of training: whether it holds a sentence, and the
    reason the quarantine records. :class:`parabit.data.heldout.HeldoutSets` is one; the held-out sets are read with
    these readers, so the readers name only this contract, not that class."""

    reason: str

    def holds(self, text: str, lang: str) -> bool: ...


DEFAULT_MAX_CHARS = 2000
"""Lines longer than this (in characters, after normalisation) are rejected: they are almost always
several sentences glued together by a broken alignment, and they blow up padded batches."""

TATOEBA_FILES = {"es": ("tatoeba-en-es", "spa.txt.gz"), "fr": ("tatoeba-en-fr", "fra.txt.gz")}

# Europarl v7 excerpt for training, WMT newstest2012 for development, newstest2013 for testing.
EUROPARL_SPLIT_STEMS = {"train": "europarl-v7.{lang}-en", "dev": "newstest2012", "test": "newstest2013"}

LANGUAGE_NAMES = {"en": "English", "es": "Spanish", "fr": "French"}


@dataclass(frozen=True)
class BitextPair:
    """One translation pair.

    ``source`` is the corpus tag ("tatoeba", or the file stem of a line-aligned corpus such as
    "europarl-v7.es-en" or "newstest2013"); ``line`` is the 1-based line number in the source file(s);
    ``lang`` is the foreign language code, e.g. "es".
    """

    source: str
    line: int
    en: str
    foreign: str
    lang: str


def read_tatoeba(*args, **kwargs) -> list[BitextPair]:
    """:func:`iter_tatoeba`, all pairs at once (same arguments)."""
    return list(iter_tatoeba(*args, **kwargs))


def iter_tatoeba(
    path: str | Path | None = None,
    *,
    lang: str = "es",
    quarantine: Quarantine | None = None,
    limit: int | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    heldout: HeldOutSentences | None = None,
) -> Iterator[BitextPair]:
    """Read a manythings.org Tatoeba file (``english TAB foreign [TAB attribution]``) one pair at a time, as the
    file is read (memory does not grow with it).

    ``path`` defaults to the shipped file for ``lang`` ("es": 118,964 pairs, "fr": 167,130 pairs).
    ``limit`` stops after that many accepted pairs. Each side is only trimmed: Tatoeba is raw text, so
    ``&`` is a literal ampersand and interior (e.g. French non-breaking) spaces are kept. ``heldout``: see the
    module docstring.
    """
    _check_heldout(heldout, quarantine)
    if path is None:
        path = data_path("bitext", *lookup(TATOEBA_FILES, lang, "Tatoeba language"))
    path = Path(path)
    accepted = 0
    for number, text in iter_lines(path, quarantine=quarantine):
        if limit is not None and accepted >= limit:
            return
        try:
            en, foreign = split_fields(path, number, text, expected=(2, 3))[:2]
        except DataFormatError as err:
            reject(quarantine, path, number, err.problem, text)
            continue
        # Raw text: only trim the ends, so French non-breaking spaces before "!", "?" etc. stay as written.
        en, foreign = en.strip(), foreign.strip()
        problem = _pair_problem(en, foreign, lang, max_chars, heldout)
        if problem is not None:
            _, reason = problem
            reject(quarantine, path, number, reason, text)
            continue
        accepted += 1
        yield BitextPair("tatoeba", number, en, foreign, lang)


def read_line_aligned(*args, **kwargs) -> list[BitextPair]:
    """:func:`iter_line_aligned`, all pairs at once (same arguments)."""
    return list(iter_line_aligned(*args, **kwargs))


def iter_line_aligned(
    en_path: str | Path,
    foreign_path: str | Path,
    *,
    lang: str,
    quarantine: Quarantine | None = None,
    limit: int | None = None,
    unescape: bool = True,
    max_chars: int = DEFAULT_MAX_CHARS,
    heldout: HeldOutSentences | None = None,
) -> Iterator[BitextPair]:
    """Read a Moses-style pair of line-aligned files (e.g. ``corpus.en`` and ``corpus.es``) one pair at a time,
    both files in step (memory does not grow with them).

    Each side is XML-unescaped with :func:`html.unescape` (unless ``unescape=False``) and its whitespace
    collapsed. A pair with an empty or over-long side is rejected (reason e.g. "empty English side"),
    recorded against the file of the offending side. ``limit`` caps the number of pairs returned; a length
    mismatch is detected all the same (both files are counted first). ``heldout``: see the module docstring.

    Raises :class:`DataFormatError` naming both files and their line counts when the counts differ,
    even when a ``quarantine`` is given (before the first pair).
    """
    _check_heldout(heldout, quarantine)
    en_path, foreign_path = Path(en_path), Path(foreign_path)
    source = en_path.stem  # "europarl-v7.es-en.en" -> "europarl-v7.es-en"
    accepted = 0
    for number, (raw_en, raw_foreign) in iter_aligned_lines([en_path, foreign_path], quarantine=quarantine):
        if limit is not None and accepted >= limit:
            return
        en, foreign = _normalise(raw_en, unescape), _normalise(raw_foreign, unescape)
        problem = _pair_problem(en, foreign, lang, max_chars, heldout)
        if problem is not None:
            side, reason = problem
            reject(quarantine, en_path if side == "en" else foreign_path, number, reason, f"{raw_en}\t{raw_foreign}")
            continue
        accepted += 1
        yield BitextPair(source, number, en, foreign, lang)


def iter_sentences(
    path: str | Path,
    *,
    lang: str,
    quarantine: Quarantine | None = None,
    unescape: bool = True,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Iterator[tuple[int, str]]:
    """One side of a corpus, one sentence per line (e.g. a Moses file, or a pile of sentences to mine), as
    ``(line number, sentence)``: XML-unescaped unless ``unescape=False``, whitespace collapsed; an empty or over-long
    line is rejected as in :func:`iter_line_aligned` (with a ``quarantine``, kept there with its reason)."""
    name = LANGUAGE_NAMES.get(lang, lang)
    for number, raw in iter_lines(Path(path), quarantine=quarantine):
        text = _normalise(raw, unescape)
        if not text or len(text) > max_chars:
            reject(quarantine, path, number, f"empty {name} line" if not text else
                   f"{name} line longer than {max_chars} characters", raw)
            continue
        yield number, text


def read_europarl(
    lang: str = "es",
    split: str = "train",
    *,
    quarantine: Quarantine | None = None,
    limit: int | None = None,
    unescape: bool = True,
    heldout: HeldOutSentences | None = None,
) -> list[BitextPair]:
    """Read the shipped Europarl/WMT bitext for ``lang`` ("es" or "fr").

    ``split`` is "train" (Europarl v7 excerpt, 20,000 lines; 22 (es) / 35 (fr) have an empty English
    side, so pass a ``quarantine`` or the read raises), "dev" (newstest2012, 3003 lines) or "test"
    (newstest2013, 3000 lines). See :func:`read_line_aligned` for the cleaning applied.
    """
    stem = lookup(EUROPARL_SPLIT_STEMS, split, "Europarl split").format(lang=lang)
    folder = f"europarl-wmt-en-{lang}"
    return read_line_aligned(
        data_path("bitext", folder, f"{stem}.en"),
        data_path("bitext", folder, f"{stem}.{lang}"),
        lang=lang,
        quarantine=quarantine,
        limit=limit,
        unescape=unescape,
        heldout=heldout,
    )


def read_aligned_lines(
    paths: Sequence[str | Path],
    *,
    quarantine: Quarantine | None = None,
) -> list[tuple[int, tuple[str, ...]]]:
    """Read files that hold one item per line in step; return ``(line_number, texts)`` per line.

    Raises :class:`DataFormatError` naming every file and its line count when the counts differ, with or
    without a ``quarantine``. A line that is not UTF-8 in any file raises, or with a ``quarantine`` is
    recorded there (by :func:`iter_lines`) and that line number is left out for all files.
    """
    return list(iter_aligned_lines(paths, quarantine=quarantine))


def iter_aligned_lines(
    paths: Sequence[str | Path],
    *,
    quarantine: Quarantine | None = None,
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """:func:`read_aligned_lines` one line number at a time. The files are counted first, so a length mismatch
    raises before anything is yielded; then they are read in step, holding one line of each."""
    paths = [Path(p) for p in paths]
    counts = [count_lines(path) for path in paths]
    if len(set(counts)) > 1:
        sizes = ", ".join(f"{path} has {count} lines" for path, count in zip(paths, counts))
        raise DataFormatError(paths[0], None, f"line-aligned files differ in length: {sizes}")
    # iter_lines leaves out a file's undecodable lines (quarantined): yield only line numbers every file has.
    streams = [iter_lines(path, quarantine=quarantine) for path in paths]
    heads = [next(stream, None) for stream in streams]
    while all(head is not None for head in heads):
        number = max(head[0] for head in heads)
        heads = [head if head[0] == number else _advance_to(stream, number) for head, stream in zip(heads, streams)]
        if any(head is None for head in heads):
            return
        if all(head[0] == number for head in heads):
            yield number, tuple(head[1] for head in heads)
            heads = [next(stream, None) for stream in streams]


def _advance_to(stream: Iterator[tuple[int, str]], number: int) -> tuple[int, str] | None:
    """The first line of ``stream`` numbered ``number`` or later (None at the end)."""
    for head in stream:
        if head[0] >= number:
            return head
    return None


def _normalise(text: str, unescape: bool) -> str:
    """Undo Moses XML escapes (optionally) and collapse whitespace runs into single spaces."""
    if unescape:
        text = html.unescape(text)
    return " ".join(text.split())


def _check_heldout(heldout: HeldOutSentences | None, quarantine: Quarantine | None) -> None:
    if heldout is not None and quarantine is None:
        raise ValueError("excluding held-out pairs needs a quarantine: they are kept there with their reason")


def _pair_problem(en: str, foreign: str, lang: str, max_chars: int,
                  heldout: HeldOutSentences | None = None) -> tuple[str, str] | None:
    """``(side, reason)`` when a cleaned pair is unusable (or held out, with ``heldout``), else None; side is "en"
    or ``lang``.

    Reasons are fixed strings such as "empty English side", so ``Quarantine.counts`` groups them.
    """
    for code, text in (("en", en), (lang, foreign)):
        name = LANGUAGE_NAMES.get(code, code)
        if not text:
            return code, f"empty {name} side"
        if len(text) > max_chars:
            return code, f"{name} side longer than {max_chars} characters"
    if heldout is not None:
        if heldout.holds(en, "en"):
            return "en", heldout.reason
        if heldout.holds(foreign, lang):
            return lang, heldout.reason
    return None
