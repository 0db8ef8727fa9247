"""Elgohary & Carpuat's groups of cells: Table 3's conditions × objectives, the main comparison's ablations (one
departure from the paper switched to its other choice each), Table 5's pairs without a SICK bigram, Table 6's sizes,
and the tunings' re-scored points, in the order a long run trains them."""

from __future__ import annotations

from parabit.papers.cells import Group
from parabit.papers.elgohary.config import MAIN
from parabit.papers.elgohary.data import CONTESTED, OTHER_READING, ElgoharyData
from parabit.papers.elgohary.paper import CONDITION_LABELS, OBJECTIVE_LABELS
from parabit.papers.elgohary.tuning import OPTIMISER, best_other, rescore_groups

# Ablation group suffixes (run names: <prefix>-elgohary-<condition>-jbi-<suffix>-s<seed>).
ABLATION_SUFFIX = {"composition": "mean", "pruning": "pruned", "optimiser": "otheroptimiser", "data": "europarl",
                   "tuning": "earliertuning", "budget": "proxychoice", "reading": OTHER_READING}
ABLATION_LABELS = {"composition": "mean composition", "pruning": "count-pruned phrase table",
                   "optimiser": "the other optimiser", "data": "Europarl only", "tuning": "the earlier single setting",
                   "budget": "the proxy sweep's choice", "reading": "the paper's other reading"}


def ablation_group(condition: str, ablation: str) -> str:
    """The group of ``condition``'s J_bi cells with ``ablation``'s departure switched."""
    return f"{condition}-jbi-{ABLATION_SUFFIX[ablation]}"


def ablation_config(plan: ElgoharyData, condition: str, ablation: str):
    """The J_bi config of ``condition`` with one departure switched to its other choice (None: the ablation does
    not apply to this condition, or its tuning found no other choice)."""
    if ablation == "composition":
        return plan.training_config(condition, "jbi", {"model.options": {"pooling": "mean"}})
    if ablation == "pruning":
        return plan.training_config(condition, "jbi", min_pair_count=plan.config.pruned_min_count) \
            if condition == "bilingual_phrases" else None
    if ablation == "optimiser":
        other = best_other(plan.scored_points(condition), OPTIMISER, plan.tuned(condition).get(OPTIMISER))
        return None if other is None else plan.training_config(condition, "jbi", other)
    if ablation == "data":
        if condition == "bilingual_sentences":
            return plan.training_config(condition, "jbi", sources=["europarl"])
        return plan.training_config(condition, "jbi", path=plan.europarl_paths[condition])
    if ablation == "tuning":
        return plan.training_config(condition, "jbi", plan.configured.jbi) if condition in plan.sweeps else None
    if ablation == "budget":  # the same cells as ours where the proxy's choice survived the re-scoring
        rescored = "choice" in plan.rescored.get(condition, {})
        return plan.training_config(condition, "jbi", plan.sweeps[condition]["best_params"]) if rescored else None
    if ablation == "reading":
        return plan.training_config(condition, "jbi", reading=CONTESTED) if condition in plan.config.contested \
            else None
    return None


def cell_groups(plan: ElgoharyData) -> list[Group]:
    """The data step's own cells first (each tuning's points re-scored at the cells' scale: trained when it
    ran), then Table 3's J_bi columns, the main comparison (BiSent and BiPh J_bi) first, then the main
    comparison's ablations, so a long run decides the paper's J_bi findings early; then Table 3's J_pa
    columns, Table 5 and Table 6."""
    conditions, objectives = plan.config.conditions, plan.config.objectives
    table3 = lambda c, o: Group(f"{c}-{o}", plan.training_config(c, o),  # noqa: E731
                                f"{CONDITION_LABELS[c]} {OBJECTIVE_LABELS[o]}")
    groups = [group for condition, reading in plan.tunings() for group in rescore_groups(plan, condition, reading)]
    if "jbi" in objectives:
        groups += [table3(c, "jbi") for c in sorted(conditions, key=lambda c: c not in MAIN)]
        for ablation in plan.config.ablations:
            for condition in (c for c in MAIN if c in conditions):
                config = ablation_config(plan, condition, ablation) if ablation in ABLATION_SUFFIX else None
                if config is not None:
                    groups.append(Group(ablation_group(condition, ablation), config,
                                        f"{CONDITION_LABELS[condition]} J_bi, {ABLATION_LABELS[ablation]}"))
    groups += [table3(c, o) for c in conditions for o in objectives if o != "jbi"]
    if "memorisation" in plan.config.analyses and "jbi" in objectives:
        groups += [Group(f"{c}-jbi-nosickbigram", plan.training_config(c, "jbi", drop_bigrams_of=["sick"]),
                         f"{CONDITION_LABELS[c]} J_bi, no SICK bigram") for c in conditions]
    groups += [Group(size_group(plan, n), plan.training_config("bilingual_phrases", "jbi", max_pairs=n),
                     f"BiPh J_bi {n:,} pairs") for n in plan.sizes if size_group(plan, n) != "bilingual_phrases-jbi"]
    return groups


def every_seed_groups() -> set[str]:
    """The tuning's ablations (the other optimiser, the earlier single setting, the proxy sweep's choice): their
    effects are the largest the departures show, and what a reader weighs the tuning by, so they train every
    seed even where one seed decides them."""
    return {ablation_group(c, a) for c in MAIN for a in ("optimiser", "tuning", "budget")}


def deferred_groups(plan: ElgoharyData) -> set[str]:
    """Table 6's sizes above the main comparison's: hours each, one seed, no finding reads them."""
    main = plan.main_pairs("bilingual_phrases") if "bilingual_phrases" in plan.available else None
    return {size_group(plan, n) for n in plan.sizes if main is not None and n > main}


def size_group(plan: ElgoharyData, pairs: int) -> str:
    """The group of Table 6's column of ``pairs``: the main BiPh J_bi group at its own size, else one of its own."""
    main = min(plan.config.pairs_of("bilingual_phrases") or pairs, plan.available.get("bilingual_phrases", pairs))
    return "bilingual_phrases-jbi" if pairs == main else f"bilingual_phrases-jbi-{pairs}"
