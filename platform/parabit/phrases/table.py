"""Phrase tables as Arrow tables: counts merged across shards, relative-frequency probabilities, pruning.

A phrase table has one row per distinct (English phrase, foreign phrase): ``en``, ``foreign``, ``count``,
``count_en`` (the English phrase's total count), ``count_foreign``, ``p_en_given_foreign`` = count / count_foreign
and ``p_foreign_given_en`` = count / count_en. Probabilities are computed on the full counts, before pruning.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc

COUNT_SCHEMA = pa.schema([("en", pa.string()), ("foreign", pa.string()), ("count", pa.int64())])


def counts_table(counts: Counter) -> pa.Table:
    """A ``Counter`` of ``(english, foreign)`` phrase pairs as a :data:`COUNT_SCHEMA` table."""
    pairs = list(counts)
    return pa.table({"en": [e for e, _ in pairs], "foreign": [f for _, f in pairs],
                     "count": pa.array(list(counts.values()), pa.int64())}, schema=COUNT_SCHEMA)


def merge_counts(tables: list[pa.Table]) -> pa.Table:
    """Sum the counts of the same phrase pair over several count tables (one process; see
    :func:`parabit.phrases.stages.merge_counts_ray` for the Ray Data version)."""
    merged = pa.concat_tables(tables).group_by(["en", "foreign"]).aggregate([("count", "sum")])
    return merged.rename_columns(["en", "foreign", "count"]).cast(COUNT_SCHEMA)


def _with_marginal(table: pa.Table, key: str, name: str) -> pa.Table:
    totals = table.group_by(key).aggregate([("count", "sum")]).rename_columns([key, name])
    return table.join(totals, keys=key)


def phrase_probabilities(counts: pa.Table) -> pa.Table:
    """Add marginal counts and both translation probabilities to a table of pair counts (sorted for stable
    output: by English phrase, then descending p(f|e))."""
    table = _with_marginal(_with_marginal(counts, "en", "count_en"), "foreign", "count_foreign")
    count = pc.cast(table["count"], pa.float64())
    table = table.append_column("p_en_given_foreign", pc.divide(count, pc.cast(table["count_foreign"], pa.float64())))
    table = table.append_column("p_foreign_given_en", pc.divide(count, pc.cast(table["count_en"], pa.float64())))
    return table.sort_by([("en", "ascending"), ("p_foreign_given_en", "descending"), ("foreign", "ascending")])


def prune_reasons(table: pa.Table, min_count: int, min_probability: float) -> pa.Array:
    """Per row, why it is pruned (null when it is kept): too rare, or both probabilities too small."""
    rare = pc.less(table["count"], min_count)
    unlikely = pc.and_(pc.less(table["p_en_given_foreign"], min_probability),
                       pc.less(table["p_foreign_given_en"], min_probability))
    none = pa.scalar(None, pa.string())
    return pc.if_else(rare, f"count below {min_count}",
                      pc.if_else(unlikely, f"p(e|f) and p(f|e) below {min_probability}", none))
