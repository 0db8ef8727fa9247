"""Bitext mining's stages, each exactly once (:func:`parabit.backtranslation.stage.run_stage`):

* ``embed``: both piles read (an empty or over-long line is a reject with its reason; a pile with no usable line is
  a :class:`~parabit.data.errors.DataFormatError` naming its file, before any work), then embedded by Ray Data
  batch inference: an actor pool, each actor loading the model once (:class:`EmbedBatches`); each row keeps its pile
  (``side``), file ``line``, ``lang``, ``text`` and its ``vector``.
* ``pairs``: LASER's mining (Artetxe & Schwenk 2019): the ``k`` nearest neighbours of every sentence on the other
  side (cosine), every candidate pair (each sentence with its nearest neighbour, both ways) scored by the ratio
  margin, and taken greedily best first so that each sentence is in at most one pair. Written best first with
  ``cosine`` and ``margin``; a candidate that loses a side to a better pair (or falls below ``threshold``) is a
  reject with that reason, so rows in (candidates) = rows out + rejected.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import ray

from parabit.backtranslation.ingest import row_ids
from parabit.backtranslation.stage import DATA, REASON, REJECT_SCHEMA, REJECTS, StageOutput, write_rejects, write_split
from parabit.data.bitext import iter_sentences
from parabit.data.errors import DataFormatError, Quarantine
from parabit.evaluation.bitext import ratio_margin, top_k
from parabit.evaluation.metrics import unit_rows
from parabit.mining.config import MineConfig, MineSide
from parabit.output import counting

SIDES = ("source", "target")
PAIRS_FILE = "pairs.parquet"
LOST_SIDE = "a better pair holds one of its sentences"
BELOW_THRESHOLD = "margin below the threshold"
# Typed columns, so the two piles' tables concatenate even where only one pile has rejected lines.
ROW_SCHEMA = pa.schema([("row_id", pa.int64()), ("side", pa.string()), ("line", pa.int64()), ("lang", pa.string()),
                        ("text", pa.string())])


def read_side(side: MineSide, tag: str) -> tuple[pa.Table, pa.Table]:
    """One pile as rows (``row_id``, ``side``, ``line``, ``lang``, ``text``) and its rejected lines."""
    quarantine = Quarantine()
    lines = []
    for number, text in iter_sentences(side.file, lang=side.lang, quarantine=quarantine, unescape=side.unescape):
        if side.limit is not None and number > side.limit:
            break
        lines.append((number, text))
    rejected = [r for r in quarantine.rejected if side.limit is None or r.line <= side.limit]
    if not lines:
        why = ", ".join(f"{count} × {reason}" for reason, count in Quarantine(rejected).counts.items())
        raise DataFormatError(side.file, None, f"no line to mine (rejected: {why})" if why else "no line to mine")
    name = f"{tag}/{side.file.name}"  # row ids hash it: the two piles may share a file name
    numbers = [number for number, _ in lines]
    rows = pa.table({"row_id": row_ids(name, numbers), "side": [tag] * len(lines), "line": numbers,
                     "lang": [side.lang] * len(lines), "text": [text for _, text in lines]}, schema=ROW_SCHEMA)
    rejects = pa.table({"row_id": row_ids(name, [r.line for r in rejected]), "source": [name] * len(rejected),
                        "line": [r.line for r in rejected], "reason": [r.reason for r in rejected],
                        "text": [r.text for r in rejected]}, schema=REJECT_SCHEMA)
    return rows, rejects


class EmbedBatches:
    """A Ray Data actor: loads the model once, then adds each batch's ``vector`` column (float32 lists), every row
    read in its ``lang``."""

    def __init__(self, model: str):
        from parabit.export.pyfunc import load_embedder

        self.embedder = load_embedder(model)

    def __call__(self, batch: pa.Table) -> pa.Table:
        vectors = self.embedder.encode(batch["text"].to_pylist(), lang=batch["lang"].to_pylist())
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.astype(np.float32).ravel()), vectors.shape[1])
        return batch.append_column("vector", column).append_column(REASON, pa.nulls(batch.num_rows, pa.string()))


def embed(config: MineConfig, model: str, workdir: Path) -> int:
    """Stage function: read both piles and embed them with ``model`` (see the module docstring)."""
    read = [read_side(getattr(config, tag), tag) for tag in SIDES]
    rows = pa.concat_tables([table for table, _ in read])
    rejects = pa.concat_tables([table for _, table in read])
    (workdir / REJECTS).mkdir(parents=True, exist_ok=True)
    if rejects.num_rows:
        write_rejects(rejects, workdir / REJECTS, "part-read.parquet")
    blocks = max(1, -(-rows.num_rows // config.batch_size))
    embedded = ray.data.from_arrow(rows).repartition(blocks).map_batches(
        EmbedBatches, fn_constructor_kwargs={"model": model}, batch_size=config.batch_size, batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=config.actors), num_cpus=config.cpus_per_actor)
    write_split(embedded, workdir, text_column="text", rows=rows.num_rows, description="stage embed")
    return rows.num_rows + rejects.num_rows


def _vectors(table: pa.Table) -> np.ndarray:
    column = table["vector"].combine_chunks()
    return column.flatten().to_numpy(zero_copy_only=False).reshape(len(table), column.type.list_size)


def neighbourhoods(x: np.ndarray, y: np.ndarray, k: int, block: int) -> tuple[np.ndarray, ...]:
    """Both ways, each sentence's nearest neighbour (cosine, index) and the mean cosine of its ``k`` nearest: what
    the ratio margin needs. Counted as progress, ``block`` queries at a time."""
    found = []
    with counting("stage pairs: nearest neighbours", total=len(x) + len(y), unit="sentences") as done:
        for queries, candidates in ((x, y), (y, x)):
            cosines, indices = [], []
            for start in range(0, len(queries), block):
                values, where = top_k(queries[start:start + block], candidates, k, block)
                cosines.append(values)
                indices.append(where)
                done.update(len(values))
            cosines, indices = np.concatenate(cosines), np.concatenate(indices)
            found += [cosines[:, 0], indices[:, 0], cosines.mean(axis=1)]
    return tuple(found)


def greedy_one_to_one(x: np.ndarray, y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Of candidate pairs ``(x[i], y[i])``, a mask of those taken best score first, each ``x`` and ``y`` at most
    once."""
    taken = np.zeros(len(scores), dtype=bool)
    used_x, used_y = set(), set()
    for i in np.argsort(-scores, kind="stable"):
        if x[i] not in used_x and y[i] not in used_y:
            used_x.add(x[i])
            used_y.add(y[i])
            taken[i] = True
    return taken


def pair_ids(source_ids: np.ndarray, target_ids: np.ndarray) -> np.ndarray:
    """A stable 64-bit id per (source row, target row) pair."""
    return np.array([int.from_bytes(hashlib.blake2b(f"{a}:{b}".encode(), digest_size=8).digest(), "big", signed=True)
                     for a, b in zip(source_ids.tolist(), target_ids.tolist())], dtype=np.int64)


def mine_pairs(embedded: StageOutput, config: MineConfig, workdir: Path) -> int:
    """Stage function: the mined pairs of the embedded piles (see the module docstring); returns the candidates."""
    table = embedded.read_data(["row_id", "side", "line", "text", "vector"])
    source = table.filter(pc.equal(table["side"], "source"))
    target = table.filter(pc.equal(table["side"], "target"))
    x, y = _vectors(source), _vectors(target)
    x_cos, x_best, x_mean, y_cos, y_best, y_mean = neighbourhoods(x, y, config.k, config.query_block)
    # Candidates: every source with its nearest target, every target with its nearest source; once each.
    pairs = np.unique(np.concatenate([np.stack([np.arange(len(x)), x_best], 1),
                                      np.stack([y_best, np.arange(len(y))], 1)]), axis=0)
    i, j = pairs[:, 0], pairs[:, 1]
    cosines = np.einsum("ij,ij->i", unit_rows(x[i]), unit_rows(y[j]))
    margins = ratio_margin(cosines, x_mean[i], y_mean[j])
    taken = greedy_one_to_one(i, j, margins)
    reasons = np.where(taken, "", LOST_SIDE).astype(object)
    if config.threshold is not None:
        reasons[taken & (margins < config.threshold)] = BELOW_THRESHOLD
    order = np.argsort(-margins, kind="stable")
    i, j, cosines, margins, reasons = i[order], j[order], cosines[order], margins[order], reasons[order]
    rows = pa.table({
        "row_id": pair_ids(source["row_id"].to_numpy()[i], target["row_id"].to_numpy()[j]),
        "source_line": source["line"].to_numpy()[i], "source_text": source["text"].take(i),
        "target_line": target["line"].to_numpy()[j], "target_text": target["text"].take(j),
        "cosine": cosines.astype(np.float64), "margin": margins.astype(np.float64),
    })
    kept = reasons == ""
    (workdir / DATA).mkdir(parents=True)
    pq.write_table(rows.filter(pa.array(kept)), workdir / DATA / PAIRS_FILE)
    dropped = rows.filter(pa.array(~kept))
    write_rejects(pa.table({"row_id": dropped["row_id"], "source": pa.repeat(config.source.file.name, len(dropped)),
                            "line": dropped["source_line"], "reason": pa.array(reasons[~kept].tolist(), pa.string()),
                            "text": pc.binary_join_element_wise(dropped["source_text"], dropped["target_text"],
                                                                "\t")}), workdir / REJECTS)
    return len(pairs)
