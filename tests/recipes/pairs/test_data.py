import numpy as np
import pyarrow.parquet as pq

from parabit.recipes.pairs.config import DataConfig
from parabit.recipes.pairs.data import prepare_pairs
from parabit.training import arrow_to_tensors


def test_rows_are_conserved_and_ids_are_padded(tatoeba_slice, tmp_path):
    config = DataConfig(condition="pairs_parquet", path=str(tatoeba_slice), max_tokens=12)
    prepared = prepare_pairs(config, cache_root=tmp_path)
    stats = prepared.stats
    assert stats["pairs_read"] == 4000
    assert stats["pairs_kept"] + sum(stats["rejected"].values()) == 4000
    arrays = arrow_to_tensors(pq.read_table(prepared.pairs_path))
    assert arrays["ids_a"].shape == (stats["pairs_kept"], 12)
    assert (arrays["len_a"] >= 1).all() and (arrays["len_a"] <= 12).all()
    # Everything past a sentence's length is padding; nothing before it is.
    positions = np.arange(12)
    assert (arrays["ids_a"][positions >= arrays["len_a"][:, None]] == 0).all()
    assert (arrays["ids_a"][positions < arrays["len_a"][:, None]] != 0).all()


def test_spanish_and_english_words_are_namespaced(tatoeba_slice, tmp_path):
    prepared = prepare_pairs(DataConfig(condition="pairs_parquet", path=str(tatoeba_slice)), cache_root=tmp_path)
    assert prepared.lang_b == "es"
    assert "en:the" in prepared.vocab and "es:el" in prepared.vocab and "en:el" not in prepared.vocab


def test_second_call_reads_the_cache(tatoeba_slice, tmp_path):
    config = DataConfig(condition="pairs_parquet", path=str(tatoeba_slice), max_pairs=500)
    first = prepare_pairs(config, cache_root=tmp_path)
    stamp = first.pairs_path.stat().st_mtime_ns
    second = prepare_pairs(config, cache_root=tmp_path)
    assert second.directory == first.directory and second.pairs_path.stat().st_mtime_ns == stamp
    assert second.stats["pairs_kept"] == 500
    assert second.stats["rejected"]["beyond max_pairs sample"] == 4000 - 500 - sum(
        v for k, v in second.stats["rejected"].items() if k != "beyond max_pairs sample")
    assert not list(tmp_path.glob("*.partial-*"))


def test_several_sources_train_as_one_set_each_pair_in_its_own_language(tatoeba_slice, tmp_path):
    import pyarrow as pa

    from parabit.recipes.pairs.config import PairSource

    english = tmp_path / "english_pairs.parquet"
    pq.write_table(pa.table({"text_a": ["a zebracorn sleeps", "the cat sat"],
                             "text_b": ["a zebracorn is asleep", "the cat was sitting"]}), english)
    config = DataConfig(condition="pairs_parquet", path=str(tatoeba_slice),
                        more=[PairSource(condition="pairs_parquet", path=str(english))])
    prepared = prepare_pairs(config, cache_root=tmp_path)
    assert prepared.stats["pairs_read"] == 4002
    assert prepared.lang_b == "en+es"
    # the English pairs' second side is English (one namespace with side a), the bitext's is Spanish
    assert "en:asleep" in prepared.vocab and "es:asleep" not in prepared.vocab and "es:el" in prepared.vocab
    fit = arrow_to_tensors(pq.read_table(prepared.table_path("fit")))
    asleep = prepared.vocab.id("asleep", "en")
    assert (fit["ids_a"] == asleep).any()  # English second sides are fitting text for the common components


def test_newstest_is_a_bitext_source(tmp_path):
    from parabit.recipes.pairs.data import load_text_pairs

    pairs = load_text_pairs(DataConfig(condition="bilingual_sentences", lang="fr", sources=("newstest",)))
    assert len(pairs.text_a) + sum(pairs.rejected.values()) == 3003 + 3000  # newstest2012 + newstest2013 lines
    assert set(pairs.langs_b) == {"fr"}
