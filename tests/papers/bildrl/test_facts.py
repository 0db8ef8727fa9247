"""BilDRL's facts (:class:`BilDRLFacts`): every prepared record in the committed ledger validates, a version 1 record
(its four keys, and a changed stage under its own key) restores the plan as its dicts did, a version 1 record kept
over version 2 facts (the reproduction's merge) keeps what it measured and adds what it lacks, and what the plan
writes restores it again."""

from __future__ import annotations

import json

import pytest

from parabit.papers.bildrl.facts import BilDRLFacts
from parabit.papers.bildrl.stages import facts_key
from parabit.reproduction.paper_run import PaperRun

NEWEST = 102  # the ledger line of the newest record: version 1, es-en measured under its changed format
ES_EN = facts_key("es-en")


def test_every_committed_prepared_record_validates_and_restores_the_plan(committed_facts, new_plan):
    records = committed_facts("bildrl")
    assert len(records) >= 5 and ES_EN in records[NEWEST]
    for number, facts in records.items():
        assert BilDRLFacts.model_validate(facts).version == 2, number
        PaperRun(new_plan("bildrl")).restore(facts)


def test_a_version_1_record_restores_the_plan_as_its_dicts_did(committed_facts, new_plan):
    facts = committed_facts("bildrl")[NEWEST]
    plan = new_plan("bildrl")
    PaperRun(plan).restore(facts)
    measured = plan.measured
    assert plan.space_reports() == facts["spaces"]
    # Tasks built as they first were: from version 1's keys, with each direction's defined words.
    assert measured.references["strict"]["en-es"] == facts["references"]["en-es"]
    assert measured.references["authors"]["fr-en"] == facts["split_references"]["authors"]["fr-en"]
    assert measured.overlaps["strict"]["en-es"] == {**facts["test_in_training"]["strict"]["en-es"],
                                                    "words": facts["dictionary_words"]["strict"]["en-es"]}
    # es-en, whose dictionary changed format: from its own key only, never the old numbers under version 1's keys.
    for split in ("strict", "authors"):
        assert measured.references[split]["es-en"] == facts[ES_EN][split]["reference"]
        assert measured.overlaps[split]["es-en"] == facts[ES_EN][split]["overlap"]
        assert measured.stages[split] == {"es-en": facts[ES_EN][split]["stage"]}
    assert facts["test_in_training"]["strict"]["es-en"]["rows"] != measured.overlaps["strict"]["es-en"]["rows"]
    # The migrated facts keep those old numbers, as the record does, where only a task built as it first was is read.
    old = BilDRLFacts.model_validate(facts).measured["strict"]["es-en"]
    assert old.overlap.rows == facts["test_in_training"]["strict"]["es-en"]["rows"]
    # Version 1 wrote an empty stage where it had counted none: not counted.
    uncounted = {**facts, ES_EN: {"strict": {**facts[ES_EN]["strict"], "stage": {}}}}
    assert BilDRLFacts.model_validate(uncounted).changed_stage(ES_EN)["strict"].stage is None


def test_a_version_1_record_kept_over_version_2_facts_keeps_what_it_measured(committed_facts, new_plan):
    recorded = committed_facts("bildrl")[NEWEST]
    plan = new_plan("bildrl")
    PaperRun(plan).restore(recorded)
    fresh = PaperRun(plan).prepared_facts()
    fresh["measured"]["strict"]["en-es"]["reference"] = {"p_at_1": 0.5}  # measured differently this time
    fresh["measured"]["other"] = {"fr-en": {"reference": {"p_at_1": 0.25}}}  # a split the record lacks
    old = {key: value for key, value in recorded.items() if key != ES_EN}
    again = new_plan("bildrl")
    PaperRun(again).restore({**fresh, **old})  # what the reproduction keeps when the data step runs again
    assert again.measured.references["strict"]["en-es"] == recorded["references"]["en-es"]
    assert again.measured.references["other"] == {"fr-en": {"p_at_1": 0.25}}
    assert again.measured.overlaps["strict"]["es-en"] == recorded[ES_EN]["strict"]["overlap"]  # from the step


def test_what_the_plan_writes_is_version_2_and_restores_it_again(committed_facts, new_plan):
    plan = new_plan("bildrl")
    PaperRun(plan).restore(committed_facts("bildrl")[NEWEST])
    written = json.loads(json.dumps(PaperRun(plan).prepared_facts()))
    assert written["version"] == 2 and set(written) == {"missing", "version", "spaces", "measured", ES_EN}
    assert "es-en" not in written["measured"]["strict"]  # a changed stage's numbers only under its own key
    again = new_plan("bildrl")
    PaperRun(again).restore(written)
    assert again.measured == plan.measured and again.space_reports() == plan.space_reports()
    assert PaperRun(again).prepared_facts() == written


def test_beside_its_fields_only_the_keys_of_changed_stages_are_taken(committed_facts):
    facts = {**committed_facts("bildrl")[NEWEST], "version": 2, "measured": {}}
    facts = {key: value for key, value in facts.items() if key not in ("references", "split_references",
                                                                         "test_in_training", "dictionary_words")}
    assert BilDRLFacts.model_validate(facts).changed_stage(ES_EN)["strict"].stage.rows_out > 0
    with pytest.raises(ValueError, match="only the keys of changed stages"):
        BilDRLFacts.model_validate({**facts, "measurd": {}})
    with pytest.raises(ValueError, match="stage.lines"):
        BilDRLFacts.model_validate({**facts, ES_EN: {"strict": {"stage": {"rows_in": 1, "rows_out": 1,
                                                                           "rejected": {}}}}})
