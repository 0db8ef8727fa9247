"""Elgohary & Carpuat's data analyses: undertrained words (Table 4) and how many pairs each condition offers (the
sizes of Tables 5 and 6). The trained tables are declared in :mod:`parabit.papers.elgohary.tables`."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow.parquet as pq

from parabit.data.sick import read_sick
from parabit.data.sts import read_sts_year
from parabit.recipes.pairs.config import DataConfig
from parabit.recipes.pairs.data import prepare_pairs
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import UNK_WORD
from parabit.training import PreparedData

UNDERTRAINED_BELOW = 100
TEST_SETS = ("sts2012", "sts2013", "sts2014", "sts2015", "sick")


def english_counts(prepared: PreparedData) -> Counter:
    """How often each English word occurs in the prepared training pairs (every English side)."""
    table = pq.read_table(prepared.pairs_path)
    sides = ["a"] + (["b"] if prepared.lang_b == "en" else [])
    totals = np.zeros(len(prepared.vocab), dtype=np.int64)
    for side in sides:
        ids = np.asarray(table.column(f"ids_{side}").combine_chunks().flatten().to_numpy(zero_copy_only=False))
        totals += np.bincount(ids, minlength=len(prepared.vocab))
    return Counter({word: int(totals[i]) for i, word in prepared.vocab.words("en") if word != UNK_WORD})


def test_sentences(name: str) -> list[str]:
    """Every sentence of an evaluation set (``sts2012``…``sts2015`` test, all subsets; ``sick`` test)."""
    if name == "sick":
        return [s for pair in read_sick("test") for s in (pair.sentence_a, pair.sentence_b)]
    return [s for subset in read_sts_year(int(name[3:]), "test") for pair in subset.pairs
            for s in (pair.sentence_a, pair.sentence_b)]


def undertrained_ratio(counts: Counter, sentences: list[str], tokenizer: Tokenizer,
                       below: int = UNDERTRAINED_BELOW) -> float:
    """The share of test tokens (occurrences) whose word was seen fewer than ``below`` times in training."""
    tokens = [token for sentence in sentences for token in tokenizer(sentence)]
    return sum(counts.get(token, 0) < below for token in tokens) / max(len(tokens), 1)


def undertrained_ratios(data: DataConfig) -> dict[str, float]:
    """Table 4 for one condition's training pairs: the undertrained-word ratio of each test set."""
    prepared = prepare_pairs(data)
    counts = english_counts(prepared)
    return {name: undertrained_ratio(counts, test_sentences(name), prepared.tokenizer) for name in TEST_SETS}


def pairs_available(data: DataConfig) -> int:
    """Training pairs of a condition before any ``max_pairs`` sample (after duplicates and filters)."""
    stats = prepare_pairs(data).stats
    return stats["pairs_kept"] + stats["rejected"].get("beyond max_pairs sample", 0)
