"""Score: every configured filter adds its score column(s); a fixed held-out share fits the learned filters.

The held-out pairs (``ScoreConfig.holdout_fraction``, chosen by ``row_id`` so they are the same every run) train the
language model and the reference-vs-translation classifier; they are then rejected ("held out to fit filters") so no
training pair was seen by the models that scored it. Also adds ``identical``: the back-translation equals the
reference, ignoring case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import ray

from parabit.filters import Filter, PairBatch, filter_class
from parabit.backtranslation.config import ScoreConfig
from parabit.backtranslation.stage import REASON, StageOutput, write_split

HELD_OUT_REASON = "held out to fit filters"
HOLDOUT_BUCKETS = 10_000


def holdout_mask(row_ids: pa.ChunkedArray | pa.Array, fraction: float) -> np.ndarray:
    """True for the rows set aside to fit filters: a fixed ``fraction`` of row-id buckets."""
    return (np.asarray(row_ids) % HOLDOUT_BUCKETS) < round(fraction * HOLDOUT_BUCKETS)


def fit_filters(config: ScoreConfig, held_out: pa.Table) -> list[Filter]:
    """Build the configured filters, fitting the ones that learn on the held-out (reference, translation) pairs."""
    filters = config.build_filters()
    references, translations = held_out["reference"].to_pylist(), held_out["translation"].to_pylist()
    for f in filters:
        if f.needs_fit:
            f.fit(references, translations)
    return filters


def score_batch(batch: pa.Table, filters: list[Filter], holdout_fraction: float) -> pa.Table:
    """Append every filter's score columns and ``identical`` to a batch, and mark its held-out rows rejected."""
    pairs = PairBatch(batch)
    for f in filters:
        scores = np.asarray(f.score(pairs), dtype=np.float64).reshape(len(pairs), -1)
        for name, values in zip(f.columns, scores.T):
            batch = batch.append_column(name, pa.array(values))
    identical = pc.equal(pc.utf8_lower(batch["reference"]), pc.utf8_lower(batch["translation"]))
    held_out = pa.array(holdout_mask(batch["row_id"], holdout_fraction))
    reason = pc.if_else(held_out, HELD_OUT_REASON, pa.scalar(None, pa.string()))
    return batch.append_column("identical", identical).append_column(REASON, reason)


def score(translated: StageOutput, config: ScoreConfig, workdir: Path) -> int:
    """Stage function: score ``translated`` pairs; scored rows to ``workdir/data``, held-out rows to rejects."""
    extra = sorted({column for f in config.filters for column in filter_class(f.name).needs_columns})
    table = translated.read_data(["row_id", "reference", "translation", *extra])
    filters = fit_filters(config, table.filter(holdout_mask(table["row_id"], config.holdout_fraction)))
    blocks = max(1, -(-translated.rows_out // config.batch_size))  # one block per batch: parallel scoring tasks
    # Ray Data 2.60 reads the files as one block whatever override_num_blocks says, which left one scoring task
    # working while the other CPUs waited (the teacher filter scored on one core); repartition splits it.
    scored = ray.data.read_parquet(translated.data_files()).repartition(blocks).map_batches(
        score_batch,
        fn_kwargs={"filters": filters, "holdout_fraction": config.holdout_fraction},
        batch_size=config.batch_size,
        batch_format="pyarrow",
        num_cpus=0.5,  # leaves room on 2-core machines for the read tasks feeding it
    )
    write_split(scored, workdir, text_column="translation", rows=translated.rows_out, description="stage score")
    return translated.rows_out
