"""The back-translation stage's input: one block per translation batch, so a pool of actors shares the work."""

from __future__ import annotations

import math

from parabit.pipeline.backtranslate import batched_input
from parabit.pipeline.config import SourceConfig
from parabit.pipeline.ingest import ingest
from parabit.pipeline.stage import run_stage


def test_ingested_pairs_reach_the_actors_in_blocks_of_one_batch(ray_session, tmp_path):
    ingested = run_stage(tmp_path, "ingest", "test",
                         lambda workdir: ingest([SourceConfig(format="tatoeba", lang="es", limit=2_500)], workdir))
    assert len(ingested.data_files()) == 1  # one parquet file: Ray's reader alone would make it one block
    dataset = batched_input(ingested, batch_size=300).materialize()
    assert dataset.num_blocks() == math.ceil(ingested.rows_out / 300)
    assert sorted(dataset.to_pandas()["row_id"]) == sorted(
        ingested.read_data(["row_id"])["row_id"].to_pylist())
