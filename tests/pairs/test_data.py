import numpy as np
import pyarrow.parquet as pq

from parabit.pairs.config import DataConfig
from parabit.pairs.data import prepare_pairs
from parabit.training.prepared import arrow_to_tensors


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
