"""BilDRL's data step and its facts: the aligned spaces (:mod:`parabit.recipes.bildrl.aligned_space`, one per
foreign language), then per held-out split the dictionaries and the paraphrase set rebuilt against them
(``build_dictionaries``) and the monolingual dictionary of the mono baselines (:mod:`parabit.papers.bildrl.mono`),
each built once (:func:`prepare_dictionaries`); and what the step measures about them (:class:`Measured`), kept in
the ledger's facts (:class:`~parabit.papers.bildrl.facts.BilDRLFacts`) and taken back from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from parabit.papers.bildrl.facts import BilDRLFacts, Measurement
from parabit.papers.bildrl.paper import DIRECTIONS
from parabit.papers.bildrl.stages import PARAPHRASE_STAGE, facts_key
from parabit.recipes.bildrl.aligned_space import AlignedSpaceConfig, build_aligned_space
from parabit.recipes.bildrl.config import DictionaryBuildConfig, foreign_language
from parabit.recipes.bildrl.evaluation import untrained_references


@dataclass
class Measured:
    """What the data step measured, per split: each task's untrained reference scores, each direction's test pairs
    also in training (``overlap_with_training``), and the counts of a direction's stage that changed format."""

    references: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # split -> task -> scores
    overlaps: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # split -> direction -> overlap
    stages: dict[str, dict[str, dict]] = field(default_factory=dict)  # split -> direction -> its stage's counts

    def facts(self, spaces: dict[str, dict]) -> BilDRLFacts:
        """The ``spaces``' reports, then per split and task what the data step measured: a task whose stages are
        built as they first were in ``measured``, a changed one under :func:`facts_key` (see
        :mod:`~parabit.papers.bildrl.facts`)."""
        measured: dict[str, dict[str, dict]] = {}
        changed: dict[str, dict[str, dict]] = {}

        def parts(split: str, task: str) -> dict:
            key = facts_key(task)
            return changed.setdefault(key, {}).setdefault(split, {}) if key else \
                measured.setdefault(split, {}).setdefault(task, {})

        for split, references in self.references.items():
            for task, scores in references.items():
                parts(split, task)["reference"] = scores
        for split, overlaps in self.overlaps.items():
            for task, overlap in overlaps.items():
                parts(split, task)["overlap"] = overlap
        for split, stages in self.stages.items():
            for task, counts in stages.items():
                parts(split, task)["stage"] = counts
        return BilDRLFacts.built(spaces=spaces, measured=measured, **changed)

    def restore(self, facts: BilDRLFacts) -> None:
        """Take back what :meth:`facts` returned (the spaces' reports aside): of a task whose stage changed format
        only what was measured under this code's formats (a record from before the change shows it as not measured
        until the data step runs again, which it does before the next cell trains)."""
        self.references, self.overlaps, self.stages = {}, {}, {}
        for split, tasks in facts.measured.items():
            for task, measurement in tasks.items():
                if not facts_key(task):
                    self._take(split, task, measurement)
        for task in (*DIRECTIONS, PARAPHRASE_STAGE):
            for split, measurement in facts.changed_stage(facts_key(task)).items() if facts_key(task) else ():
                self._take(split, task, measurement)

    def _take(self, split: str, task: str, measurement: Measurement) -> None:
        if measurement.reference is not None:
            self.references.setdefault(split, {})[task] = dict(measurement.reference)
        if measurement.overlap is not None:
            self.overlaps.setdefault(split, {})[task] = measurement.overlap.model_dump()
        if measurement.stage is not None:
            self.stages.setdefault(split, {})[task] = measurement.stage.model_dump()


def prepare_dictionaries(measured: Measured, folders: dict[str, Path], builds: dict[str, DictionaryBuildConfig],
                         space_config: AlignedSpaceConfig, mono: bool, quick: bool) -> None:
    """Build the aligned spaces (``folders``: each foreign language's; ``space_config``, its ``lang`` set per
    space), then per split (``builds``) the dictionaries (quick: no en-es, no paraphrase set) and, with ``mono``, the
    mono baselines' dictionary; what each split's build measures goes into ``measured``."""
    from parabit.papers.bildrl.mono import build_mono_dictionary
    from parabit.recipes.bildrl.build import build_dictionaries, overlap_with_training, stage_counts

    space = {"max_pairs": 20_000} if quick else {}
    spaces = {lang: build_aligned_space(space_config.model_copy(update={"lang": lang, **space}), path)
              for lang, path in folders.items()}
    directions = ("fr-en", "es-en") if quick else ("fr-en", "en-es", "es-en")
    for split, build in builds.items():
        outputs = build_dictionaries(build, spaces=spaces, directions=directions, paraphrase=not quick)
        measured.references[split] = {}
        measured.overlaps[split] = {d: overlap_with_training(build.output_path, d) for d in directions}
        measured.stages[split] = {d: stage_counts(outputs[f"dictionary-{d}"]) for d in directions if facts_key(d)}
        for lang, space in spaces.items():
            built = tuple(d for d in directions if foreign_language(d) == lang)
            measured.references[split].update(untrained_references(space, build.output_path, built,
                                                                   paraphrase=lang == "es" and not quick))
        if mono:
            english = spaces["fr"].words("en")
            build_mono_dictionary(build, {w: i for w, i in spaces["es"].words("en").items() if w in english})
