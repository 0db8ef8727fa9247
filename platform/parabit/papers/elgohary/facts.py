"""What Elgohary & Carpuat's data step records (:class:`ElgoharyFacts`, version 2): the phrase tables' paths, the
pairs each condition offers and Table 6's sizes, each J_bi tuning's sweep (:class:`Sweep`) and its points re-scored
at the cells' scale (:class:`Rescoring`), and the counts of Tables 4 and 5.
:class:`~parabit.papers.elgohary.data.ElgoharyData` builds it and takes it back.

Version 1, the facts as plain dicts (no ``version``), had these fields but that older records lack some (their
analyses, the data ablation's pairs and the re-scoring came later: empty), the first sweeps pinned nothing
(:func:`unpinned`), and the first records had one sweep for every condition instead (:func:`first_form`).
"""

from __future__ import annotations

from typing import Any, Literal

from parabit.papers.facts import Facts, PaperFacts

STATED, CONTESTED = "stated", "contested"  # a condition's J_bi tuned under its stated choices, or the other reading

Value = bool | int | float | str | None
"""A sweep parameter's value (as the sweep space gives it)."""


class SweepTrial(Facts):
    """One trial of a J_bi sweep, as its MLflow run holds it (:func:`~parabit.papers.elgohary.tuning.sweep_trials`)."""

    trial: str
    """The trial's run name."""
    status: str
    """Its MLflow run's status (``FINISHED``, ``FAILED``, ...)."""
    params: dict[str, str | None]
    """Its parameters as MLflow keeps them (text)."""
    dev_score: float | None
    """Its last score on the paper's dev set (None: it logged none)."""
    epochs: float | None
    """The epochs it trained (the scheduler stops weak trials early)."""
    typed: dict[str, Value] | None = None
    """Its parameters as the sweep space's values (absent from the first records)."""


class Sweep(Facts):
    """A tuning's J_bi sweep at the paper's proxy scale (:func:`~parabit.papers.elgohary.tuning.run_tuning_sweep`)."""

    name: str
    """The sweep's name (its parent MLflow run's)."""
    condition: str
    """The condition whose J_bi cells take its choice (and whose pairs it trained on)."""
    reading: Literal["stated", "contested"]
    """Under the choices the paper states, or its other reading where it contradicts itself."""
    pinned: dict[str, Value]
    """The stated choices the sweep held fixed."""
    space: str
    """The sweep space's file (as the settings name it)."""
    parent_run_id: str | None
    """The sweep's parent MLflow run."""
    best_params: dict[str, Value]
    """Its best point's parameters."""
    best_dev_score: float | None
    """Its best point's score on the dev set."""
    trials: list[SweepTrial]
    """Every trial, best first."""


class RescoredPoint(Facts):
    """One of a sweep's best points, trained again at the cells' own scale as a cell of its own."""

    group: str
    """The cell group that trains it (``<condition>-jbi-rescore<i>``)."""
    trial: str
    """The sweep trial it comes from."""
    typed: dict[str, Value]
    """Its parameters."""
    proxy_dev: float | None
    """Its dev score at the sweep's proxy scale."""


class Rescoring(Facts):
    """A tuning's best points re-scored at the cells' scale (:func:`~parabit.papers.elgohary.tuning.rescore_tuning`):
    the points, then, once their cells trained, their dev scores and the choice."""

    candidates: list[RescoredPoint]
    """The points, best at the proxy scale first."""
    dev: dict[str, float | None] | None = None
    """Each point's dev score at the cells' scale, by group (None: its cell logged none)."""
    chosen: str | None = None
    """The group of the point taken: the best on dev."""
    choice: dict[str, Value] | None = None
    """The point taken's parameters: the tuning's J_bi settings."""


class ElgoharyFacts(PaperFacts):
    """Elgohary & Carpuat's data step as its prepared record holds it (see the module docstring)."""

    version: Literal[2] = 2
    """The shape: 2, these fields; 1 (no ``version``), the same ones as plain dicts, some absent in older records."""
    data_paths: dict[str, str]
    """The phrase tables each phrase condition trains from, by condition (a path)."""
    europarl_paths: dict[str, str]
    """The same built from Europarl alone (the data ablation's)."""
    available: dict[str, int]
    """The pairs each condition's main cells can train on, by condition."""
    sizes: list[tuple[int, str]]
    """Table 6: each size's pairs of bilingual phrases and the paper's size it stands for, smallest first."""
    europarl_available: dict[str, int]
    """The data ablation's pairs (Europarl alone), by condition."""
    sweeps: dict[str, Sweep]
    """Each tuning's sweep, keyed by :func:`~parabit.papers.elgohary.data.tuning_key`."""
    rescored: dict[str, Rescoring]
    """Each tuning's points re-scored at the cells' scale, keyed as :attr:`sweeps`."""
    undertrained: dict[str, dict[str, float]]
    """Table 4: each condition's share of undertrained test tokens, by test set."""
    filtered: dict[str, int]
    """Table 5: each condition's pairs left without a SICK bigram."""

    @classmethod
    def upgrade(cls, data: dict[str, Any], version: int) -> dict[str, Any]:
        if version >= 2:
            return dict(data)
        data = first_form(data) if {"jbi", "sweep", "phrase_sweep"} & data.keys() else data
        sweeps = {key: unpinned(key, sweep) for key, sweep in data.get("sweeps", {}).items()}
        return {"europarl_paths": {}, "europarl_available": {}, "rescored": {}, **data, "sweeps": sweeps}


def first_form(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1's first records as its later ones: one sweep on the bilingual sentences (``sweep``) whose best point
    every condition's J_bi cells took (``jbi``: the settings that gave them), the bilingual phrases' own sweep's
    where it ran (``phrase_sweep``), become each condition's sweep."""
    facts = {key: value for key, value in data.items() if key not in ("jbi", "sweep", "phrase_sweep")}
    shared, phrases = data.get("sweep"), data.get("phrase_sweep")
    sweeps = {c: phrases if c == "bilingual_phrases" and phrases else shared for c in data["available"]}
    return {**facts, "sweeps": {condition: sweep for condition, sweep in sweeps.items() if sweep}}


def unpinned(condition: str, sweep: dict[str, Any]) -> dict[str, Any]:
    """A version 1 sweep as a :class:`Sweep`: one from before the paper's stated choices were pinned (no
    ``condition``) tuned ``condition`` under the stated reading with nothing pinned; the first records' ``seconds``
    (its time, which nothing reads) is left out."""
    sweep = {key: value for key, value in sweep.items() if key != "seconds"}
    return sweep if "condition" in sweep else {**sweep, "condition": condition, "reading": STATED, "pinned": {}}
