"""Elgohary & Carpuat's facts (:class:`ElgoharyFacts`): every prepared record in the committed ledger validates, a
version 1 record restores the plan as the dicts did, the older forms of version 1 migrate, and what the plan writes
restores it again."""

from __future__ import annotations

import json

import pytest

from parabit.papers.elgohary.facts import STATED, ElgoharyFacts
from parabit.paths import local
from parabit.reproduction.paper_run import PaperRun

NEWEST = 124  # the ledger line of the newest record (version 1, the current data digest)
NO_RESCORING = 43  # per-condition sweeps, before the stated choices were pinned and the re-scoring
FIRST_FORM = 27  # one sweep for every condition, the bilingual phrases' own beside it


def state(plan) -> dict:
    return {name: getattr(plan, name) for name in ("data_paths", "europarl_paths", "available", "sizes", "sweeps",
                                                   "rescored", "europarl_available", "_ratios", "_filtered_counts")}


def test_every_committed_prepared_record_validates_and_restores_the_plan(committed_facts, new_plan):
    records = committed_facts("elgohary")
    assert {0, FIRST_FORM, NO_RESCORING, NEWEST} <= set(records)
    for number, facts in records.items():
        assert ElgoharyFacts.model_validate(facts).version == 2, number
        PaperRun(new_plan("elgohary")).restore(facts)


def test_a_version_1_record_restores_the_plan_as_its_dicts_did(committed_facts, new_plan):
    facts = committed_facts("elgohary")[NEWEST]
    assert "version" not in facts
    plan = new_plan("elgohary")
    PaperRun(plan).restore(facts)
    assert plan.sizes == {pairs: label for pairs, label in facts["sizes"]} and plan.sizes[1_000_000] == "1M"
    assert plan.sweeps == facts["sweeps"] and plan.rescored == facts["rescored"]
    assert [plan.data_paths, plan.europarl_paths] == local([facts["data_paths"], facts["europarl_paths"]])
    assert (plan.available, plan.europarl_available) == (facts["available"], facts["europarl_available"])
    assert plan.undertrained() == facts["undertrained"] and plan._filtered_counts == facts["filtered"]
    assert plan.tuned("bilingual_phrases") == facts["rescored"]["bilingual_phrases"]["choice"]


def test_older_forms_of_version_1_migrate(committed_facts):
    records = committed_facts("elgohary")
    older = ElgoharyFacts.model_validate(records[NO_RESCORING])
    assert older.rescored == {} and older.europarl_available == {}
    sweep = older.sweeps["ppdb"]
    assert (sweep.condition, sweep.reading, sweep.pinned) == ("ppdb", STATED, {})
    assert [trial.model_dump() for trial in sweep.trials] == records[NO_RESCORING]["sweeps"]["ppdb"]["trials"]

    first = records[FIRST_FORM]
    migrated = ElgoharyFacts.model_validate(first)
    assert set(migrated.sweeps) == set(first["available"]) and migrated.europarl_paths == {}
    assert migrated.sweeps["bilingual_phrases"].best_params == first["phrase_sweep"]["best_params"]
    assert migrated.sweeps["ppdb"].best_params == first["sweep"]["best_params"] == first["jbi"]
    assert migrated.sweeps["ppdb"].trials[0].typed is None  # the first trials kept MLflow's text only
    assert "typed" not in migrated.ledger()["sweeps"]["ppdb"]["trials"][0]


def test_what_the_plan_writes_is_version_2_and_restores_it_again(committed_facts, new_plan):
    recorded = committed_facts("elgohary")[NEWEST]
    plan = new_plan("elgohary")
    PaperRun(plan).restore(recorded)
    written = json.loads(json.dumps(PaperRun(plan).prepared_facts()))
    # Version 2 holds version 1's fields, typed: the same facts with their version.
    assert written == {**recorded, "version": 2}
    again = new_plan("elgohary")
    PaperRun(again).restore(written)
    assert state(again) == state(plan) and PaperRun(again).prepared_facts() == written


def test_a_record_of_a_newer_version_or_with_an_unknown_key_is_refused(committed_facts):
    facts = committed_facts("elgohary")[NEWEST]
    with pytest.raises(ValueError, match="version 3: this code reads versions 1 to 2"):
        ElgoharyFacts.model_validate({**facts, "version": 3})
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        ElgoharyFacts.model_validate({**facts, "version": 2, "sweep": {}})
