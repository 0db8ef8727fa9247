"""The phrase pipeline's stages on Ray Data, each run exactly once by :func:`parabit.backtranslation.stage.run_stage`.

* :func:`align` — ingested pairs → tokenised pairs with symmetrised eflomal links, one eflomal model per shard
  (a Ray Data batch of ``align.shard_size`` pairs). Rejects: an empty or over-long side.
* :func:`phrase_table` — aligned pairs → phrase pair counts per batch (``map_batches``), merged across batches with
  a Ray Data ``groupby``; probabilities on the merged counts; pruned pairs are the rejects. A phrase pair's
  ``row_id`` hashes its text, so the table's rows have stable ids like the bitext's.
* :func:`pivot` — phrase table → scored English paraphrases; pruned candidates are the rejects.

Each function writes ``workdir/data`` and ``workdir/rejects`` and returns its rows in.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import ray
import ray.data

from parabit.phrases.align import align_tokens, format_links, parse_links
from parabit.phrases.config import AlignConfig, PhraseTableConfig, PivotConfig
from parabit.phrases.extract import count_phrase_pairs
from parabit.phrases.pivot import pivot_reasons, pivot_scores
from parabit.phrases.table import COUNT_SCHEMA, counts_table, phrase_probabilities, prune_reasons
from parabit.backtranslation.stage import DATA, REASON, REJECT_SCHEMA, REJECTS, StageOutput, write_rejects, write_split
from parabit.text.tokenize import Tokenizer

ROWS_PER_FILE = 200_000


def align_shard(batch: pa.Table, config: AlignConfig) -> pa.Table:
    """Tokenise one shard, reject unusable pairs, align the rest with one eflomal model (Ray Data batch function)."""
    tokenizer = Tokenizer(config.tokenizer, lowercase=config.lowercase)
    english = tokenizer.tokenize_all(batch["en"].to_pylist())
    foreign = tokenizer.tokenize_all(batch["foreign"].to_pylist())
    reasons = []
    for e, f in zip(english, foreign):
        if not e or not f:
            reasons.append("no tokens on one side")
        elif max(len(e), len(f)) > config.max_tokens:
            reasons.append(f"longer than {config.max_tokens} tokens")
        else:
            reasons.append(None)
    usable = [k for k, reason in enumerate(reasons) if reason is None]
    links = align_tokens([english[k] for k in usable], [foreign[k] for k in usable], config)
    alignment = [""] * len(reasons)
    for k, sentence_links in zip(usable, links):
        alignment[k] = format_links(sentence_links)
    return batch.append_column("en_tokens", pa.array([" ".join(t) for t in english], pa.string())) \
        .append_column("foreign_tokens", pa.array([" ".join(t) for t in foreign], pa.string())) \
        .append_column("alignment", pa.array(alignment, pa.string())) \
        .append_column(REASON, pa.array(reasons, pa.string()))


def align(ingested: StageOutput, config: AlignConfig, workdir: Path) -> int:
    """Stage: word-align the ingested pairs, sharded over Ray Data (one eflomal fit per shard)."""
    dataset = ray.data.read_parquet(ingested.data_files())
    aligned = dataset.map_batches(align_shard, fn_kwargs={"config": config}, batch_size=config.shard_size,
                                  batch_format="pyarrow", num_cpus=config.cpus_per_shard).materialize()
    write_split(aligned, workdir, text_column="en")
    return ingested.rows_out


def count_batch(batch: pa.Table, max_length: int) -> pa.Table:
    """Phrase pair counts of one batch of aligned pairs (Ray Data batch function)."""
    rows = ((e.split(), f.split(), parse_links(a)) for e, f, a in
            zip(batch["en_tokens"].to_pylist(), batch["foreign_tokens"].to_pylist(), batch["alignment"].to_pylist()))
    return counts_table(count_phrase_pairs(rows, max_length))


def merge_counts_ray(counts: ray.data.Dataset, partitions: int | None = None) -> pa.Table:
    """Sum per-batch counts of the same phrase pair across all batches with a Ray Data groupby (hash-partitioned
    into ``partitions``; Ray's default of 200 suits millions of pairs, a few are faster for small data)."""
    merged = counts.groupby(["en", "foreign"], num_partitions=partitions).sum("count")
    tables = [ray.get(ref) for ref in merged.to_arrow_refs()]
    tables = [t.rename_columns(["en", "foreign", "count"]).cast(COUNT_SCHEMA) for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else COUNT_SCHEMA.empty_table()


def text_row_ids(*columns: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Stable 64-bit ids of rows identified by their text (BLAKE2b over the tab-joined columns)."""
    return np.array([
        int.from_bytes(hashlib.blake2b("\t".join(values).encode(), digest_size=8).digest(), "big", signed=True)
        for values in zip(*(column.to_pylist() for column in columns))
    ], dtype=np.int64)


def _write_split_table(table: pa.Table, reasons: pa.Array, key: tuple[str, str], source: str, workdir: Path) -> int:
    """Write kept rows (with ``row_id``) to ``workdir/data`` in parts and the pruned ones, with their reasons, to
    ``workdir/rejects``; returns the rows in."""
    ids = text_row_ids(table[key[0]], table[key[1]])
    table = table.add_column(0, "row_id", pa.array(ids, pa.int64()))
    pruned = pc.is_valid(reasons)
    kept = table.filter(pc.invert(pruned))
    (workdir / DATA).mkdir(parents=True, exist_ok=True)
    for number, start in enumerate(range(0, max(kept.num_rows, 1), ROWS_PER_FILE)):
        pq.write_table(kept.slice(start, ROWS_PER_FILE), workdir / DATA / f"part-{number:05d}.parquet")
    dropped = table.filter(pruned)
    rejects = pa.table({
        "row_id": dropped["row_id"], "source": pa.repeat(source, dropped.num_rows).cast(pa.string()),
        "line": pa.repeat(0, dropped.num_rows).cast(pa.int64()), "reason": reasons.filter(pruned),
        "text": pc.binary_join_element_wise(dropped[key[0]], dropped[key[1]], " ||| "),
    }, schema=REJECT_SCHEMA)
    write_rejects(rejects, workdir / REJECTS)
    return table.num_rows


def build_phrase_table(aligned: ray.data.Dataset, config: PhraseTableConfig, partitions: int | None = None) -> pa.Table:
    """Count phrase pairs of aligned pairs batch by batch, merge across batches, add probabilities (unpruned)."""
    counts = aligned.map_batches(count_batch, fn_kwargs={"max_length": config.max_length},
                                 batch_size=config.batch_size, batch_format="pyarrow")
    return phrase_probabilities(merge_counts_ray(counts, partitions))


def phrase_table(aligned: StageOutput, config: PhraseTableConfig, lang: str, workdir: Path) -> int:
    """Stage: the pruned phrase table (``row_id``, ``en``, ``foreign``, counts, probabilities, ``lang``)."""
    dataset = ray.data.read_parquet(aligned.data_files()).select_columns(["en_tokens", "foreign_tokens", "alignment"])
    # about one hash partition per thousand sentences (Ray's default of 200 costs minutes on a small corpus)
    table = build_phrase_table(dataset, config, partitions=max(1, min(200, aligned.rows_out // 1000)))
    table = table.append_column("lang", pa.repeat(lang, table.num_rows).cast(pa.string()))
    reasons = prune_reasons(table, config.min_count, config.min_probability)
    return _write_split_table(table, reasons, ("en", "foreign"), "phrase_table", workdir)


def pivot(table: StageOutput, config: PivotConfig, workdir: Path) -> int:
    """Stage: English paraphrases through foreign pivots (``row_id``, ``phrase``, ``paraphrase``, ``score``,
    ``pivots``)."""
    scored = pivot_scores(table.read_data(), config.pivot_top_k)
    return _write_split_table(scored, pivot_reasons(scored, config), ("phrase", "paraphrase"), "pivot", workdir)
