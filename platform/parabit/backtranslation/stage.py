"""Exactly-once stage outputs: write aside, check, mark complete, rename into place; skip what is already complete.

Every stage writes two parquet datasets, ``data/`` (rows passed on) and ``rejects/`` (rows dropped, each with its
reason; :data:`REJECT_SCHEMA`), into a fresh temporary directory next to its final place. :func:`run_stage` then

1. counts both and checks conservation: rows in = rows out + rows rejected, else :class:`ConservationError`;
2. checks that no ``row_id`` appears twice in ``data`` and ``rejects`` together, else :class:`ConservationError`;
3. writes ``_MANIFEST.json`` (counts, reject reasons, the stage's config fingerprint) — last, so a directory with a
   manifest is complete;
4. swaps the directory into place with renames.

A killed run leaves either the previous complete output or a temporary directory, which the next run deletes. A
re-run skips a stage whose manifest exists with the same fingerprint, and recomputes it otherwise.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import ray

from parabit.output import counting, elapsed

log = logging.getLogger(__name__)

MANIFEST = "_MANIFEST.json"
DATA, REJECTS = "data", "rejects"
REASON = "_reject_reason"  # set, in a stage's working dataset, on the rows the stage rejects

REJECT_SCHEMA = pa.schema([
    ("row_id", pa.int64()), ("source", pa.string()), ("line", pa.int64()), ("reason", pa.string()),
    ("text", pa.string()),
])


class ConservationError(RuntimeError):
    """A stage lost, invented or duplicated rows; its output is not marked complete."""


@dataclass(frozen=True)
class StageOutput:
    """A complete stage: where its data and rejects are, and what its manifest recorded."""

    name: str
    path: Path
    fingerprint: str
    rows_in: int
    rows_out: int
    rows_rejected: int
    reject_reasons: dict[str, int]
    seconds: float

    @property
    def data(self) -> Path:
        return self.path / DATA

    @property
    def rejects(self) -> Path:
        return self.path / REJECTS

    def data_files(self) -> list[str]:
        """The parquet files holding the stage's rows (for ``ray.data.read_parquet``)."""
        return sorted(str(p) for p in self.data.glob("*.parquet"))

    def read_data(self, columns: list[str] | None = None) -> pa.Table:
        return read_parquet_dir(self.data, columns)

    @classmethod
    def load(cls, path: Path) -> "StageOutput | None":
        """The stage at ``path`` if it is complete (has a manifest), else None."""
        manifest = path / MANIFEST
        if not manifest.is_file():
            return None
        fields = json.loads(manifest.read_text())
        return cls(path=path, **fields)


def read_parquet_dir(path: Path, columns: list[str] | None = None) -> pa.Table:
    """All parquet files under ``path`` as one table (an empty table when there are none)."""
    files = sorted(str(p) for p in Path(path).glob("*.parquet"))
    if not files:
        return pa.table({}) if columns is None else pa.table({c: pa.array([], pa.null()) for c in columns})
    return pads.dataset(files, format="parquet").to_table(columns=columns)


def reject_rows(rows: pa.Table, reason: str | pa.Array | pa.ChunkedArray, text_column: str) -> pa.Table:
    """Reject rows (:data:`REJECT_SCHEMA`) for ``rows``: one ``reason`` for all, or one per row; ``text`` is the
    content of ``text_column``, so what was dropped can be read back."""
    if isinstance(reason, str):
        reason = pa.repeat(reason, rows.num_rows)
    return pa.table([rows["row_id"], rows["source"], rows["line"], reason, rows[text_column]],
                    schema=REJECT_SCHEMA)


def write_split(dataset: ray.data.Dataset, workdir: Path, text_column: str, *, rows: int | None = None,
                description: str = "rows written") -> None:
    """Write a dataset whose :data:`REASON` column is null for kept rows, block by block as Ray Data computes them
    (:func:`write_block`), so its progress counts rows done (``description``, of ``rows`` when known): Ray Data's
    bar in a terminal, lines in a log file."""
    (workdir / DATA).mkdir(parents=True, exist_ok=True)
    (workdir / REJECTS).mkdir(parents=True, exist_ok=True)
    with counting(description, total=rows, unit="rows", engine_shows=True) as done:
        for index, block in enumerate(dataset.iter_batches(batch_size=None, batch_format="pyarrow")):
            write_block(block, index, workdir, text_column)
            done.update(block.num_rows)


def write_block(block: pa.Table, index: int, workdir: Path, text_column: str) -> None:
    """One block of a stage's rows (a :data:`REASON` column, null for kept rows): its kept rows, without that
    column, to ``workdir/data/part-<index>.parquet``; the others as reject rows (their ``text_column`` as text) to
    ``workdir/rejects/part-<index>.parquet``."""
    name = f"part-{index:06d}.parquet"
    if block.num_rows == 0:
        return
    failed = pc.is_valid(block[REASON])
    if not pc.any(failed).as_py():
        pq.write_table(block.drop_columns([REASON]), workdir / DATA / name)
        return
    kept = block.filter(pc.invert(failed))
    if kept.num_rows:
        pq.write_table(kept.drop_columns([REASON]), workdir / DATA / name)
    rejected = block.filter(failed)
    write_rejects(reject_rows(rejected, rejected[REASON], text_column), workdir / REJECTS, name=name)


def write_rejects(rows: pa.Table, folder: Path, name: str = "part-0.parquet") -> None:
    """Write reject rows (columns of :data:`REJECT_SCHEMA`, in any order) as one parquet file under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(rows.select(REJECT_SCHEMA.names).cast(REJECT_SCHEMA), folder / name)


def run_stage(root: Path, name: str, fingerprint: str, compute: Callable[[Path], int]) -> StageOutput:
    """Run one stage exactly once (see the module docstring) and return its complete output.

    ``compute(workdir)`` writes ``workdir/data`` and ``workdir/rejects`` and returns how many rows it took in.
    """
    final = root / name
    done = StageOutput.load(final)
    if done is not None and done.fingerprint == fingerprint:
        log.info("stage %s is complete (%d rows in, %d out); skipping it", name, done.rows_in, done.rows_out)
        return done
    if done is not None:
        log.info("stage %s was computed with another configuration; recomputing it", name)
    for stale in [*root.glob(f".{name}.tmp-*"), *root.glob(f".{name}.old-*")]:
        log.info("removing %s, left by an interrupted run", stale)
        shutil.rmtree(stale)
    root.mkdir(parents=True, exist_ok=True)
    workdir = root / f".{name}.tmp-{uuid.uuid4().hex[:8]}"
    workdir.mkdir()
    started = time.perf_counter()
    with elapsed(f"stage {name}"):
        rows_in = compute(workdir)
    data_ids = read_parquet_dir(workdir / DATA, ["row_id"]).column("row_id")
    rejects = read_parquet_dir(workdir / REJECTS, ["row_id", "reason"])
    _check_conservation(name, rows_in, data_ids, rejects)
    reasons = {r["values"]: r["counts"] for r in pc.value_counts(rejects.column("reason")).to_pylist()} \
        if rejects.num_rows else {}
    output = StageOutput(name, final, fingerprint, rows_in, len(data_ids), rejects.num_rows, reasons,
                         round(time.perf_counter() - started, 3))
    manifest = {k: v for k, v in asdict(output).items() if k != "path"}
    (workdir / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    _swap_into_place(workdir, final)
    log.info("stage %s: %d rows in, %d out, %d rejected (%s) in %.1fs", name, rows_in, output.rows_out,
             output.rows_rejected, reasons, output.seconds)
    return output


def _check_conservation(name: str, rows_in: int, data_ids: pa.ChunkedArray, rejects: pa.Table) -> None:
    rows_out, rows_rejected = len(data_ids), rejects.num_rows
    if rows_in != rows_out + rows_rejected:
        raise ConservationError(f"stage {name}: {rows_in} rows in but {rows_out} out + {rows_rejected} rejected "
                                f"= {rows_out + rows_rejected}")
    chunks = data_ids.chunks + rejects.column("row_id").chunks
    every_id = pa.chunked_array([chunk.cast(pa.int64()) for chunk in chunks], pa.int64())
    distinct = pc.count_distinct(every_id).as_py()
    if distinct != len(every_id):
        raise ConservationError(f"stage {name}: {len(every_id) - distinct} row_id(s) appear more than once in its "
                                "output and rejects")


def _swap_into_place(workdir: Path, final: Path) -> None:
    """Replace ``final`` by ``workdir`` with renames only, so readers see the old or the new output, never half."""
    if final.exists():
        retired = final.with_name(f".{final.name}.old-{uuid.uuid4().hex[:8]}")
        final.rename(retired)
        workdir.rename(final)
        shutil.rmtree(retired)
    else:
        workdir.rename(final)
