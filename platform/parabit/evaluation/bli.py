"""Bilingual lexicon induction (BLI) on a BilDRL target space: is a word's nearest foreign word (cosine) one of
its gold translations? Checks that a space is bilingual at all before dictionaries are trained onto it.

Test sets: MUSE 5000-6500 (en→es) and the Wiktionary BLI test split (es→en, fr→en); pairs with a word missing
from the space are left out and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

import numpy as np

from parabit.data.dictionaries import read_muse_test, read_wiktionary_bli
from parabit.data.errors import Quarantine
from parabit.evaluation.metrics import unit_rows
from parabit.evaluation.retrieval import retrieval_scores


class WordSpace(Protocol):
    """A bilingual word space (:class:`parabit.recipes.bildrl.space.BilingualSpace`): ``vectors`` and each language's
    ``word -> row``."""

    vectors: np.ndarray

    def words(self, lang: str) -> Mapping[str, int]: ...


def bli_ranks(space: WordSpace, pairs: Iterable[tuple[str, str]], src: str, tgt: str) -> tuple[np.ndarray, int]:
    """1-based rank of the best-ranked gold translation of each distinct ``src`` word among every ``tgt`` word of
    the space (cosine; ties count against the gold), and how many pairs were left out (a word not in the space)."""
    source, target = space.words(src), space.words(tgt)
    gold: dict[str, set[str]] = {}
    skipped = 0
    for a, b in pairs:
        if a in source and b in target:
            gold.setdefault(a, set()).add(b)
        else:
            skipped += 1
    candidates = list(target)
    position = {w: i for i, w in enumerate(candidates)}
    matrix = unit_rows(space.vectors[[target[w] for w in candidates]])
    words = sorted(gold)
    ranks = []
    for start in range(0, len(words), 512):
        chunk = words[start:start + 512]
        scores = unit_rows(space.vectors[[source[w] for w in chunk]]) @ matrix.T
        for row, word in zip(scores, chunk):
            best = row[[position[t] for t in gold[word]]].max()
            ranks.append(int((row > best).sum()) + 1)
    return np.asarray(ranks, dtype=np.int64), skipped


def bli_scores(space: WordSpace, pairs: Iterable[tuple[str, str]], src: str, tgt: str) -> dict[str, float]:
    """``p_at_1``, ``p_at_10``, ``mrr`` (fractions) over the distinct source words, plus ``words`` and ``skipped``."""
    ranks, skipped = bli_ranks(space, pairs, src, tgt)
    return {**retrieval_scores(ranks), "words": float(len(ranks)), "skipped_pairs": float(skipped)}


def standard_bli_sets(lang: str) -> dict[str, tuple[list[tuple[str, str]], str, str]]:
    """The test sets of ``lang``'s space: ``name -> (pairs, src, tgt)``."""
    wiktionary = read_wiktionary_bli(lang, "test", quarantine=Quarantine())  # es: one entry without English side
    sets = {f"{lang}-en Wiktionary test": ([(e.source_word, e.target_word) for e in wiktionary], lang, "en")}
    if lang == "es":
        sets["en-es MUSE 5000-6500"] = ([(e.source_word, e.target_word) for e in read_muse_test("en", "es")], "en", "es")
    return sets

