"""Select: apply every filter's thresholds to the stored scores, drop identical pairs, sample a fixed-size set.

Writes ``data/pairs.parquet``, the training pairs: ``text_a`` (reference English), ``text_b`` (back-translated
English), ``lang_a`` = ``lang_b`` = "en", then every score column and the provenance (``row_id``, ``source``,
``line``, ``source_lang``, ``foreign``, ``engine``, ``direction``). A rejected row's reason is the first filter it
fails (in configuration order), "back-translation identical to reference", or "not sampled".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from parabit.filters import build_filter
from parabit.backtranslation.config import FilterConfig, SelectConfig
from parabit.paths import PIPELINE_REFERENCE, output_root, pipeline_stage, project_path
from parabit.backtranslation.stage import DATA, REJECTS, StageOutput, reject_rows, write_rejects

PAIRS_FILE = "pairs.parquet"
IDENTICAL_REASON = "back-translation identical to reference"


def selected_pairs(pipeline: str) -> Path:
    """Where the back-translation pipeline named ``pipeline`` (its config's ``name``, default output folder) leaves
    its selected training pairs; a training config names them as ``data.path: pipeline:<name>``."""
    return output_root() / "pipelines" / pipeline / "select" / DATA / PAIRS_FILE


def resolve_pairs_path(path: str) -> Path:
    """A training config's pair file: ``pipeline:<name>`` (the selected pairs of a back-translation pipeline,
    :func:`selected_pairs`), ``pipeline:<name>/<stage>`` (the rows a stage of any pipeline passed on, e.g.
    ``pipeline:phrases_en_es/phrase_table``), or a path (relative ones are read from the project folder)."""
    if path.startswith(PIPELINE_REFERENCE):
        pipeline, _, stage = path.removeprefix(PIPELINE_REFERENCE).partition("/")
        return pipeline_stage(path) / DATA if stage else selected_pairs(pipeline)
    return project_path(path)


def rejection_reasons(table: pa.Table, filters: Sequence[FilterConfig], drop_identical: bool) -> np.ndarray:
    """Per row, the first reason it is rejected, as an object array with "" where every check passes."""
    reasons = np.full(table.num_rows, "", dtype=object)
    for config in filters:
        f = build_filter(config.name, **config.options)
        failed = ~f.accept(_scores(table, f.columns), **config.thresholds) & (reasons == "")
        reasons[failed] = f"rejected by filter {f.label}"
    if drop_identical:
        reasons[table["identical"].to_numpy(zero_copy_only=False) & (reasons == "")] = IDENTICAL_REASON
    return reasons


def _scores(table: pa.Table, columns: Sequence[str]) -> np.ndarray:
    """A filter's stored scores in the shape its ``score`` returned: ``(n,)`` for one column, else ``(n, k)``."""
    values = np.column_stack([table[name].to_numpy() for name in columns])
    return values[:, 0] if values.shape[1] == 1 else values


def sample(candidates: np.ndarray, size: int | None, seed: int) -> np.ndarray:
    """``size`` of the ``candidates`` indices, drawn without replacement with ``seed`` (all if there are fewer)."""
    if size is None or len(candidates) <= size:
        return candidates
    return np.sort(np.random.default_rng(seed).choice(candidates, size=size, replace=False))


def training_pairs(table: pa.Table) -> pa.Table:
    """Scored rows in the training-pair layout (see the module docstring)."""
    provenance = table.drop_columns(["reference", "translation"])
    provenance = provenance.rename_columns(["source_lang" if n == "lang" else n for n in provenance.column_names])
    english = pa.repeat("en", table.num_rows)
    return pa.table({"text_a": table["reference"], "text_b": table["translation"], "lang_a": english,
                     "lang_b": english, **{name: provenance[name] for name in provenance.column_names}})


def select(scored: StageOutput, config: SelectConfig, filters: Sequence[FilterConfig], workdir: Path) -> int:
    """Stage function: write the selected training pairs to ``workdir/data`` and every other row to rejects."""
    # In row_id order: upstream stages (Ray Data) write rows in whatever order their blocks finish, and the seeded
    # sample must depend only on which rows there are, so a re-run after a crash selects exactly the same pairs.
    table = scored.read_data().sort_by("row_id")
    reasons = rejection_reasons(table, filters, config.drop_identical)
    passed = np.flatnonzero(reasons == "")
    kept = sample(passed, config.sample_size, config.seed)
    reasons[np.setdiff1d(passed, kept)] = f"not sampled (sample_size {config.sample_size})"
    (workdir / DATA).mkdir(parents=True)
    pq.write_table(training_pairs(table.take(kept)), workdir / DATA / PAIRS_FILE)
    dropped = np.flatnonzero(reasons != "")
    write_rejects(reject_rows(table.take(dropped), pa.array(reasons[dropped].tolist(), pa.string()), "translation"),
                  workdir / REJECTS)
    return table.num_rows
