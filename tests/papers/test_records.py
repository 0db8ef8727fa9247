"""What a record is keyed by: a cell's digest covers what it trains (not where or how it runs, nor where a config file
lives), and paths are written relative to the output, data and project folders."""

from __future__ import annotations

from parabit.config import reconfigure
from parabit.papers.elgohary.plan import ElgoharySettings
from parabit.papers.plan import PlanContext
from parabit.papers.records import cell_digest, digest, settings
from parabit.paths import local, portable
from parabit.papers.wieting.settings import WietingSettings
from parabit.paths import data_root, output_root, project_path
from parabit.reproduction.config import ReproduceConfig
from parabit.reproduction.plans import PLANS

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
