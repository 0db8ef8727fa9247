"""Pivot paraphrases (Bannard & Callison-Burch 2005), the way PPDB was made.

Two English phrases that translate to the same foreign phrase f are paraphrases, with probability
p(e2|e1) = Σ_f p(e2|f) · p(f|e1), summed over every shared pivot f. Input is a phrase table
(:mod:`parabit.phrases.table`); output columns ``phrase`` (e1), ``paraphrase`` (e2), ``score``, ``pivots`` (how many
foreign phrases they share).
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from parabit.phrases.config import PivotConfig

_PUNCTUATION = re.compile(r"[^\w\s]|\s+")


def _ranks(sorted_keys: list) -> pa.Array:
    """0, 1, 2, ... within each run of equal keys of an already sorted list."""
    ranks, previous, rank = [], object(), 0
    for key in sorted_keys:
        rank = rank + 1 if key == previous else 0
        previous = key
        ranks.append(rank)
    return pa.array(ranks, pa.int64())


def _top_per_group(table: pa.Table, group: str, by: str, k: int) -> pa.Table:
    """The ``k`` rows of each ``group`` with the largest ``by``."""
    ordered = table.sort_by([(group, "ascending"), (by, "descending")])
    return ordered.filter(pc.less(_ranks(ordered[group].to_pylist()), k))


def pivot_scores(table: pa.Table, pivot_top_k: int | None = None) -> pa.Table:
    """All (e1, e2 ≠ e1) pairs sharing a pivot with their summed score and number of pivots (no pruning).

    ``table`` needs ``en``, ``foreign``, ``p_en_given_foreign``, ``p_foreign_given_en``; with ``pivot_top_k`` only
    the most likely English phrases of each pivot take part.
    """
    columns = table.select(["en", "foreign", "p_en_given_foreign", "p_foreign_given_en"])
    candidates = _top_per_group(columns, "foreign", "p_en_given_foreign", pivot_top_k) if pivot_top_k else columns
    left = candidates.select(["en", "foreign", "p_foreign_given_en"]).rename_columns(["phrase", "foreign", "p_f_e1"])
    right = candidates.select(["en", "foreign", "p_en_given_foreign"]).rename_columns(["paraphrase", "foreign",
                                                                                        "p_e2_f"])
    joined = left.join(right, keys="foreign")
    joined = joined.filter(pc.not_equal(joined["phrase"], joined["paraphrase"]))
    joined = joined.append_column("product", pc.multiply(joined["p_f_e1"], joined["p_e2_f"]))
    scored = joined.group_by(["phrase", "paraphrase"]).aggregate([("product", "sum"), ("foreign", "count")])
    scored = scored.rename_columns(["phrase", "paraphrase", "score", "pivots"])
    return scored.sort_by([("phrase", "ascending"), ("score", "descending"), ("paraphrase", "ascending")])


def differs_only_in_punctuation(a: str, b: str) -> bool:
    return _PUNCTUATION.sub("", a) == _PUNCTUATION.sub("", b)


def pivot_reasons(scored: pa.Table, config: PivotConfig) -> pa.Array:
    """Per candidate pair, why it is pruned (null when kept): score too low, beyond its phrase's top k, or only
    punctuation differs."""
    rank_ok = pc.less(_ranks(scored["phrase"].to_pylist()), config.top_k)
    punct = pa.array([config.drop_punctuation_only and differs_only_in_punctuation(a, b) for a, b in
                      zip(scored["phrase"].to_pylist(), scored["paraphrase"].to_pylist())], pa.bool_())
    none = pa.scalar(None, pa.string())
    return pc.if_else(punct, "differs only in punctuation",
                      pc.if_else(pc.less(scored["score"], config.min_score), f"score below {config.min_score}",
                                 pc.if_else(rank_ok, none, f"beyond the top {config.top_k} of its phrase")))
