"""The results ledger: what a cell's digest covers, records written and read back, a bad line named, stale records
found, and the time a paper took computed from its records."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from parabit.config import ConfigError
from parabit.papers.elgohary.plan import ElgoharySettings
from parabit.paths import data_root, output_root, project_path
from parabit.recipes import load_run_config
from parabit.papers.cells import CellResult, CellRunner, Group, Results, make_cell, reconfigure
from parabit.reproduction.config import ReproduceConfig
from parabit.reproduction.document import PaperTime
from parabit.papers.plan import PlanContext
from parabit.reproduction.plans import PLANS
from parabit.papers.ledger import (CellRecord, Ledger, PreparedRecord, cell_digest, digest, local, portable,
                                         settings)
from parabit.papers.wieting.plan import WietingSettings

SICK = "jobs/configs/siamese/sick_en.yaml"


def record(cell, started="2026-11-25T10:00:00Z", finished="2026-11-25T10:01:40Z", seconds=100.0, metrics=None):
    return CellRecord(cell=cell.name, paper=cell.paper, group=cell.group, seed=cell.seed, digest=cell.digest,
                      commit="0123456789abcdef", metrics=metrics or {"sick-en/test/pearson": 0.75},
                      train_seconds=seconds, data={"pairs_kept": 4500}, machine={"host": "vm", "cpus": 2},
                      started=started, finished=finished, mlflow_run_id="f" * 32)


@pytest.fixture
def sick_cell():
    return make_cell("repro", "parabit-reproduction", "bao", Group("sick-sialstm", load_run_config(project_path(SICK))), 1)


def test_paths_are_written_relative_to_the_output_data_and_project_folders_and_back():
    value = {"a": str(output_root() / "prepared" / "x"), "b": [str(data_root() / "sts")],
             "c": str(project_path("jobs/configs/main.yaml")), "d": "/elsewhere/file", "e": "relative/path"}
    written = portable(value)
    assert written == {"a": "$OUTPUTS/prepared/x", "b": ["$DATA/sts"], "c": "$PROJECT/jobs/configs/main.yaml",
                       "d": "/elsewhere/file", "e": "relative/path"}
    assert local(written) == value


def test_a_cell_digest_covers_what_it_trains_not_where_or_how_it_runs(sick_cell):
    config = sick_cell.config
    same = [reconfigure(config, {"scaling.cpus_per_worker": 0.5}), reconfigure(config, {"tracking.experiment": "x"}),
            reconfigure(config, {"max_failures": 0}), reconfigure(config, {"name": "another-name"}),
            reconfigure(config, {"scaling.in_process": True}), reconfigure(config, {"checkpoint_every": 5})]
    assert {cell_digest(c) for c in same} == {cell_digest(config)}
    changed = [reconfigure(config, {"optim.lr": 0.002}), reconfigure(config, {"seed": 2}),
               reconfigure(config, {"data.max_length": 20}), reconfigure(config, {"optim.epochs": 31})]
    assert len({cell_digest(c) for c in changed} | {cell_digest(config)}) == 5
    assert cell_digest(config, "data-a") != cell_digest(config)  # the paper's prepared data is part of it
    # A setting spelled out at its default value is no change: a later setting added at its default keeps records.
    assert cell_digest(reconfigure(config, {"optim.amsgrad": False})) == cell_digest(config)
    assert digest({"b": 1, "a": [1, 2]}) == digest({"a": [1, 2], "b": 1})


def test_a_runner_trains_a_one_cpu_worker_cell_in_process_and_others_in_worker_groups(sick_cell, tmp_path):
    runner = CellRunner(Ledger(tmp_path), uri=f"sqlite:///{tmp_path / 'mlflow.db'}", checkpoint_every=5)
    one_worker = runner.as_trained(sick_cell)
    assert one_worker.config.scaling.in_process and one_worker.config.checkpoint_every == 5
    assert one_worker.digest == sick_cell.digest
    for scaling in ({"scaling.num_workers": 2, "scaling.cpus_per_worker": 0.5}, {"scaling.use_gpu": True}):
        cell = replace(sick_cell, config=reconfigure(sick_cell.config, scaling))
        assert not runner.as_trained(cell).config.scaling.in_process
    worker_groups = CellRunner(Ledger(tmp_path), uri=runner.uri, in_process=False)
    assert not worker_groups.as_trained(sick_cell).config.scaling.in_process


def test_records_are_appended_one_line_each_and_read_back(sick_cell, tmp_path):
    ledger = Ledger(tmp_path)
    first = record(sick_cell)
    ledger.append(first)
    ledger.append(PreparedRecord(paper="bao", digest="d1", facts={"sizes": {"main": 3}}, commit="c", seconds=1.5,
                                 machine={"cpus": 2}, finished="2026-11-25T10:00:00Z"))
    newer = record(sick_cell, metrics={"sick-en/test/pearson": 0.76})
    ledger.append(newer)
    lines = (tmp_path / "bao.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["paper"] == "bao" for line in lines)

    again = Ledger(tmp_path)
    assert again.cell("bao", sick_cell.name, sick_cell.digest) == newer  # the newest record of the cell wins
    assert again.prepared("bao", "d1").facts == {"sizes": {"main": 3}} and again.prepared("bao", "d2") is None
    assert again.stale("bao", sick_cell.name, sick_cell.digest) is None
    assert again.cell("bao", sick_cell.name, "other digest") is None
    assert again.stale("bao", sick_cell.name, "other digest") == newer  # recorded, but with other settings


def test_a_cell_takes_the_record_of_the_same_training_under_another_name(sick_cell, tmp_path):
    from dataclasses import replace

    ledger = Ledger(tmp_path)
    tuning_run = replace(record(sick_cell), cell="repro-bao-tuning-point-s1")  # same digest, another cell's name
    ledger.append(tuning_run)
    assert ledger.cell("bao", sick_cell.name, sick_cell.digest) is None
    assert ledger.result("bao", sick_cell.name, sick_cell.digest) == tuning_run
    assert ledger.stale("bao", sick_cell.name, sick_cell.digest) is None
    assert ledger.result("bao", sick_cell.name, "other digest") is None
    own = record(sick_cell)
    ledger.append(own)
    assert ledger.result("bao", sick_cell.name, sick_cell.digest) == own  # its own record first


def test_a_line_that_is_not_a_record_is_one_error_naming_file_and_line(sick_cell, tmp_path):
    Ledger(tmp_path).append(record(sick_cell))
    with open(tmp_path / "bao.jsonl", "a") as file:
        file.write('{"kind": "cell", "cell": "x"\n')
    with pytest.raises(ConfigError, match=r"bao\.jsonl:2: not a ledger record"):
        Ledger(tmp_path).cells("bao")


def test_wall_time_counts_overlapping_cells_once(sick_cell):
    cells = [sick_cell, sick_cell.renamed("b"), sick_cell.renamed("c")]
    results = Results([
        CellResult(cells[0], record(cells[0], "2026-11-25T10:00:00Z", "2026-11-25T10:10:00Z", 600.0)),
        CellResult(cells[1], record(cells[1], "2026-11-25T10:05:00Z", "2026-11-25T10:15:00Z", 600.0)),
        CellResult(cells[2], record(cells[2], "2026-11-26T09:00:00Z", "2026-11-26T09:05:00Z", 300.0)),
    ])
    took = PaperTime.of(results, prepare=60.0)
    assert took.busy == 20 * 60  # 10:00-10:15 and a day later 5 minutes; the gap between sessions is not counted
    assert took.cell == 1500 and took.most_at_once == 2 and took.cells == 3 and took.prepare == 60.0
    assert "at most 2 at once" in took.text() and "vm (2 CPUs)" in took.text()


def test_where_a_config_file_lives_is_no_part_of_a_digest_what_is_read_from_it_is(tmp_path):
    files = {key: f"jobs/configs/wieting/{name}.yaml" for key, name in
             (("backtranslate", "backtranslate_apertium"), ("roundtrip", "roundtrip_marian"), ("train", "train_avg"))}
    shipped = WietingSettings(**files)
    moved = WietingSettings(**{key: f"/elsewhere/{key}.yaml" for key in files})
    assert settings(shipped) == settings(moved) == {} and digest({"s": shipped}) == digest({"s": moved})
    assert digest({"s": shipped}) != digest({"s": WietingSettings(**files, sample_size=1000)})
    # a file that may be left out (no sweep: the plan digests the sweep's content, or None), and inside a section
    sweep = ElgoharySettings(config="a.yaml", jbi_sweep="tuning/spaces/jbi_elgohary.yaml")
    assert settings({"s": sweep}) == settings({"s": ElgoharySettings(config="b.yaml")}) == {"s": {}}
    sections = [ReproduceConfig(papers=["wieting"], wieting=w, elgohary=e) for w, e in
                ((shipped, sweep), (moved, ElgoharySettings(config="b.yaml")))]
    assert settings(sections[0]) == settings(sections[1]) == {"papers": ["wieting"], "elgohary": {}, "wieting": {}}

    # The plan's data digest: a copy of the training config elsewhere is the same data step, a changed one is not.
    def data_digest(train: str) -> str:
        config = ReproduceConfig(papers=["wieting"], wieting={**files, "train": train})
        return digest(PLANS["wieting"](PlanContext(config)).data_fingerprint())

    text = project_path(files["train"]).read_text()
    (tmp_path / "copy.yaml").write_text(text)
    (tmp_path / "changed.yaml").write_text(text.replace("epochs: 20", "epochs: 21"))
    assert data_digest(files["train"]) == data_digest(str(tmp_path / "copy.yaml"))
    assert data_digest(files["train"]) != data_digest(str(tmp_path / "changed.yaml"))
