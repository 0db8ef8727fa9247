"""What the papers' facts tests share: the committed ledger's prepared records, and a plan as the reproduction
builds it from the shipped reproduction config."""

from __future__ import annotations

import json

import pytest

from parabit.config import load_config
from parabit.papers.plan import PaperPlan, PlanContext
from parabit.paths import project_path
from parabit.reproduction.config import ReproduceConfig
from parabit.reproduction.plans import PLANS


@pytest.fixture
def committed_facts(outputs):
    """``paper`` -> its committed prepared records' facts (docs/reproduction/<paper>.jsonl) as the ledger holds them
    (paths portable: :meth:`PaperRun.restore` reads them), by line number."""
    def read(paper: str) -> dict[int, dict]:
        lines = (project_path("docs/reproduction") / f"{paper}.jsonl").read_text().splitlines()
        records = {number: json.loads(line) for number, line in enumerate(lines)}
        return {number: record["facts"] for number, record in records.items() if record["kind"] == "prepared"}
    return read


@pytest.fixture
def new_plan(outputs):
    """``paper`` -> a plan of it as the shipped reproduction config makes it, never prepared."""
    config = load_config(ReproduceConfig, project_path("jobs/configs/reproduction.yaml"))

    def make(paper: str) -> PaperPlan:
        return PLANS[paper](PlanContext(config))
    return make
