"""A paper's versioned facts (:class:`PaperFacts`): a record without a version is version 1 and is migrated, one this
code builds is of its version, the plan's ``missing`` is passed over, an unmeasured optional part is left out of the
dump, and a record of a newer version is refused."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from parabit.papers.facts import Facts, PaperFacts


class Counts(Facts):
    rows: int
    words: int | None = None
    kept: int | None


class ToyFacts(PaperFacts):
    version: Literal[3] = 3
    counts: dict[str, Counts]

    @classmethod
    def upgrade(cls, data: dict[str, Any], version: int) -> dict[str, Any]:
        if version == 1:  # version 1 counted rows only
            data = {"counts": {key: {"rows": rows, "kept": None} for key, rows in data["rows"].items()}}
        return dict(data)


def test_a_record_without_a_version_is_version_1_and_migrated_and_missing_is_passed_over():
    facts = ToyFacts.model_validate({"missing": {"g": "why"}, "rows": {"a": 3}})
    assert facts.version == 3 and facts.counts == {"a": Counts(rows=3, kept=None)}
    # An optional part not measured (default None) is left out; a measured None is kept.
    assert facts.ledger() == {"version": 3, "counts": {"a": {"rows": 3, "kept": None}}}
    assert ToyFacts.model_validate(facts.ledger()) == facts


def test_facts_this_code_builds_are_of_its_version_and_a_newer_record_is_refused():
    built = ToyFacts.built(counts={"a": {"rows": 3, "words": 2, "kept": 1}})
    assert built.ledger() == {"version": 3, "counts": {"a": {"rows": 3, "words": 2, "kept": 1}}}
    with pytest.raises(ValueError, match="ToyFacts of version 4: this code reads versions 1 to 3"):
        ToyFacts.model_validate({"version": 4, "counts": {}})
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        ToyFacts.built(counts={}, rows={})
