"""Wieting et al.'s facts (:class:`WietingFacts`): the committed prepared record (version 1) validates and restores
the plan as its dicts did, and what the plan writes (version 2) restores it again."""

from __future__ import annotations

import json
from pathlib import Path

from parabit.papers.wieting.analyses import Comparison
from parabit.papers.wieting.facts import WietingFacts
from parabit.papers.wieting.thresholds import Tuned
from parabit.paths import local
from parabit.reproduction.paper_run import PaperRun


def test_the_committed_record_validates_and_restores_the_plan_as_its_dicts_did(committed_facts, new_plan):
    records = committed_facts("wieting")
    assert records and all(WietingFacts.model_validate(facts).version == 2 for facts in records.values())
    facts = records[max(records)]
    assert "version" not in facts
    plan = new_plan("wieting")
    PaperRun(plan).restore(facts)
    prepared = plan.prepared
    assert prepared.paths == {key: Path(path) for key, path in local(facts["paths"]).items()}
    assert (prepared.sizes, prepared.available_by_range) == (facts["sizes"], facts["available_by_range"])
    assert prepared.tuned == {label: Tuned.from_dict(tuned) for label, tuned in local(facts["tuned"]).items()}
    assert prepared.compared == {engine: Comparison.from_dict(c) for engine, c in facts["comparisons"].items()}


def test_what_the_plan_writes_is_version_2_and_restores_it_again(committed_facts, new_plan):
    records = committed_facts("wieting")
    recorded = records[max(records)]
    plan = new_plan("wieting")
    PaperRun(plan).restore(recorded)
    written = json.loads(json.dumps(PaperRun(plan).prepared_facts()))
    assert written == {**recorded, "version": 2}  # version 1's fields, typed
    again = new_plan("wieting")
    PaperRun(again).restore(written)
    assert again.prepared == plan.prepared and PaperRun(again).prepared_facts() == written
