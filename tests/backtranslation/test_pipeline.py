"""The whole back-translation pipeline on a real Tatoeba slice with injected bad rows: every row accounted for once,
also after a crash and a re-run."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from mlflow.tracking import MlflowClient

from parabit.config import from_dict
from parabit.paths import PROJECT_ROOT, data_path
import pipelines.backtranslate
from parabit.backtranslation import ConservationError, PipelineConfig, run_stage
from parabit.backtranslation.ingest import row_ids
from parabit.backtranslation.stage import MANIFEST, REJECTS, read_parquet_dir, write_rejects
from parabit.translate.apertium import apertium_pipeline

from ..cluster_support import kill_when, session_ray_env, write_config

FAULTY_STAGE = Path(__file__).parents[1] / "translate" / "faulty_stage.py"
PAIRS = 2000
BAD_LINES = [
    b"Only English.\t",                     # empty Spanish side
    b"one\ttwo\tthree\tfour",               # wrong number of fields
    b"Go.\tVe.",                            # duplicate of line 1
    b"Caf\xe9 au lait.\tCaf\xe9 con leche.",  # Latin-1, not UTF-8
    b"It explodes.\tBOOM explota.",         # crashes the engine every time
]
EXPECTED_REASONS = {
    "ingest": {"empty Spanish side", "expected 2 or 3 tab-separated fields, found 4", "duplicate"},
}


@pytest.fixture(scope="module")
def slice_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bitext") / "tatoeba-slice.tsv"
    with gzip.open(data_path("bitext", "tatoeba-en-es", "spa.txt.gz"), "rb") as source:
        lines = [next(source).rstrip(b"\n") for _ in range(PAIRS)]
    path.write_bytes(b"\n".join(lines + BAD_LINES) + b"\n")
    return path


def config_for(slice_file: Path, output_dir: Path) -> PipelineConfig:
    faulty = [[sys.executable, str(FAULTY_STAGE)], *apertium_pipeline("spa-eng")]
    return from_dict(PipelineConfig, {
        "name": "test-backtranslate",
        "output_dir": str(output_dir),
        "experiment": "test-pipelines",
        "sources": [{"format": "tatoeba", "path": str(slice_file), "lang": "es"}],
        "translation": {"options": {"mode": "spa-eng", "pipeline": faulty, "timeout_s": 30}, "batch_size": 500},
        "score": {"holdout_fraction": 0.1, "batch_size": 1000},
        "select": {"sample_size": 1000, "seed": 7},
    })


def every_row_id(result) -> pa.Array:
    """Selected rows plus every stage's rejects: each input line must appear here exactly once."""
    parts = [result.output] + [stage.rejects for stage in result.stages.values()]
    return pa.concat_arrays([read_parquet_dir(Path(p) if Path(p).is_dir() else Path(p).parent, ["row_id"])
                             .column("row_id").combine_chunks() for p in parts])


@pytest.fixture(scope="module")
def uninterrupted(ray_session, slice_file, tmp_path_factory):
    return pipelines.backtranslate.run(config_for(slice_file, tmp_path_factory.mktemp("run") / "out"))


@pytest.mark.slow
def test_every_input_line_is_accounted_for_exactly_once(uninterrupted):
    stages = uninterrupted.stages
    lines = PAIRS + len(BAD_LINES)
    assert stages["ingest"].rows_in == lines
    for stage in stages.values():
        assert stage.rows_in == stage.rows_out + stage.rows_rejected, stage.name
    names = list(stages)
    for before, after in zip(names, names[1:]):
        assert stages[after].rows_in == stages[before].rows_out, f"{before} -> {after}"
    for name, reasons in EXPECTED_REASONS.items():
        assert reasons <= set(stages[name].reject_reasons), name
    assert any(reason.startswith("undecodable bytes") for reason in stages["ingest"].reject_reasons)
    # The crashing sentence is quarantined as a translation failure; the exact wording depends on how the dying
    # process is noticed (its exit code, or the partial output it flushed while crashing).
    assert any(reason.startswith("translation failed: apertium") for reason in stages["backtranslate"].reject_reasons)
    ids = every_row_id(uninterrupted)
    assert len(ids) == lines and pc.count_distinct(ids).as_py() == lines
    assert set(ids.to_pylist()) == set(row_ids("tatoeba-slice.tsv", range(1, lines + 1)).tolist())
    pairs = pa.parquet.read_table(uninterrupted.output)
    assert pairs.num_rows == 1000
    assert {"text_a", "text_b", "lang_a", "lang_b", "bleu", "lm", "classifier", "row_id"} <= set(pairs.column_names)
    assert uninterrupted.stats["stages"]["select"]["conserved"]


@pytest.mark.slow
def test_the_pipeline_run_in_mlflow_holds_its_config_stage_counts_stats_and_output(uninterrupted):
    """What a user compares pipeline runs by: each stage's rows in/out/rejected (as the stage reported them), the
    config as params, the stats and histogram artifacts, and where the output is."""
    client = MlflowClient()
    run = client.get_run(uninterrupted.run_id)
    assert run.info.status == "FINISHED" and run.data.tags["parabit.kind"] == "pipeline"
    assert run.data.params["name"] == "test-backtranslate" and run.data.params["select.sample_size"] == "1000"
    for name, stage in uninterrupted.stages.items():
        assert (run.data.metrics[f"{name}.rows_in"], run.data.metrics[f"{name}.rows_out"],
                run.data.metrics[f"{name}.rows_rejected"]) == (stage.rows_in, stage.rows_out, stage.rows_rejected)
    assert run.data.metrics["ingest.rows_in"] == PAIRS + len(BAD_LINES)
    assert run.data.tags["parabit.pipeline_output"] == str(uninterrupted.output)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "stats")}
    assert artifacts == {"stats/stats.json", "stats/score_histograms.png"}


@pytest.mark.slow
def test_rerun_after_a_crash_recomputes_only_what_is_incomplete(uninterrupted, slice_file, tmp_path):
    crashed = tmp_path / "out"
    shutil.copytree(uninterrupted.stages["ingest"].path.parent, crashed)
    # The crash: score had written part of its output but not its manifest; select never started.
    (crashed / "score" / MANIFEST).unlink()
    partial = crashed / ".select.tmp-deadbeef"
    shutil.copytree(crashed / "score" / "data", partial / "data")
    shutil.rmtree(crashed / "select")

    resumed = pipelines.backtranslate.run(config_for(slice_file, crashed))

    for kept in ("ingest", "backtranslate"):  # complete stages are not recomputed
        assert resumed.stages[kept].seconds == uninterrupted.stages[kept].seconds
    assert not partial.exists()
    assert_same_rows(resumed, uninterrupted)


def assert_same_rows(resumed, uninterrupted) -> None:
    """Stage by stage, the same row ids (as sets and counts) in the output and in the rejects, none twice; every input
    line accounted for once (rows lost: 0)."""
    for name, stage in resumed.stages.items():
        assert stage.rows_in == stage.rows_out + stage.rows_rejected, name
        for part in ("data", REJECTS):
            before = read_parquet_dir(uninterrupted.stages[name].path / part, ["row_id"]).column("row_id")
            after = read_parquet_dir(stage.path / part, ["row_id"]).column("row_id")
            assert pc.count_distinct(after).as_py() == len(after), (name, part)
            assert sorted(after.to_pylist()) == sorted(before.to_pylist()), (name, part)
    ids = every_row_id(resumed)
    assert len(ids) == PAIRS + len(BAD_LINES) == pc.count_distinct(ids).as_py()


@pytest.mark.slow
def test_a_killed_pipeline_job_rerun_gives_exactly_the_rows_of_an_uninterrupted_run(
        ray_session, uninterrupted, slice_file, tmp_path, isolated_mlflow_store):
    """SIGKILL of `jobs/backtranslate.py` in the middle of its back-translation stage, then the same command again."""
    output = tmp_path / "out"
    command = [sys.executable, "jobs/backtranslate.py", "--config",
               str(write_config(config_for(slice_file, output), tmp_path / "pipeline.yaml"))]
    env = session_ray_env(MLFLOW_TRACKING_URI=isolated_mlflow_store)
    # Killed while the backtranslate stage writes its output.
    kill_when(command, env, tmp_path / "first.log", lambda: bool(list(output.glob(".backtranslate.tmp-*"))),
              cwd=PROJECT_ROOT)
    assert (output / "ingest").is_dir() and not (output / "backtranslate").exists()  # killed mid-stage

    rerun = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert not list(output.glob(".*.tmp-*"))  # the killed attempt's partial output was cleared
    resumed = pipelines.backtranslate.run(config_for(slice_file, output))  # all complete: only reads
    assert_same_rows(resumed, uninterrupted)


def test_a_stage_that_loses_rows_is_never_marked_complete(tmp_path):
    def loses_a_row(workdir: Path) -> int:
        write_rejects(pa.table({"row_id": [1], "source": ["f"], "line": [1], "reason": ["r"], "text": ["t"]}),
                      workdir / REJECTS)
        return 2  # two rows in, one accounted for

    with pytest.raises(ConservationError, match="2 rows in but 0 out \\+ 1 rejected"):
        run_stage(tmp_path, "lossy", "fp", loses_a_row)
    assert not (tmp_path / "lossy").exists()
