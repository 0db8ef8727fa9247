"""Phrase tables: probabilities by hand, pruning reasons, and counts merged across shards by a Ray Data groupby."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest

from parabit.data.bitext import read_tatoeba
from parabit.phrases.config import PhraseTableConfig
from parabit.phrases.extract import count_phrase_pairs
from parabit.phrases.stages import build_phrase_table
from parabit.phrases.table import counts_table, merge_counts, phrase_probabilities, prune_reasons

TOY = Counter({("house", "casa"): 3, ("home", "casa"): 1, ("house", "hogar"): 1, ("home", "hogar"): 2})


def test_probabilities_match_hand_computation():
    table = phrase_probabilities(counts_table(TOY)).to_pylist()
    rows = {(r["en"], r["foreign"]): r for r in table}
    assert rows[("house", "casa")]["count_en"] == 4 and rows[("house", "casa")]["count_foreign"] == 4
    assert rows[("house", "casa")]["p_en_given_foreign"] == pytest.approx(3 / 4)
    assert rows[("house", "casa")]["p_foreign_given_en"] == pytest.approx(3 / 4)
    assert rows[("home", "hogar")]["p_en_given_foreign"] == pytest.approx(2 / 3)
    assert rows[("home", "casa")]["p_foreign_given_en"] == pytest.approx(1 / 3)


def test_pruning_reasons():
    table = phrase_probabilities(counts_table(TOY))
    reasons = dict(zip(zip(table["en"].to_pylist(), table["foreign"].to_pylist()),
                       prune_reasons(table, min_count=2, min_probability=0.5).to_pylist()))
    assert reasons == {("house", "casa"): None, ("home", "hogar"): None,
                       ("home", "casa"): "count below 2", ("house", "hogar"): "count below 2"}
    table = phrase_probabilities(counts_table(TOY))
    assert prune_reasons(table, 1, 0.7).to_pylist().count("p(e|f) and p(f|e) below 0.7") == 3


def test_merge_counts_sums_shards():
    shards = [counts_table(Counter({("a", "x"): 1, ("b", "y"): 2})), counts_table(Counter({("a", "x"): 4}))]
    assert sorted(merge_counts(shards).to_pylist(), key=str) == [
        {"en": "a", "foreign": "x", "count": 5}, {"en": "b", "foreign": "y", "count": 2}]


@pytest.fixture(scope="module")
def aligned_rows():
    """Real Tatoeba pairs with a fixed, simple alignment (monotone links up to the shorter side), so the test
    exercises counting and merging, not the aligner."""
    pairs = read_tatoeba(lang="es", limit=600)
    rows = []
    for pair in pairs:
        e, f = pair.en.lower().split(), pair.foreign.lower().split()
        rows.append((" ".join(e), " ".join(f), " ".join(f"{k}-{k}" for k in range(min(len(e), len(f))))))
    return rows


def test_counts_merged_across_shards_equal_counts_from_one_shard(ray_session, aligned_rows):
    import ray.data

    table = pa.table({name: [row[k] for row in aligned_rows]
                      for k, name in enumerate(["en_tokens", "foreign_tokens", "alignment"])})
    config = PhraseTableConfig(max_length=4, batch_size=50)  # 12 batches → 12 partial count tables
    sharded = build_phrase_table(ray.data.from_arrow(table).repartition(6), config, partitions=4)
    single = build_phrase_table(ray.data.from_arrow(table), PhraseTableConfig(max_length=4, batch_size=10_000),
                                partitions=1)
    key = lambda rows: sorted(rows, key=lambda r: (r["en"], r["foreign"]))
    assert sharded.num_rows == single.num_rows > 1000
    assert key(sharded.to_pylist()) == key(single.to_pylist())
    # and both equal a plain count over every sentence
    plain = count_phrase_pairs(((e.split(), f.split(), {tuple(map(int, l.split("-"))) for l in a.split()})
                                for e, f, a in aligned_rows), max_length=4)
    assert {(r["en"], r["foreign"]): r["count"] for r in sharded.to_pylist()} == dict(plain)
