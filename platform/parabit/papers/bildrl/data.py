"""BilDRL's data step and its facts: the aligned spaces (:mod:`parabit.recipes.bildrl.aligned_space`, one per
foreign language), then per held-out split the dictionaries and the paraphrase set rebuilt against them
(``build_dictionaries``) and the monolingual dictionary of the mono baselines (:mod:`parabit.papers.bildrl.mono`),
each built once (:func:`prepare_dictionaries`); and what the step measures about them (:class:`Measured`), kept in
the ledger's facts and taken back from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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

    def facts(self, spaces: dict[str, dict]) -> dict:
        """The ``spaces``' reports, then per split and task what the data step measured: a task whose stage is built
        as it always was under the keys it always had (``references``, ``split_references``, ``test_in_training``,
        and its defined words in ``dictionary_words``), a changed one under :func:`facts_key`."""
        facts: dict = {"spaces": spaces, "references": {}, "split_references": {},
                       "test_in_training": {}, "dictionary_words": {}}
        for split, references in self.references.items():
            for task, scores in references.items():
                if key := facts_key(task):
                    facts.setdefault(key, {}).setdefault(split, {})["reference"] = scores
                elif split == "strict":
                    facts["references"][task] = scores
                else:
                    facts["split_references"].setdefault(split, {})[task] = scores
        for split, overlaps in self.overlaps.items():
            for direction, overlap in overlaps.items():
                if key := facts_key(direction):
                    facts.setdefault(key, {}).setdefault(split, {}).update(
                        overlap=overlap, stage=self.stages.get(split, {}).get(direction, {}))
                else:
                    facts["test_in_training"].setdefault(split, {})[direction] = {
                        k: v for k, v in overlap.items() if k != "words"}
                    facts["dictionary_words"].setdefault(split, {})[direction] = overlap.get("words")
        return facts

    def restore(self, facts: dict) -> None:
        """Take back what :meth:`facts` returned (the spaces' reports aside)."""
        # A record from before the references (or the other splits) were measured: they show as not measured until
        # the data step runs again (it does before the next cell trains). Under the old keys only what this code
        # builds as it always was counts: a changed stage's numbers come from its own key, or are not measured.
        recorded = {"strict": dict(facts.get("references", {})), **facts.get("split_references", {})}
        self.references = {split: {task: scores for task, scores in references.items() if not facts_key(task)}
                           for split, references in recorded.items()}
        words = facts.get("dictionary_words", {})
        self.overlaps = {split: {d: {**overlap, **({"words": words[split][d]} if words.get(split, {}).get(d)
                                                   is not None else {})}
                                 for d, overlap in overlaps.items() if not facts_key(d)}
                         for split, overlaps in facts.get("test_in_training", {}).items()}
        self.stages = {}
        for task in (*DIRECTIONS, PARAPHRASE_STAGE):
            for split, measured in facts.get(facts_key(task), {}).items() if facts_key(task) else ():
                if "reference" in measured:
                    self.references.setdefault(split, {})[task] = measured["reference"]
                if "overlap" in measured:
                    self.overlaps.setdefault(split, {})[task] = measured["overlap"]
                    self.stages.setdefault(split, {})[task] = measured.get("stage", {})


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
