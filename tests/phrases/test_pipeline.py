"""The phrase pipeline end to end on real Tatoeba pairs: two eflomal shards, a phrase table, pivot paraphrases."""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from parabit.config import from_dict, load_config
from parabit.paths import PROJECT_ROOT
from parabit.phrases import PhrasesConfig
from parabit.phrases.report import summary
import pipelines.phrases
from parabit.backtranslation.stage import MANIFEST
from parabit.recipes.pairs.config import DataConfig
from parabit.recipes.pairs.data import load_text_pairs


@pytest.mark.slow
def test_pipeline_builds_phrases_and_paraphrases_exactly_once(ray_session, tmp_path):
    config = from_dict(PhrasesConfig, {
        "name": "phrases_test", "output_dir": str(tmp_path / "phrases"),
        "sources": [{"format": "tatoeba", "lang": "es", "limit": 800}],
        "align": {"shard_size": 400, "n_samplers": 1}, "phrase_table": {"max_length": 5, "batch_size": 200},
        "pivot": {"min_score": 0.0},
    })
    stages = pipelines.phrases.run(config).stages
    align, table, pivot = stages["align"], stages["phrase_table"], stages["pivot"]
    assert align.rows_in == align.rows_out + align.rows_rejected == 800
    assert table.rows_in == table.rows_out + table.rows_rejected and table.rows_out > 100
    assert set(table.reject_reasons) == {"count below 2"}

    phrases = table.read_data()
    assert set(phrases.column_names) >= {"row_id", "en", "foreign", "count", "count_en", "count_foreign",
                                         "p_en_given_foreign", "p_foreign_given_en", "lang"}
    assert pc.min(phrases["count"]).as_py() >= 2
    rows = {(r["en"], r["foreign"]): r for r in phrases.to_pylist()}
    assert rows[(".", ".")]["count"] > 500 and rows[(".", ".")]["p_foreign_given_en"] > 0.9
    # p(e|f) over every English phrase of one pivot (pruned ones included) sums to 1: the kept ones to at most 1
    by_foreign = phrases.group_by("foreign").aggregate([("p_en_given_foreign", "sum")])
    assert pc.max(by_foreign["p_en_given_foreign_sum"]).as_py() <= 1 + 1e-9

    paraphrases = pivot.read_data()
    assert pivot.rows_out > 10 and pc.all(pc.not_equal(paraphrases["phrase"], paraphrases["paraphrase"])).as_py()
    assert "random phrase pairs" in summary(stages, n=3)

    # a re-run skips every stage (same manifests), and training reads both outputs
    manifests = {name: (stage.path / MANIFEST).read_text() for name, stage in stages.items()}
    again = pipelines.phrases.run(config).stages
    assert {name: (stage.path / MANIFEST).read_text() for name, stage in again.items()} == manifests
    assert set(load_text_pairs(DataConfig(condition="bilingual_phrases", path=str(table.data))).langs_b) == {"es"}
    assert len(load_text_pairs(DataConfig(condition="pivot_paraphrases", path=str(pivot.data))).text_a) == \
        pivot.rows_out

    # Elgohary & Carpuat's table (jobs/configs/phrases_en_es_unpruned.yaml): nothing pruned, counts kept. Only the
    # table and pivot stages run again (same alignments); count filtering at training gives back the pruned table.
    unpruned_config = from_dict(PhrasesConfig, {**config.model_dump(), "phrase_table": {
        **config.phrase_table.model_dump(), "min_count": load_config(
            PhrasesConfig, PROJECT_ROOT / "jobs/configs/phrases_en_es_unpruned.yaml").phrase_table.min_count}})
    unpruned = pipelines.phrases.run(unpruned_config).stages
    assert (unpruned["align"].path / MANIFEST).read_text() == manifests["align"]
    assert unpruned["phrase_table"].rows_rejected == 0 and unpruned["phrase_table"].rows_out == table.rows_in
    every = unpruned["phrase_table"].read_data()
    assert pc.min(every["count"]).as_py() == 1 and pc.sum(pc.equal(every["count"], 1)).as_py() == table.rows_rejected
    frequent = load_text_pairs(DataConfig(condition="bilingual_phrases", path=str(unpruned["phrase_table"].data),
                                          min_pair_count=2))
    assert set(zip(frequent.text_a, frequent.text_b)) == set(rows)
    assert frequent.rejected == {"phrase pair count below 2": table.rows_rejected}
