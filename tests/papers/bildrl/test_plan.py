"""BilDRL's plan restored from the committed ledger, as ``parabit reproduce --document-only`` restores it: the cells
that read no changed stage keep their records, Table 4 is not testable with its measured reason, the facts of a
changed stage never come from a record made before the change, and the text reads its numbers from records and
facts."""

from __future__ import annotations

import json

import pytest

from parabit.config import load_config
from parabit.papers.bildrl.plan import BilDRLPlan
from parabit.papers.bildrl.stages import facts_key, stages_read
from parabit.papers.findings import UNTESTABLE
from parabit.paths import local
from parabit.papers.plan import PlanContext
from parabit.paths import project_path
from parabit.reproduction.config import ReproduceConfig
from parabit.reproduction.paper_run import PaperRun
from parabit.reproduction.reproduce import Reproduction

ES_EN = "dictionary-es-en@dictionary-es-en:2"


@pytest.fixture(scope="module")
def restored(outputs, tmp_path_factory):
    """The plan and its planned cells, restored from the committed ledger as it was before the es-en dictionary
    changed (its data step's records made by the new code left out; nothing prepared)."""
    folder = tmp_path_factory.mktemp("ledger")
    lines = (project_path("docs/reproduction") / "bildrl.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    (folder / "bildrl.jsonl").write_text("".join(line + "\n" for line, record in zip(lines, records)
                                                 if not (record["kind"] == "prepared" and ES_EN in record["facts"])))
    config = load_config(ReproduceConfig, project_path("jobs/configs/reproduction.yaml")).model_copy(update={
        "ledger": str(folder), "document": str(tmp_path_factory.mktemp("doc") / "reproduction.md")})
    reproduction = Reproduction(config, {})
    paper = PaperRun(BilDRLPlan(PlanContext(config)))
    reproduction.open(paper, prepare=False)
    assert paper.restored
    return reproduction, paper


def reads_es_en(key: str) -> bool:
    """The groups whose cells read the es-en dictionary: its own cells, the multi-task and joint ones (es-en is one
    of their directions), and the mono baselines (their English dictionary leaves out es-en's test definitions)."""
    return "es-en" in key or any(part in key.split("-") for part in ("mtl", "joint", "mono"))


def test_only_the_cells_that_read_the_changed_es_en_dictionary_change_their_digest(restored):
    reproduction, paper = restored
    plan, groups = paper.plan, {group.key: group for group in paper.groups}
    affected = {key for key in groups if reads_es_en(key)}
    assert {"att-es-en", "gru-mtl-authors", "att-joint", "att-mono-fr", "att-es-en-softmax-5-layers"} <= affected
    for key, group in groups.items():
        if key in affected:
            assert "dictionary-es-en" in stages_read(group.config)
            assert plan.cells_fingerprint(group) == {**plan.data_fingerprint(), "formats": {"dictionary-es-en": 2}}
        else:
            assert plan.cells_fingerprint(group) == plan.data_fingerprint(), key
    kept = [cell for cell in paper.planned if cell.group not in affected]
    assert {cell.group for cell in kept} >= {"att-en-es", "att-fr-en-authors", "att-en-es-softmax-all"}
    missing = [cell.name for cell in kept if reproduction.ledger.cell("bildrl", cell.name, cell.digest) is None]
    assert not missing  # their records stay valid: the same digest as when they were trained


def test_table_4_is_not_testable_and_says_the_untrained_reference_it_measured(restored):
    _, paper = restored
    plan = paper.plan
    references = {split: plan.measured.references[split]["paraphrase-en-es"]["accuracy"] for split in plan.splits}
    table4 = [table for table in plan.tables() if table.title.startswith("Table 4")]
    assert len(table4) == len(plan.splits) and all(t.title.endswith("not testable here") for t in table4)
    paraphrase = [f for f in plan.findings() if "paraphrase" in f.claim or "Table 4" in f.claim]
    assert len(paraphrase) == 1 + 3 * len(plan.splits)  # the baselines' finding, then three per split
    for finding in paraphrase:
        comparison = finding.compare(paper.results)
        assert comparison.verdict == UNTESTABLE and not finding.groups
        if finding.claim.startswith("paraphrase") or "reference" in finding.claim:
            split = "authors" if "authors' split" in finding.claim else "strict"
            assert f"scores {100 * references[split]:.2f} % accuracy" in finding.untestable
            assert "its own Apertium translation" in finding.untestable


def test_a_record_from_before_the_change_keeps_what_still_holds_and_never_the_changed_stage(restored):
    reproduction, paper = restored
    plan = paper.plan
    assert set(plan.measured.overlaps["strict"]) == set(plan.measured.overlaps["authors"]) == {"en-es", "fr-en"}
    assert "es-en" not in plan.measured.references["strict"] and "en-es" in plan.measured.references["strict"]
    recorded = reproduction.ledger.prepared("bildrl", paper.data_digest).facts
    assert recorded["test_in_training"]["strict"]["es-en"]["rows"] > 0  # the old es-en numbers are in the record
    # The data step measures es-en again: its facts go under their own key, which a record made before the change
    # lacks, so they survive the reproduction's merge (what the record holds stays, what it lacks is added).
    fresh = plan.facts()
    measured = {"rows": 99, "words": 11, "test": 5, "test_word_definitions": 1.0, "test_in_training": 0}
    stage = {"rows_in": 120, "rows_out": 99, "rejected": {"duplicate entry": 21}, "lines": 9}
    fresh[ES_EN] = {"strict": {"overlap": measured, "stage": stage, "reference": {"p_at_1": 0.5}}}
    again = BilDRLPlan(plan.context)
    again.restore(local({**fresh, **recorded}))
    assert again.measured.overlaps["strict"]["es-en"] == measured and again.measured.stages["strict"]["es-en"] == stage
    assert again.measured.references["strict"]["es-en"] == {"p_at_1": 0.5}
    assert again.measured.overlaps["authors"].keys() == {"en-es", "fr-en"}  # not measured there yet: shown as such
    assert again.measured.overlaps["strict"]["en-es"] == plan.measured.overlaps["strict"]["en-es"]
    assert facts_key("es-en") == ES_EN and facts_key("en-es") == facts_key("paraphrase-en-es") == ""


def test_the_text_reads_its_numbers_from_records_facts_and_settings(restored):
    _, paper = restored
    plan = paper.plan
    departures = {d.aspect: d for d in plan.departures()}
    assert departures["training rows"].ours.startswith(f"at most {plan.settings.max_train_rows:,} rows per direction")
    space = plan.space_reports()["es"]
    assert f"{space['english_words']:,} English / {space['foreign_words']:,} es" in departures["candidates"].ours
    assert "audit" not in departures["candidates"].unmeasured
    assert "balance: equal" in departures["multi-task balance"].ours
    sections = {section.title: section.body for section in plan.sections(paper.results)}
    gap = sections["Why held-out words stay far below the paper here"]
    every = paper.results.of("att-en-es-softmax-all")[0].record.data["train_rows"]["en-es"]
    assert f"Every en-es training row ({every:,};" in gap and "not short of rows" not in gap
    overlap = sections["Test pairs also in training, by split"]
    assert "| strict | es-en | not measured by this code's data step yet | | | | | | |" in overlap.splitlines()
    rows = paper.results.of("att-en-es")[0].record.data["train_rows"]["en-es"]
    assert f"| {rows:,} | " in overlap.split("| strict | en-es |")[1].split("\n")[0]
