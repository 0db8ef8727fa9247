"""What BilDRL's data step records (:class:`BilDRLFacts`, version 2): each aligned space's report
(:class:`SpaceReport`) and, per split and task, what the step measured (:class:`Measurement`).
:class:`~parabit.papers.bildrl.data.Measured` builds it and takes it back.

A task whose built stage (or one it is built from) changed format since the first build
(:func:`~parabit.papers.bildrl.stages.changed_formats`) is measured under a key of its own that names the formats,
``<stage>@<stage>:<format>,...`` (:func:`~parabit.papers.bildrl.stages.facts_key`), beside ``measured``: the
reproduction keeps a record's facts key by key over a data step run again (what the record holds stays, what it
lacks is added), so a task measured again under a new format must be under a key a record made before the change
lacks, and a record never gives a task's numbers to code that builds its stage otherwise.

Version 1 (no ``version``) split what ``measured`` holds by kind: the strict split's untrained references
(``references``), the other splits' (``split_references``), each direction's test pairs in training
(``test_in_training``) and its defined words (``dictionary_words``); the keys of changed stages were as now.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, JsonValue, model_validator

from parabit.papers.facts import Facts, PaperFacts

CHANGED_STAGE = re.compile(r"[a-z-]+@[a-z-]+:\d+(,[a-z-]+:\d+)*")
"""A key of the measurements of a task whose stage changed format (see the module docstring)."""
FIRST_KEYS = ("references", "split_references", "test_in_training", "dictionary_words")
"""Version 1's keys of what ``measured`` now holds."""


class BLI(Facts):
    """An aligned space's bilingual lexicon induction, by test set: each set's scores."""

    projected: dict[str, dict[str, float]]
    """Before the map."""
    aligned: dict[str, dict[str, float]] | None = None
    """After the Procrustes map (when one was fitted)."""


class SpaceReport(Facts):
    """An aligned space's report (:func:`~parabit.recipes.bildrl.aligned_space.space_report`)."""

    config: dict[str, JsonValue]
    """The settings it was built with (its :class:`~parabit.recipes.bildrl.aligned_space.AlignedSpaceConfig`)."""
    english_words: int
    """The English rows of the space."""
    foreign_words: int
    """The foreign rows of the space."""
    sentence_pairs: int
    """The sentence pairs it was built from."""
    bli: BLI
    """Its bilingual lexicon induction."""
    alignment_pairs: int | None = None
    """The translation pairs the map was fitted on (when one was)."""


class Overlap(Facts):
    """How a direction's built split treats its test pairs
    (:func:`~parabit.recipes.bildrl.build.overlap_with_training`)."""

    rows: int
    """The direction's rows."""
    words: int | None = None
    """Its defined words (not counted by the first records)."""
    test: int
    """Its test pairs."""
    test_word_definitions: float
    """The mean definitions of its test words."""
    test_in_training: int
    """The test pairs that are training rows too."""


class StageCounts(Facts):
    """What a dictionary stage took in and kept (:func:`~parabit.recipes.bildrl.build.stage_counts`)."""

    rows_in: int
    """Its candidate rows, the early rejects among them."""
    rows_out: int
    """The rows it kept."""
    rejected: dict[str, int]
    """The rows it rejected, by reason."""
    lines: int
    """The distinct source lines its rows came from."""


class Measurement(Facts):
    """What the data step measured of one task on one split."""

    reference: dict[str, float] | None = None
    """The untrained reference's scores (:func:`~parabit.recipes.bildrl.evaluation.untrained_references`)."""
    overlap: Overlap | None = None
    """A direction's test pairs in training."""
    stage: StageCounts | None = None
    """A direction's dictionary stage's counts (measured where its format changed)."""


Measurements = dict[str, Measurement]
"""What the step measured of one task, by split."""


class BilDRLFacts(PaperFacts):
    """BilDRL's data step as its prepared record holds it (see the module docstring). Its other keys are those of
    the tasks whose stage changed format, each with what was measured of it by split."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Measurements]

    version: Literal[2] = 2
    """The shape: 2, these fields; 1 (no ``version``), what ``measured`` holds under four keys of its own."""
    spaces: dict[str, SpaceReport]
    """Each aligned space's report, by foreign language."""
    measured: dict[str, dict[str, Measurement]]
    """What was measured of each task whose stages are built as they first were, by split and task."""

    def changed_stage(self, key: str) -> Measurements:
        """What was measured, by split, of the task whose stage changed format as ``key`` says (none: {})."""
        return (self.model_extra or {}).get(key, {})

    @model_validator(mode="after")
    def _changed_stages_only(self) -> BilDRLFacts:
        unknown = [key for key in self.model_extra or {} if not CHANGED_STAGE.fullmatch(key)]
        if unknown:
            raise ValueError(f"unknown keys {unknown}: beside its fields, BilDRL's facts hold only the keys of "
                             "changed stages (<stage>@<stage>:<format>,...)")
        return self

    @classmethod
    def upgrade(cls, data: dict[str, Any], version: int) -> dict[str, Any]:
        """Version 1's keys in ``measured``, at any version: the reproduction keeps a version 1 record's keys over
        the version 2 facts of a data step run again (:data:`FIRST_KEYS` beside ``version``), and what the record
        measured of a task stays, what it lacks comes from the step run again."""
        if version >= 2 and not FIRST_KEYS & data.keys():
            return dict(data)
        measured = {split: {task: dict(parts) for task, parts in tasks.items()}
                    for split, tasks in data.get("measured", {}).items()}
        for split, tasks in first_measured(data).items():
            for task, parts in tasks.items():
                measured.setdefault(split, {}).setdefault(task, {}).update(parts)
        facts = {key: value for key, value in data.items() if key not in FIRST_KEYS}
        if version < 2:
            facts.update({key: counted(value) for key, value in facts.items() if CHANGED_STAGE.fullmatch(key)})
        return {**facts, "measured": measured}


def counted(measurements: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Version 1's measurements of a changed stage, by split, without the empty ``stage`` it wrote where it had
    counted none."""
    return {split: {part: value for part, value in parts.items() if part != "stage" or value}
            for split, parts in measurements.items()}


def first_measured(data: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """What version 1's keys hold (see the module docstring), by split and task."""
    measured: dict[str, dict[str, dict[str, Any]]] = {}

    def part(split: str, task: str) -> dict[str, Any]:
        return measured.setdefault(split, {}).setdefault(task, {})

    references = {"strict": data.get("references", {}), **data.get("split_references", {})}
    for split, scores in references.items():
        for task, reference in scores.items():
            part(split, task)["reference"] = reference
    words = data.get("dictionary_words", {})
    for split, overlaps in data.get("test_in_training", {}).items():
        for direction, overlap in overlaps.items():
            part(split, direction)["overlap"] = {**overlap, "words": words.get(split, {}).get(direction)}
    return measured
