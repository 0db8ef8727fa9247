"""SICK translated by real Apertium: row ids and counts kept, failures quarantined with a reason, written once."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from parabit.data.sick import read_sick
from parabit.backtranslation.sick_translation import SICKTranslationConfig, read_translated_sick, run_sick_translation
from parabit.backtranslation.stage import MANIFEST, StageOutput
from parabit.recipes.siamese.config import SiameseDataConfig
from parabit.recipes.siamese.data import load_splits
from parabit.translate.apertium import apertium_pipeline

FAULTY_STAGE = Path(__file__).parents[1] / "translate" / "faulty_stage.py"
PER_SPLIT = 6


def _expected(per_split: int = PER_SPLIT) -> dict[int, tuple[str, object]]:
    return {p.pair_id: (split, p) for split in ("train", "trial", "test") for p in read_sick(split)[:per_split]}


def test_translated_sick_keeps_row_ids_counts_and_provenance_and_is_written_once(tmp_path):
    config = SICKTranslationConfig(max_pairs_per_split=PER_SPLIT, batch_size=7, output=str(tmp_path / "sick-es"))
    stage = run_sick_translation(config)

    expected = _expected()
    assert (stage.rows_in, stage.rows_out, stage.rows_rejected) == (3 * PER_SPLIT, 3 * PER_SPLIT, 0)
    table = stage.read_data()
    rows = {row["row_id"]: row for row in table.to_pylist()}
    assert sorted(rows) == sorted(expected)  # every SICK pair_ID once, none invented
    for pair_id, (split, pair) in expected.items():
        row = rows[pair_id]
        assert (row["split"], row["line"], row["relatedness"], row["entailment"]) == (
            split, pair.line, pair.relatedness, pair.entailment)
        assert (row["sentence_a_en"], row["sentence_b_en"]) == (pair.sentence_a, pair.sentence_b)
        assert row["sentence_a"] and row["sentence_b"] and row["sentence_a"] != pair.sentence_a
        assert (row["lang"], row["engine"], row["engine_options"]) == ("es", "apertium", '{"mode": "eng-spa"}')
    # Real Apertium output for the first training pair's sentence A.
    first = rows[expected and read_sick("train")[0].pair_id]
    assert first["sentence_a"].startswith("Un grupo de niños")

    trial = read_translated_sick(stage.path, "trial")
    assert trial["row_id"].to_pylist() == [p.pair_id for p in read_sick("trial")[:PER_SPLIT]]

    # Exactly once: the complete output is reused as it is, not rewritten.
    manifest = (stage.path / MANIFEST).read_text()
    files = sorted(p.stat().st_mtime_ns for p in stage.data.glob("*.parquet"))
    again = run_sick_translation(config)
    assert (again.path / MANIFEST).read_text() == manifest
    assert sorted(p.stat().st_mtime_ns for p in again.data.glob("*.parquet")) == files


def test_a_sentence_that_crashes_the_engine_quarantines_its_pair_with_the_reason(tmp_path):
    # The one distinct sentence mentioning "kids" (in 3 of these 6 pairs) is turned into BOOM, on which the faulty
    # stage kills the pipeline. One sentence per batch keeps the crashes (and restarts) to the two tries it gets.
    pipeline = [["sed", "-u", "-z", "s/kids/BOOM/"], [sys.executable, str(FAULTY_STAGE)],
                *apertium_pipeline("eng-spa")]
    config = SICKTranslationConfig(max_pairs_per_split=2, batch_size=1, output=str(tmp_path / "sick-es"),
                                   options={"mode": "eng-spa", "pipeline": pipeline, "timeout_s": 20})
    stage = run_sick_translation(config)

    expected = _expected(per_split=2)
    crashing = {i for i, (_, p) in expected.items() if "kids" in p.sentence_a or "kids" in p.sentence_b}
    assert len(crashing) == 3
    assert (stage.rows_in, stage.rows_rejected, stage.rows_out) == (len(expected), len(crashing),
                                                                     len(expected) - len(crashing))
    rejects = pq.read_table(stage.rejects).to_pylist()
    assert {r["row_id"] for r in rejects} == crashing
    assert all("translation failed: apertium crashed" in r["reason"] for r in rejects)
    assert {r["row_id"] for r in stage.read_data().to_pylist()} == set(expected) - crashing
    assert StageOutput.load(stage.path).reject_reasons  # the reasons are in the manifest too


def test_config_refuses_unknown_splits():
    with pytest.raises(ValueError, match="use some of"):
        SICKTranslationConfig(splits=("dev",))


def test_the_siamese_default_reads_the_translation_where_translate_sick_writes_it(tmp_path, monkeypatch):
    """`jobs/translate_sick.py` writes under $PARABIT_OUTPUT; a Spanish Siamese config with the default
    data.translated_path reads that output, wherever $PARABIT_OUTPUT points."""
    monkeypatch.setenv("PARABIT_OUTPUT", str(tmp_path / "elsewhere"))
    stage = run_sick_translation(SICKTranslationConfig(max_pairs_per_split=2))
    assert stage.path.is_relative_to(tmp_path / "elsewhere")

    splits = load_splits(SiameseDataConfig(language="es", max_pairs_per_split=2))
    trial = read_translated_sick(stage.path, "trial")
    assert splits["dev"].text_a == trial["sentence_a"].to_pylist() and len(splits["dev"].text_a) == 2
    assert splits["train"].text_b[0].startswith("Un ")  # Spanish, as Apertium wrote it
