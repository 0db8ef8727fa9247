"""Moses-style phrase extraction: every phrase pair consistent with a word alignment (Koehn, SMT book §5.2.3).

A pair of spans (English ``[e1, e2]``, foreign ``[f1, f2]``) is consistent with alignment A when no word inside one
span is aligned to a word outside the other, and at least one link falls inside both. Unaligned foreign words at the
edges of a consistent foreign span extend it (each extension is another pair). Both spans are limited to
``max_length`` tokens.

nltk's ``phrase_extraction`` implements the same algorithm, but with a length limit it truncates a foreign span
longer than the limit instead of dropping it (emitting pairs that are not consistent) and extends over unaligned
words past the limit; it also tests membership in a list. This version keeps to the definition, and is compared
with nltk on sentences where the limit does not bind (tests) and in speed (``bench/bench_phrase_extraction.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

Span = tuple[int, int]  # [start, end) token offsets


def consistent_spans(english_length: int, foreign_length: int, alignment: Iterable[tuple[int, int]],
                     max_length: int) -> list[tuple[Span, Span]]:
    """The (English span, foreign span) pairs consistent with ``alignment``, as ``[start, end)`` offsets."""
    links_of_e: list[list[int]] = [[] for _ in range(english_length)]
    min_e = [english_length] * foreign_length
    max_e = [-1] * foreign_length
    for i, j in alignment:
        if not (0 <= i < english_length and 0 <= j < foreign_length):
            raise ValueError(f"link {i}-{j} is outside a {english_length} x {foreign_length} sentence pair")
        links_of_e[i].append(j)
        min_e[j] = min(min_e[j], i)
        max_e[j] = max(max_e[j], i)
    aligned_f = [m >= 0 for m in max_e]
    spans = []
    for e_start in range(english_length):
        f_low, f_high = foreign_length, -1
        for e_end in range(e_start, min(english_length, e_start + max_length)):
            for j in links_of_e[e_end]:
                f_low, f_high = min(f_low, j), max(f_high, j)
            if f_high < 0:
                continue  # no link yet: the pair needs at least one
            if f_high - f_low + 1 > max_length:
                break  # the foreign span only grows with e_end
            if any(aligned_f[j] and (min_e[j] < e_start or max_e[j] > e_end) for j in range(f_low, f_high + 1)):
                continue  # a foreign word inside links outside the English span; a longer one may still fit
            f_start = f_low
            while f_start >= 0 and (f_start == f_low or not aligned_f[f_start]):
                f_end = f_high
                while f_end < foreign_length and (f_end == f_high or not aligned_f[f_end]) \
                        and f_end - f_start + 1 <= max_length:
                    spans.append(((e_start, e_end + 1), (f_start, f_end + 1)))
                    f_end += 1
                f_start -= 1
                if f_high - f_start + 1 > max_length:
                    break
    return spans


def extract_phrase_pairs(english: Sequence[str], foreign: Sequence[str], alignment: Iterable[tuple[int, int]],
                         max_length: int) -> list[tuple[str, str]]:
    """The consistent phrase pairs of one aligned sentence pair, as space-joined ``(english, foreign)`` strings."""
    return [(" ".join(english[e0:e1]), " ".join(foreign[f0:f1]))
            for (e0, e1), (f0, f1) in consistent_spans(len(english), len(foreign), alignment, max_length)]


def count_phrase_pairs(rows: Iterable[tuple[Sequence[str], Sequence[str], Iterable[tuple[int, int]]]],
                       max_length: int) -> Counter:
    """How often each phrase pair is extracted from ``(english tokens, foreign tokens, links)`` rows."""
    counts: Counter = Counter()
    for english, foreign, alignment in rows:
        counts.update(extract_phrase_pairs(english, foreign, alignment, max_length))
    return counts
