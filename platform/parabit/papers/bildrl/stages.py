"""Which built stages a BilDRL cell reads, and where the facts of a changed stage are kept.

A cell's digest reads only the stages its config reads (:func:`stages_read`, through
:meth:`parabit.papers.bildrl.plan.BilDRLPlan.cells_fingerprint`): a stage whose format changed
(:data:`parabit.recipes.bildrl.build.STAGE_FORMATS`) makes stale the cells that read it, directly or through the
stages built from it (:data:`UPSTREAM`), and no other. What the data step measures about such a stage is kept in the
facts under the stage's name and format (:func:`facts_key`), so a prepared record made before the change never shows
its numbers as this code's.
"""

from __future__ import annotations

from parabit.papers.bildrl.mono import DIRECTION as MONO, TESTED_WITH_ENGLISH_DEFINITIONS
from parabit.recipes.bildrl.build import STAGE_FORMATS
from parabit.recipes.bildrl.config import BilDRLConfig

PARAPHRASE_STAGE = "paraphrase-en-es"
# What each built stage is built from (the stages upstream of it): the mono dictionary leaves out the test
# definitions of the directions it is tested on, and the paraphrase set is made of en-es dictionary rows.
UPSTREAM = {f"dictionary-{MONO}": tuple(f"dictionary-{d}" for d in TESTED_WITH_ENGLISH_DEFINITIONS),
            PARAPHRASE_STAGE: ("dictionary-en-es",)}


def built_from(stages: set[str]) -> set[str]:
    """``stages`` with every stage they are built from (:data:`UPSTREAM`), transitively."""
    result: set[str] = set()
    wanted = set(stages)
    while wanted:
        stage = wanted.pop()
        result.add(stage)
        wanted |= set(UPSTREAM.get(stage, ())) - result
    return result


def stages_read(config: BilDRLConfig) -> set[str]:
    """The built stages a run reads, with everything they are built from: the dictionaries of its directions and of
    the directions it is evaluated on, and the paraphrase set when it scores Table 4."""
    wanted = {f"dictionary-{d}" for d in (*config.directions, *config.evaluate_on)}
    if config.paraphrase and config.language == "es":
        wanted.add(PARAPHRASE_STAGE)
    return built_from(wanted)


def changed_formats(stages: set[str]) -> dict[str, int]:
    """The stages of ``stages`` (and those they are built from) that this code builds in a format other than their
    first (:data:`STAGE_FORMATS`), with the format."""
    return {stage: STAGE_FORMATS[stage] for stage in sorted(built_from(stages)) if stage in STAGE_FORMATS}


def task_stage(task: str) -> str:
    """The stage a measured task is read from: a direction's dictionary, or the paraphrase set."""
    return task if task == PARAPHRASE_STAGE else f"dictionary-{task}"


def facts_key(task: str) -> str:
    """Where the facts measured on ``task`` are kept when its stage, or one it is built from, changed format
    (``<stage>@<stage>:<format>,...``, a key of :class:`~parabit.papers.bildrl.facts.BilDRLFacts` of its own);
    ``""`` when all are as they always were (its facts are in ``measured``, so a prepared record made before a
    format changed keeps only what still holds)."""
    formats = changed_formats({task_stage(task)})
    return task_stage(task) + "@" + ",".join(f"{s}:{f}" for s, f in formats.items()) if formats else ""
