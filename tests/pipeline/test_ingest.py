"""Ingest normalisation: text reaches the engines composed (NFC), whatever the input's Unicode form."""

import pyarrow as pa

from parabit.pipeline.ingest import normalise


def test_normalise_composes_accents_and_collapses_whitespace():
    decomposed = "Esta\u0301bamos  borrachos.\n"  # "á" as "a" + combining acute, as pyarrow's utf8_normalize leaves it
    assert normalise(pa.chunked_array([[decomposed, None]])).to_pylist() == ["Est\u00e1bamos borrachos.", None]
