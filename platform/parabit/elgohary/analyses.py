"""Elgohary & Carpuat's analyses: undertrained words (Table 4), memorisation (Table 5), training size (Table 6)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from parabit.data.sick import read_sick
from parabit.data.sts import read_sts_year
from parabit.elgohary.config import train_config
from parabit.elgohary.paper import CONDITION_LABELS, TABLE4, TABLE5, TABLE6, TABLE6_SIZES
from parabit.evaluation import EvaluationReport
from parabit.pairs.config import PairsConfig
from parabit.pairs.data import prepare_pairs
from parabit.text.tokenize import Tokenizer
from parabit.text.vocab import UNK_WORD
from parabit.training.prepared import PreparedData

UNDERTRAINED_BELOW = 100
TEST_SETS = ("sts2012", "sts2013", "sts2014", "sts2015", "sick")
PAPER_COLUMN = {"ppdb": 0, "pivot_paraphrases": 0, "bilingual_phrases": 1, "bilingual_sentences": 2}


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


def undertrained_table(trains: dict[tuple[str, str], PairsConfig]) -> pd.DataFrame:
    """Table 4 for each condition's training pairs (the J_bi run's data; both objectives train on the same)."""
    columns = {}
    for (condition, _), train in trains.items():
        label = CONDITION_LABELS[condition]
        if label in columns:
            continue
        prepared = prepare_pairs(train.data)
        counts = english_counts(prepared)
        columns[label] = {name: f"{undertrained_ratio(counts, test_sentences(name), prepared.tokenizer):.2f} "
                                f"({TABLE4[name][PAPER_COLUMN[condition]]:.2f})" for name in TEST_SETS}
    return pd.DataFrame(columns).rename_axis("test set").reset_index()


def _pool(train: PairsConfig) -> tuple[int, dict]:
    """Pairs available before the ``max_pairs`` sample, and the rejection counts, of a run's prepared data."""
    stats = prepare_pairs(train.data).stats
    return stats["pairs_kept"] + stats["rejected"].get("beyond max_pairs sample", 0), stats


def memorisation_table(config, trains, reports, filtered: dict[str, EvaluationReport], data_paths) -> pd.DataFrame:
    """Table 5: SICK r of J_bi with all pairs and with pairs sharing a SICK-test bigram removed (same sample size)."""
    rows = []
    for condition, report in filtered.items():
        before, _ = _pool(trains[(condition, "jbi")])
        after, stats = _pool(train_config(config, condition, "jbi", data_paths, "-nosickbigram",
                                          drop_bigrams_of=["sick"]))
        paper = TABLE5["MonoPh" if condition in ("ppdb", "pivot_paraphrases") else CONDITION_LABELS[condition]]
        rows.append({
            "condition": CONDITION_LABELS[condition],
            "pairs available (all → no SICK bigram)": f"{before:,} → {after:,} ({after / before:.0%})",
            "trained on": f"{stats['pairs_kept']:,}",
            "SICK r all": f"{reports[(condition, 'jbi')].value('sick', 'test', 'pearson'):.2f}",
            "SICK r filtered": f"{report.value('sick', 'test', 'pearson'):.2f}",
            "paper (all → filtered)": f"{paper[0]:.2f} → {paper[1]:.2f} ({paper[2]})",
        })
    return pd.DataFrame(rows)


def sizes_table(by_size: dict[int, EvaluationReport], reports) -> pd.DataFrame:
    """Table 6: BiPh J_bi mean Pearson per test set by number of training pairs, with BiSent J_bi beside."""
    rows = []
    for name in TEST_SETS:
        subset = "test" if name == "sick" else "mean"
        row = {"test set": name}
        for size in sorted(by_size):
            row[f"BiPh {size:,}"] = f"{by_size[size].value(name, subset, 'pearson'):.2f}"
        if ("bilingual_sentences", "jbi") in reports:
            row["BiSent"] = f"{reports[('bilingual_sentences', 'jbi')].value(name, subset, 'pearson'):.2f}"
        row["paper BiPh " + "/".join(TABLE6_SIZES)] = "/".join(f"{v:.2f}" for v in TABLE6[name])
        rows.append(row)
    return pd.DataFrame(rows)
