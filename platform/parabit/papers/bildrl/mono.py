"""The monolingual (English) dictionary of Chen et al.'s mono baselines (GRU-mono, ATT-mono): English WordNet lemmas
defined by their synset's English definition, as the exactly-once stage ``dictionary-en-en`` beside the bilingual
ones. A mono model is trained on it and then retrieves a bilingual direction's held-out words among the foreign
rows of the shared space (``BilDRLConfig.evaluate_on``): the monolingual model plus the space as its translation.

No test definition of a bilingual direction whose definitions are English (es-en, fr-en) is kept: the mono model
never sees the definitions it is tested on.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc

from parabit.data.definitions import read_wordnet_glosses
from parabit.recipes.bildrl.build import read_direction, write_direction
from parabit.recipes.bildrl.entries import wordnet_candidates
from parabit.recipes.bildrl.config import DictionaryBuildConfig
from parabit.backtranslation.config import fingerprint
from parabit.backtranslation.stage import StageOutput, run_stage

DIRECTION = "en-en"
TESTED_WITH_ENGLISH_DEFINITIONS = ("es-en", "fr-en")


def build_mono_dictionary(config: DictionaryBuildConfig, english_words: dict[str, int]) -> StageOutput:
    """``dictionary-en-en`` under ``config.output_path`` (after the bilingual stages it must not leak into);
    ``english_words``: the English words a defined word may be, each with its frequency rank."""
    root = config.output_path
    held_out = set()
    for direction in TESTED_WITH_ENGLISH_DEFINITIONS:
        if (root / f"dictionary-{direction}").exists():
            rows = read_direction(root, direction)
            held_out |= set(rows.filter(pc.equal(rows["split"], "test"))["definition"].to_pylist())
    settings = {k: v for k, v in vars(config).items() if k not in ("output_dir", "spaces")}

    def compute(workdir: Path) -> int:
        synsets = read_wordnet_glosses()
        candidates, early = wordnet_candidates(synsets, {s.definition: s.definition for s in synsets})
        kept = [c for c in candidates if c.definition not in held_out]
        early += [(c.line, "definition of a bilingual test word", f"{c.word}\t{c.definition}")
                  for c in candidates if c.definition in held_out]
        return write_direction(workdir, DIRECTION, kept, early, english_words, config)

    return run_stage(root, f"dictionary-{DIRECTION}", fingerprint("mono", settings, sorted(held_out),
                                                                  len(english_words)), compute)
