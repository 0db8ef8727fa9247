"""The back-translation stage's plumbing: blocks of one batch from the ingested files, a pool that fits the cluster,
every block translated and written exactly once (also when an actor dies), and rows that match the engine's."""

from __future__ import annotations

import math
import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from parabit.config import from_dict
from parabit.backtranslation.backtranslate import (ACTOR_RESTARTS, backtranslate, block_rows, input_blocks, pool_size,
                                            translate_blocks)
from parabit.backtranslation.config import SourceConfig, TranslationConfig
from parabit.backtranslation.ingest import ingest
from parabit.backtranslation.stage import read_parquet_dir, run_stage
from parabit.translate import ApertiumTranslator


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("ingest")
    return run_stage(workdir, "ingest", "test",
                     lambda d: ingest([SourceConfig(format="tatoeba", lang="es", limit=2_500)], d))


def test_ingested_pairs_come_in_blocks_of_one_batch(ingested):
    assert len(ingested.data_files()) == 1
    blocks = list(input_blocks(ingested, rows=300))
    assert [block.num_rows for block in blocks] == [300] * 8 + [ingested.rows_out - 2_400]
    ids = pa.concat_tables(blocks)["row_id"]
    assert ids.to_pylist() == ingested.read_data(["row_id"])["row_id"].to_pylist()


def test_block_size_is_the_batch_size_unless_the_input_is_too_small_to_share():
    config = from_dict(TranslationConfig, {"batch_size": 2_000})
    assert block_rows(config, rows=100_000, actors=2) == 2_000
    assert block_rows(config, rows=3_000, actors=2) == 1_500  # both actors get work
    assert block_rows(config, rows=0, actors=2) == 1


def test_pool_is_cut_to_what_the_cluster_holds(ray_session, caplog):
    assert pool_size(from_dict(TranslationConfig, {"actors": 2, "cpus_per_actor": 1})) == 2
    assert pool_size(from_dict(TranslationConfig, {"actors": 8, "cpus_per_actor": 0.5})) == 4  # 2 CPUs
    assert "do not fit" in caplog.text
    assert pool_size(from_dict(TranslationConfig, {"actors": 1, "cpus_per_actor": 4})) == 1


def test_every_block_comes_back_once_when_an_actor_dies_mid_stage(ray_session, tmp_path):
    """An actor process that dies while translating is restarted by Ray and its queued calls re-run: every block is
    returned exactly once, and the block it died on is not lost."""
    marker = tmp_path / "died-once"

    class DiesOnce:  # defined here so that Ray ships it by value
        def translate_block(self, block: pa.Table) -> pa.Table:
            if block["n"][0].as_py() == 30 and not marker.exists():
                marker.touch()
                os._exit(1)
            return block.append_column("pid", pa.repeat(os.getpid(), block.num_rows))

    import ray

    actor_class = ray.remote(DiesOnce).options(num_cpus=0.5, max_restarts=ACTOR_RESTARTS,
                                              max_task_retries=ACTOR_RESTARTS)
    actors = [actor_class.remote() for _ in range(2)]
    blocks = (pa.table({"n": list(range(start, start + 10))}) for start in range(0, 100, 10))
    results = dict(translate_blocks(blocks, actors))
    assert marker.exists()
    assert sorted(results) == list(range(10))
    assert all(table["n"].to_pylist() == list(range(10 * i, 10 * i + 10)) for i, table in results.items())
    assert len({pid for table in results.values() for pid in table["pid"].to_pylist()}) >= 2
    for actor in actors:
        ray.kill(actor)


@pytest.mark.parametrize("actors", [1, 2])
def test_stage_writes_every_row_once_as_the_engine_translates_it(ray_session, ingested, tmp_path, actors):
    config = from_dict(TranslationConfig, {"actors": actors, "batch_size": 700, "cpus_per_actor": 0.5})
    stage = run_stage(tmp_path, "backtranslate", "test", lambda d: backtranslate(ingested, config, d))
    assert stage.rows_in == ingested.rows_out == stage.rows_out + stage.rows_rejected
    data = read_parquet_dir(stage.data)
    assert len(stage.data_files()) == math.ceil(ingested.rows_out / 700)  # one file per block
    assert pc.count_distinct(data["row_id"]).as_py() == data.num_rows
    assert set(data.column_names) >= {"row_id", "reference", "foreign", "translation", "engine", "direction"}
    assert "_reject_reason" not in data.column_names and "token_costs" not in data.column_names
    assert set(data["engine"].to_pylist()) == {"apertium"} and set(data["direction"].to_pylist()) == {"es-en"}
    sample = data.take(list(range(0, data.num_rows, 97)))
    with ApertiumTranslator("spa-eng") as translator:
        expected = translator.translate(sample["foreign"].to_pylist(), "es", "en").translations
    assert sample["translation"].to_pylist() == expected  # aligned: each row carries its own translation
