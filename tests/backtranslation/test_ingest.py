"""Ingest: text reaches the engines composed (NFC), whatever the input's Unicode form; input is streamed in chunks
with duplicates found across them."""

import gzip
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq

from parabit.data.bitext import TATOEBA_FILES
from parabit.paths import data_path
from parabit.backtranslation.config import SourceConfig
from parabit.backtranslation.ingest import ingest, normalise
from parabit.backtranslation.stage import DATA, REJECTS


def test_normalise_composes_accents_and_collapses_whitespace():
    decomposed = "Esta\u0301bamos  borrachos.\n"  # "á" as "a" + combining acute, as pyarrow's utf8_normalize leaves it
    assert normalise(pa.chunked_array([[decomposed, None]])).to_pylist() == ["Est\u00e1bamos borrachos.", None]


def _ingested(workdir):
    data = pq.read_table(workdir / DATA)
    rejects = pq.read_table(workdir / REJECTS)
    return data, rejects


def test_ingest_streams_in_chunks_and_finds_duplicates_across_them(tmp_path):
    """A real Tatoeba slice written three times over, one bad line in the middle: read 7 pairs at a time, ingest
    writes the same rows and rejects as in one chunk, every repeat is caught across chunk boundaries, and each
    part holds at most one chunk."""
    lines = gzip.open(data_path("bitext", *TATOEBA_FILES["es"]), "rt", encoding="utf-8").read().splitlines()[:40]
    corpus = tmp_path / "repeated.tsv"
    corpus.write_text("\n".join(lines + ["only one field"] + lines + lines) + "\n", encoding="utf-8")
    source = SourceConfig(format="tatoeba", lang="es", path=str(corpus))
    results = {}
    for chunk_rows in (7, 10_000):
        workdir = tmp_path / f"chunks-{chunk_rows}"
        rows_in = ingest([source], workdir, chunk_rows=chunk_rows)
        results[chunk_rows] = (rows_in, *_ingested(workdir))
        assert max(pq.read_metadata(f).num_rows for f in (workdir / DATA).glob("*.parquet")) <= chunk_rows
    (rows_small, data_small, rejects_small), (rows_one, data_one, rejects_one) = results[7], results[10_000]
    assert rows_small == rows_one == 121
    assert data_small.sort_by("row_id").equals(data_one.sort_by("row_id"))
    assert data_small["line"].to_pylist() == list(range(1, 41))  # first occurrences, in file order
    assert sorted(rejects_small["line"].to_pylist()) == sorted(rejects_one["line"].to_pylist()) == list(range(41, 122))
    reasons = Counter(rejects_small["reason"].to_pylist())
    assert reasons["duplicate"] == 80 and sum(reasons.values()) == 81
    assert data_small.num_rows + rejects_small.num_rows == rows_small
