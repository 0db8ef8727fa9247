"""Back-translate: the foreign side of every pair, translated into English by long-lived translator actors.

Output columns: ``row_id``, ``source``, ``line``, ``lang``, ``reference`` (the corpus English), ``foreign``,
``translation`` (the back-translated English), ``engine``, ``direction``, and ``token_costs`` when the engine reports
them. A sentence the engine fails on (crash, hang, empty output) becomes a reject with the engine's reason.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import ray

from parabit.pipeline.config import TranslationConfig
from parabit.pipeline.stage import REASON, StageOutput, write_split
from parabit.translate import build_translator


class BacktranslateBatches:
    """Ray Data callable class: each actor builds one translator (one Apertium process) and keeps it for the stage."""

    def __init__(self, engine: str, options: dict, direction: str):
        self.translator = build_translator(engine, **options)
        self.engine, self.direction = engine, direction
        self.src, _, self.tgt = direction.partition("-")

    def __call__(self, batch: pa.Table) -> pa.Table:
        result = self.translator.translate(batch["foreign"].to_pylist(), self.src, self.tgt)
        reasons = [f"translation failed: {error}" if error else (None if text else "empty translation")
                   for text, error in zip(result.translations, result.errors)]
        rows = batch.num_rows
        out = (batch.rename_columns({"en": "reference"})
               .append_column("translation", pa.array(result.translations, pa.string()))
               .append_column("engine", pa.repeat(self.engine, rows))
               .append_column("direction", pa.repeat(self.direction, rows))
               .append_column(REASON, pa.array(reasons, pa.string())))
        if result.costs is not None:
            out = out.append_column("token_costs", pa.array(result.costs, pa.list_(pa.float32())))
        return out

    def __del__(self):
        self.translator.close()


def backtranslate(ingested: StageOutput, config: TranslationConfig, workdir: Path) -> int:
    """Stage function: translate ``ingested`` pairs; translated rows to ``workdir/data``, failures to rejects."""
    # One block per batch, so every actor in the pool gets work (Ray would otherwise read a few files as one block).
    blocks = max(1, -(-ingested.rows_out // config.batch_size))
    translated = ray.data.read_parquet(ingested.data_files(), override_num_blocks=blocks).map_batches(
        BacktranslateBatches,
        fn_constructor_kwargs={"engine": config.engine, "options": config.options, "direction": config.direction},
        batch_size=config.batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=config.actors),
        num_cpus=config.cpus_per_actor,
    ).materialize()  # translated once, then split into rows and rejects
    write_split(translated, workdir, text_column="foreign")
    return ingested.rows_out
