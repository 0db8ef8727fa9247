"""The hf-marian engine through the back-translation pipeline on real Tatoeba pairs: the per-token costs it reports
reach the scored table, and the translation_cost threshold accepts and rejects exactly the expected rows (also when
only the threshold changes, which re-runs selection alone)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from parabit.config import ConfigError, from_dict, load_config
from parabit.data.bitext import read_tatoeba
from parabit.paths import PROJECT_ROOT
import pipelines.backtranslate
from parabit.backtranslation import PipelineConfig
from parabit.backtranslation.stage import read_parquet_dir
from parabit.translate import HFMarianTranslator

PAIRS = 16
OPTIONS = {"batch_size": 4, "max_new_tokens": 12, "device": "cpu"}


@pytest.fixture(scope="module")
def bitext(tmp_path_factory):
    pairs = read_tatoeba(lang="es")[::7001][:PAIRS]
    path = tmp_path_factory.mktemp("hf-marian") / "pairs.parquet"
    pq.write_table(pa.table({"en": [p.en for p in pairs], "foreign": [p.foreign for p in pairs]}), path)
    return path


@pytest.fixture(scope="module")
def expected(bitext, tiny_marian_dir):
    """The engine run directly, outside Ray: foreign sentence → (translation, mean token cost)."""
    foreign = pq.read_table(bitext)["foreign"].to_pylist()
    with HFMarianTranslator(model_dir=str(tiny_marian_dir), **OPTIONS) as translator:
        batch = translator.translate(foreign, "es", "en")
    assert batch.failed == []
    return {f: (text, float(np.mean(costs))) for f, text, costs in zip(foreign, batch.translations, batch.costs)}


def widest_gap_threshold(costs: list[float]) -> float:
    """A threshold in the middle of the widest gap between the middle half of the sorted costs (robust to the
    last-digit differences of batching)."""
    ordered = sorted(costs)
    lo, hi = len(ordered) // 4, 3 * len(ordered) // 4
    k = max(range(lo, hi), key=lambda i: ordered[i + 1] - ordered[i])
    assert ordered[k + 1] - ordered[k] > 1e-3
    return (ordered[k] + ordered[k + 1]) / 2


def config_for(bitext, model_dir, output_dir, max_cost: float) -> PipelineConfig:
    return from_dict(PipelineConfig, {
        "name": "test-hf-marian", "output_dir": str(output_dir), "experiment": "test-pipelines",
        "sources": [{"format": "parquet", "path": str(bitext), "lang": "es"}],
        "translation": {"engine": "hf-marian", "direction": "es-en",
                        "options": {"model_dir": str(model_dir), **OPTIONS}, "cpus_per_actor": 1, "batch_size": 8},
        "score": {"holdout_fraction": 0.01,
                  "filters": [{"name": "translation_cost", "thresholds": {"max_cost": max_cost}}]},
        "select": {"sample_size": None, "drop_identical": False},
    })


def split_by_select(result) -> tuple[set[int], set[int]]:
    select = result.stages["select"]
    kept = set(pq.read_table(result.output)["row_id"].to_pylist())
    rejects = read_parquet_dir(select.rejects)
    assert set(rejects["reason"].to_pylist()) <= {"rejected by filter translation_cost"}
    return kept, set(rejects["row_id"].to_pylist())


@pytest.mark.slow
def test_costs_flow_to_the_cost_filter_and_its_threshold(ray_session, bitext, tiny_marian_dir, expected, tmp_path):
    threshold = widest_gap_threshold([cost for _, cost in expected.values()])
    result = pipelines.backtranslate.run(config_for(bitext, tiny_marian_dir, tmp_path / "out", threshold))
    for stage in result.stages.values():
        assert stage.rows_in == stage.rows_out + stage.rows_rejected, stage.name
    assert result.stages["backtranslate"].rows_rejected == 0

    translated = result.stages["backtranslate"].read_data().to_pylist()
    assert len(translated) == PAIRS and {row["engine"] for row in translated} == {"hf-marian"}
    for row in translated:
        text, cost = expected[row["foreign"]]
        assert row["translation"] == text
        assert np.mean(row["token_costs"]) == pytest.approx(cost, abs=1e-4)

    scored = result.stages["score"].read_data(["row_id", "translation_cost"]).to_pylist()
    mean_cost = {row["row_id"]: np.mean(row["token_costs"]) for row in translated}
    assert all(row["translation_cost"] == pytest.approx(mean_cost[row["row_id"]], abs=1e-6) for row in scored)
    kept, rejected = split_by_select(result)
    assert kept == {row["row_id"] for row in scored if row["translation_cost"] <= threshold} != set()
    assert rejected == {row["row_id"] for row in scored if row["translation_cost"] > threshold} != set()

    # A stricter threshold re-runs selection only: the same costs, fewer rows kept.
    stricter = min(row["translation_cost"] for row in scored if row["row_id"] in kept) + 1e-6
    rerun = pipelines.backtranslate.run(config_for(bitext, tiny_marian_dir, tmp_path / "out", stricter))
    assert rerun.stages["backtranslate"].seconds == result.stages["backtranslate"].seconds
    assert rerun.stages["score"].seconds == result.stages["score"].seconds
    kept_again, _ = split_by_select(rerun)
    assert kept_again == {row["row_id"] for row in scored if row["translation_cost"] <= stricter}
    assert 0 < len(kept_again) < len(kept)


def test_shipped_config_and_a_bad_model_dir(tmp_path):
    shipped = PROJECT_ROOT / "jobs" / "configs" / "backtranslate_hf_marian.yaml"
    text = yaml.safe_load(shipped.read_text())
    assert text["translation"]["engine"] == "hf-marian"
    assert any(f["name"] == "translation_cost" for f in text["score"]["filters"])
    # The shipped config points at a model the user downloads; without it, loading fails and names the folder.
    missing = tmp_path / "no-such-model"
    text["translation"]["options"]["model_dir"] = str(missing)
    path = tmp_path / "hf.yaml"
    path.write_text(yaml.safe_dump(text))
    with pytest.raises(ConfigError, match=rf"model_dir '{missing}' is not a directory"):
        load_config(PipelineConfig, path)


def test_shipped_config_loads_with_a_model_dir(tiny_marian_dir, tmp_path):
    text = yaml.safe_load((PROJECT_ROOT / "jobs" / "configs" / "backtranslate_hf_marian.yaml").read_text())
    text["translation"]["options"]["model_dir"] = str(tiny_marian_dir)
    path = tmp_path / "hf.yaml"
    path.write_text(yaml.safe_dump(text))
    config = load_config(PipelineConfig, path)
    assert config.translation.engine == "hf-marian" and config.translation.options["model_dir"] == str(tiny_marian_dir)
