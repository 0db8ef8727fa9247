"""Round-trip mode (English → Portuguese → English with the real marian-pt engine) through the pipeline: provenance,
scores and the exactly-once guarantees of the back-translation path, on a handful of real Tatoeba sentences."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import yaml

from parabit.config import ConfigError, from_dict, load_config
from parabit.data.bitext import read_tatoeba
from parabit.paths import PROJECT_ROOT
import pipelines.backtranslate
from parabit.backtranslation import PipelineConfig
from parabit.backtranslation.stage import read_parquet_dir

PAIRS = 24


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """Real Tatoeba pairs (every 4000th line: varied lengths), plus one with an empty English side."""
    pairs = read_tatoeba(lang="es")[::4000][:PAIRS]
    path = tmp_path_factory.mktemp("roundtrip") / "references.parquet"
    pq.write_table(pa.table({"en": [p.en for p in pairs] + [" "], "foreign": [p.foreign for p in pairs] + ["Nada."]}),
                   path)
    return path


def config_for(references, output_dir) -> PipelineConfig:
    return from_dict(PipelineConfig, {
        "name": "test-roundtrip", "output_dir": str(output_dir), "experiment": "test-pipelines",
        "sources": [{"format": "parquet", "path": str(references), "lang": "es"}],
        "translation": {"mode": "roundtrip", "engine": "marian-pt", "direction": "en-pt-en",
                        "options": {"threads": 2}, "cpus_per_actor": 1, "batch_size": 10},
        "score": {"holdout_fraction": 0.2, "filters": [{"name": "length"}, {"name": "bleu"}, {"name": "lm"}]},
        "select": {"sample_size": None, "drop_identical": False},
    })


@pytest.mark.slow
def test_round_trip_pairs_keep_provenance_and_every_row_once(ray_session, references, tmp_path):
    config = config_for(references, tmp_path / "out")
    result = pipelines.backtranslate.run(config)
    stages = result.stages
    assert stages["ingest"].rows_in == PAIRS + 1 and stages["ingest"].reject_reasons == {"empty English side": 1}
    assert stages["backtranslate"].rows_in == PAIRS and stages["backtranslate"].rows_rejected == 0
    for stage in stages.values():
        assert stage.rows_in == stage.rows_out + stage.rows_rejected, stage.name

    translated = stages["backtranslate"].read_data()
    assert set(translated["engine"].to_pylist()) == {"marian-pt"}
    assert set(translated["direction"].to_pylist()) == {"en-pt-en"}
    assert "token_costs" not in translated.column_names  # the engine reports no cost, none is invented
    rows = translated.to_pylist()
    assert all(row["pivot"] and row["translation"] for row in rows)
    assert sum(row["pivot"] != row["reference"] for row in rows) >= PAIRS - 2  # Portuguese, not a copy
    assert any(row["translation"] != row["reference"] for row in rows)  # some paraphrases differ
    pairs = pq.read_table(result.output)
    assert pairs.num_rows == stages["select"].rows_out > 0
    assert {"text_a", "text_b", "pivot", "bleu", "lm", "engine", "direction", "row_id"} <= set(pairs.column_names)

    rerun = pipelines.backtranslate.run(config)  # complete stages are skipped, nothing is written twice
    assert rerun.stages["backtranslate"].seconds == stages["backtranslate"].seconds
    ids = read_parquet_dir(stages["backtranslate"].data, ["row_id"]).column("row_id")
    assert pc.count_distinct(ids).as_py() == len(ids) == PAIRS


def test_shipped_round_trip_configs_load():
    for name in ("backtranslate_roundtrip_slice.yaml", "engine_comparison/marian_roundtrip.yaml"):
        config = load_config(PipelineConfig, PROJECT_ROOT / "jobs" / "configs" / name)
        assert (config.translation.mode, config.translation.engine) == ("roundtrip", "marian-pt")
    apertium = load_config(PipelineConfig, PROJECT_ROOT / "jobs" / "configs" / "engine_comparison" /
                           "apertium_backtranslate.yaml")
    assert (apertium.translation.mode, apertium.translation.engine) == ("backtranslate", "apertium")


@pytest.mark.parametrize("translation, message", [
    ({"mode": "pivot"}, r"translation.mode: Input should be 'backtranslate' or 'roundtrip' \(got 'pivot'\)"),
    ({"mode": "roundtrip", "engine": "marian-pt", "direction": "en-pt", "options": {}}, r"look like 'en-pt-en'"),
    ({"mode": "roundtrip", "engine": "marian-pt", "direction": "en-fr-en", "options": {}},
     r"translates only .* not en-fr"),
    ({"engine": "marian-pt", "direction": "es-en", "options": {}}, r"translates only .* not es-en"),
    ({"mode": "roundtrip", "engine": "marian-pt", "direction": "en-pt-en", "options": {"mode": "spa-eng"}},
     r"no option\(s\) \['mode'\]"),
])
def test_bad_round_trip_config_fails_at_load(tmp_path, translation, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"translation": translation}))
    with pytest.raises(ConfigError, match=message):
        load_config(PipelineConfig, path)


def test_cost_filter_is_refused_for_the_neural_engine_that_reports_no_cost(tmp_path):
    path = tmp_path / "cost.yaml"
    path.write_text(yaml.safe_dump({
        "translation": {"mode": "roundtrip", "engine": "marian-pt", "direction": "en-pt-en", "options": {}},
        "score": {"filters": [{"name": "translation_cost"}]}}))
    with pytest.raises(ConfigError, match=r"engine 'marian-pt' does not provide"):
        load_config(PipelineConfig, path)
