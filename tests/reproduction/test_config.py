"""What the reproduction reads and writes is handed in: the library's config has no default config file, document or
ledger in the checkout; `parabit reproduce` passes the checkout's document and ledger for a full run only."""

from __future__ import annotations

from pathlib import Path

import pytest

from parabit.config import ConfigError, load_config
from parabit.paths import output_root, project_path
from parabit.reproduction.config import PAPERS, ReproduceConfig, ReproduceOptions
from parabit.papers.plan import PlanContext
from parabit.reproduction.plans import PLANS
from pipelines.commands import REPRODUCTION_DOCUMENT, REPRODUCTION_LEDGER, checkout_results

SHIPPED = project_path("jobs/configs/reproduction.yaml")


def test_the_shipped_config_names_every_paper_s_config_files():
    config = load_config(ReproduceConfig, SHIPPED)
    assert config.papers == PAPERS and all(config.has_section(paper) for paper in PAPERS)
    assert config.wieting.train == "jobs/configs/wieting/train_avg.yaml"
    assert config.elgohary.jbi_sweep == "tuning/spaces/jbi_elgohary.yaml"
    assert config.bildrl.configs == "jobs/configs/bildrl" and config.bao.msrp_config == "jobs/configs/siamese/msrp.yaml"


def test_every_registered_paper_has_a_section_typed_by_its_plan_s_settings_model():
    config = load_config(ReproduceConfig, SHIPPED)
    schema = ReproduceConfig.model_json_schema()["properties"]
    for key, plan in PLANS.items():
        assert isinstance(getattr(config, key), plan.settings_model)
        assert plan.title in schema[key]["description"] and f"`{key}`" in schema["papers"]["description"]
    assert set(ReproduceConfig.model_fields) - set(PLANS) == set(ReproduceOptions.model_fields)


def test_without_a_document_or_ledger_a_reproduction_writes_into_its_output_folder():
    config = load_config(ReproduceConfig, SHIPPED)
    assert (config.document, config.ledger) == (None, None)
    assert config.document_path == output_root() / "reproduction" / "repro" / "reproduction.md"
    assert config.ledger_path == output_root() / "reproduction" / "repro" / "ledger"
    assert config.figures_path == config.document_path.with_suffix("")


def test_the_command_passes_the_checkout_s_document_and_ledger_for_a_full_run_only():
    full = checkout_results(load_config(ReproduceConfig, SHIPPED))
    assert full.document_path == project_path(REPRODUCTION_DOCUMENT) == project_path("docs/reproduction.md")
    assert full.ledger_path == project_path(REPRODUCTION_LEDGER) == project_path("docs/reproduction")
    quick = checkout_results(load_config(ReproduceConfig, SHIPPED, {"quick": True}))
    assert quick.document_path == output_root() / "reproduction" / "repro-quick" / "reproduction.md"
    assert quick.ledger_path.parent == quick.document_path.parent
    own = checkout_results(load_config(ReproduceConfig, SHIPPED, {"document": "/tmp/r.md", "ledger": "/tmp/l"}))
    assert (str(own.document_path), str(own.ledger_path)) == ("/tmp/r.md", "/tmp/l")


def test_a_paper_to_run_needs_its_section_and_a_paper_left_out_does_not():
    with pytest.raises(ConfigError, match=r"papers \['bao'\] have no section of settings: add `bao:`"):
        load_config(ReproduceConfig, SHIPPED, {"bao": None})
    with pytest.raises(ConfigError, match=r"bao.msrp_config: Field required"):
        load_config(ReproduceConfig, SHIPPED, {"bao": {"sick_config": "x.yaml"}})
    config = load_config(ReproduceConfig, SHIPPED, {"papers": ["wieting"], "bao": None})
    assert not config.has_section("bao")
    with pytest.raises(ConfigError, match="no `bao:` section"):
        PLANS["bao"](PlanContext(config)).settings


@pytest.mark.parametrize("args, where", [([], "the checkout's"), (["--quick"], "its output folder's"),
                                         (["--set", "document=/tmp/r.md", "--set", "ledger=/tmp/l"], "the given")])
def test_parabit_reproduce_hands_the_library_what_it_writes(args, where, monkeypatch, capsys):
    """The command's wiring, with the reproduction itself replaced (nothing trains, nothing is written)."""
    from parabit.cli import run_command
    from pipelines.commands import reproduce

    given = []

    class Recorded:
        counts = {"ledger": 0, "mlflow": 0, "trained": 0, "failed": 0}

        def __init__(self, config, pipelines, command):
            given.append(config)

        def run(self):
            return given[0].document_path

    monkeypatch.setattr("parabit.reproduction.reproduce.Reproduction", Recorded)
    assert run_command(reproduce, ["--seed-paper", "bao", *args]) == 0
    (config,) = given
    expected = {"the checkout's": (project_path("docs/reproduction.md"), project_path("docs/reproduction")),
                "its output folder's": (config.output_path / "reproduction.md", config.output_path / "ledger"),
                "the given": (Path("/tmp/r.md"), Path("/tmp/l"))}[where]
    assert (config.document_path, config.ledger_path) == expected
    assert f"document: {config.document_path}" in capsys.readouterr().out
