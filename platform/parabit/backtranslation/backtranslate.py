"""Back-translate: each pair's English paraphrase, made by long-lived translator actors (one engine load each).

In ``backtranslate`` mode the foreign side is translated into English; in ``roundtrip`` mode the English reference is
translated into the pivot language and back (``direction`` e.g. ``en-pt-en``), and the pivot text is kept in ``pivot``.
Output columns: ``row_id``, ``source``, ``line``, ``lang``, ``reference`` (the corpus English), ``foreign``,
[``pivot``,] ``translation`` (the English paraphrase), ``engine``, ``direction``, and ``token_costs`` when the engine
reports them (a round trip's are those of its last leg). A sentence the engine fails on (crash, hang, empty output) in
any leg becomes a reject with the leg and the engine's reason.

How the work flows. The engine is the expensive part, so the stage around it is kept thin (bench/bench_backtranslate.py
measures it against the bare ``apertium`` command):

* the driver streams the ingested parquet files in blocks of ``batch_size`` rows (pyarrow, one block in memory per
  actor slot, whatever the input's size);
* a pool of ``translation.actors`` Ray actors (:class:`parabit.translate.batches.BacktranslateBatches`, a module that
  imports only pyarrow and the engines, so an actor is ready in about a second) each keep their engine for the
  stage and always have a second block queued, so an engine never waits for the driver; blocks travel as Arrow;
* the driver writes each translated block as it comes back, its rows to ``data/part-<block>.parquet`` and its
  failures to ``rejects/part-<block>.parquet``: one pass, nothing held back.

Plain actors rather than a Ray Data ``map_batches`` pool: on a small machine Ray Data's fixed costs (its coordinator
and statistics actors, a map worker that imports all of Ray Data, the read tasks, the streaming executor) were as
large as the translation of 100,000 Tatoeba sentences. Exactly once: every block is submitted once and written once,
under its own name, when its result arrives; an actor that dies is restarted by Ray and its queued calls re-run
(``max_restarts`` / ``max_task_retries``), and a block whose call fails for good fails the stage, whose half-written
output :func:`parabit.backtranslation.stage.run_stage` then discards. Its checks (rows in = rows out + rejected, no row twice)
run on what was written.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import ray

from parabit.backtranslation.config import TranslationConfig
from parabit.backtranslation.stage import DATA, REASON, REJECTS, StageOutput, write_block
from parabit.output import counting
from parabit.translate.batches import INPUT_COLUMN, REJECT_TEXT, BacktranslateBatches

log = logging.getLogger(__name__)

__all__ = ["INPUT_COLUMN", "REJECT_TEXT", "BacktranslateBatches", "backtranslate", "block_rows", "input_blocks",
           "pool_size", "translate_blocks"]

# Blocks queued per actor: one being translated, one waiting, so the actor starts the next as soon as it returns one.
QUEUED_PER_ACTOR = 2
# An actor that dies (its process, not a sentence: the engine isolates those) is restarted, and its calls re-run,
# this many times before the stage fails.
ACTOR_RESTARTS = 3


def pool_size(config: TranslationConfig) -> int:
    """``translation.actors``, or fewer when the cluster cannot hold that many at ``cpus_per_actor`` CPUs (and
    ``gpus_per_actor`` GPUs) each: a pool that does not fit would wait forever for its last actors."""
    resources = ray.cluster_resources()
    fits = [math.floor(resources.get("CPU", 0.0) / config.cpus_per_actor + 1e-9)]
    if config.gpus_per_actor:
        fits.append(math.floor(resources.get("GPU", 0.0) / config.gpus_per_actor + 1e-9))
    size = max(1, min(config.actors, *fits))
    if size < config.actors:
        log.warning("translation.actors=%d do not fit in this cluster (%s CPUs, %s GPUs) at %g CPUs and %g GPUs per "
                    "actor; running %d", config.actors, resources.get("CPU", 0), resources.get("GPU", 0),
                    config.cpus_per_actor, config.gpus_per_actor, size)
    return size


def block_rows(config: TranslationConfig, rows: int, actors: int) -> int:
    """Rows per actor call: ``translation.batch_size``, but at most an equal share of the input per actor, so a
    small input still keeps every actor busy."""
    return max(1, min(config.batch_size, math.ceil(rows / actors)))


def input_blocks(ingested: StageOutput, rows: int) -> Iterator[pa.Table]:
    """The ingested pairs in file order as tables of ``rows`` rows (a file's last block shorter), read lazily: memory
    holds the blocks in flight, not the input."""
    for path in ingested.data_files():
        for batch in pq.ParquetFile(path).iter_batches(batch_size=rows):
            yield pa.Table.from_batches([batch])


def translate_blocks(blocks: Iterator[pa.Table], actors: list, queued: int = QUEUED_PER_ACTOR
                     ) -> Iterator[tuple[int, pa.Table]]:
    """``(block number, translated block)`` for every block, in the order they finish; each actor has up to
    ``queued`` blocks submitted at a time. An actor call that fails for good raises here."""
    free = deque(actor for _ in range(queued) for actor in actors)
    pending: dict[ray.ObjectRef, tuple[int, object]] = {}

    def finished() -> tuple[int, pa.Table]:
        [ref], _ = ray.wait(list(pending), num_returns=1)
        index, actor = pending.pop(ref)
        free.append(actor)
        return index, ray.get(ref)

    for index, block in enumerate(blocks):
        if not free:
            yield finished()
        actor = free.popleft()
        pending[actor.translate_block.remote(block)] = (index, actor)
    while pending:
        yield finished()


def start_actors(config: TranslationConfig, count: int) -> list:
    """``count`` translator actors, each building its engine(s) once."""
    actor_class = ray.remote(BacktranslateBatches).options(
        num_cpus=config.cpus_per_actor, num_gpus=config.gpus_per_actor, max_restarts=ACTOR_RESTARTS,
        max_task_retries=ACTOR_RESTARTS)
    return [actor_class.remote(engine=config.engine, options=config.options, direction=config.direction,
                               mode=config.mode, reason_column=REASON) for _ in range(count)]


def stop_actors(actors: list) -> None:
    """Close the engines (their processes end with them), then end the actors."""
    try:
        ray.get([actor.close.remote() for actor in actors], timeout=30)
    except Exception as err:  # a dead or stuck actor: killing it below ends its engine too
        log.warning("closing the translator actors failed (%s); killing them", err)
    for actor in actors:
        ray.kill(actor)


def backtranslate(ingested: StageOutput, config: TranslationConfig, workdir: Path) -> int:
    """Stage function: translate ``ingested`` pairs; translated rows to ``workdir/data``, failures to rejects."""
    count = pool_size(config)
    rows = block_rows(config, ingested.rows_out, count)
    (workdir / DATA).mkdir(parents=True, exist_ok=True)
    (workdir / REJECTS).mkdir(parents=True, exist_ok=True)
    if ingested.rows_out == 0:
        return 0
    actors = start_actors(config, count)
    try:
        with counting(f"stage backtranslate ({count} actors)", total=ingested.rows_out, unit="rows") as done:
            for index, block in translate_blocks(input_blocks(ingested, rows), actors):
                write_block(block, index, workdir, text_column=REJECT_TEXT[config.mode])
                done.update(block.num_rows)
    finally:
        stop_actors(actors)
    return ingested.rows_out
