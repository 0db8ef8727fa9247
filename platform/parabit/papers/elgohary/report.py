"""Elgohary & Carpuat's part of the document beyond the tables and findings: the scale and setup prose, and the
sections: cells below their untrained start, the tunings' re-scored points and sweeps, compute, cells that read a
re-derived phrase table, and Table 4."""

from __future__ import annotations

import numpy as np

from parabit.markdown import table
from parabit.papers.cells import Results
from parabit.papers.elgohary.compute import compute_table
from parabit.papers.elgohary.config import MAIN
from parabit.papers.elgohary.data import ElgoharyData
from parabit.papers.elgohary.groups import ablation_group
from parabit.papers.elgohary.metrics import DEV, STS_AVG, UNTRAINED
from parabit.papers.elgohary.paper import CONDITION_LABELS, PAIRS
from parabit.papers.elgohary.tables import table4
from parabit.papers.elgohary.tuning import jbi_text, tuning_label
from parabit.papers.plan import Section
from parabit.papers.tables import Entry


def scale_text(plan: ElgoharyData) -> str:
    """The overview table's few words: each condition's pairs, and the epochs."""
    sizes = ", ".join(f"{CONDITION_LABELS[c]} {plan.main_pairs(c):,}" for c in plan.available)
    return f"{sizes or 'sizes when prepared'}; {plan.config.epochs} epochs"


def setup_text(plan: ElgoharyData) -> str:
    """What was run, on which data, with which settings, and where that differs from the paper."""
    sizes = ", ".join(f"{CONDITION_LABELS[c]} {plan.main_pairs(c):,} of {n:,}" for c, n in plan.available.items())
    common = ", ".join(f"{k} {v}" for k, v in plan.config.common.items() if k != "tracking.register_as")
    return (f"AVG (300-d, random init) trained {plan.config.epochs} epochs"
            + (f" on a seeded sample of each condition's pairs ({sizes})" if sizes else "")
            + ", all made from the same shipped en-es bitext (Tatoeba + the 20k-line Europarl sample; the paper: "
            f"{PAIRS['BiSent']} Europarl sentence pairs, {PAIRS['BiPh']} phrase pairs, {PAIRS['MonoPh']} PPDB XL "
            "pairs). Bilingual phrases: eflomal "
            f"alignments and Moses-style extraction, no pair pruned (`parabit phrases`, `{plan.config.phrases_config}`"
            "); monolingual phrases: PPDB 1.0 XXXL lexical synonyms (the shipped subset) and pivot paraphrases "
            f"from the same phrase table, two stand-ins for the paper's PPDB XL. Every cell: {common}. "
            + jbi_text(plan) + f" J_pa {plan.config.jpa}. The best epoch is not selected: every run reports "
            "its last epoch, as the paper.")


def report_sections(plan: ElgoharyData, results: Results) -> list[Section]:
    """The sections, in the document's order (each only where it has something to show)."""
    sections = []
    below = below_start_table(plan, results)
    if below:
        sections.append(Section("Cells below their untrained start", below))
    if plan.rescored:
        sections.append(Section("J_bi tuning: the best proxy points re-scored at the cells' scale (dev r)",
                                rescored_table(plan, results)))
    for key, sweep in plan.sweeps.items():
        sections.append(Section(f"The J_bi sweep on the {tuning_label(key)} (random search with ASHA, dev = STS "
                                "2012 SMT-europarl train)", sweep_table(sweep)))
    sections.append(Section("Compute: the plan's hours, estimated and spent", compute_table(plan, results)))
    rederived = rederived_table(plan, results)
    if rederived:
        sections.append(Section("Cells trained on a re-derived phrase table", rederived))
    if "undertrained" not in plan.config.analyses:
        return sections
    return sections + [Section("Table 4 (share of test tokens seen fewer than 100 times in training; paper in "
                               "brackets)", table4(plan))]


def sweep_table(sweep: dict) -> str:
    """A J_bi sweep's trials (as :func:`~parabit.papers.elgohary.tuning.run_tuning_sweep` records them): each
    one's parameters, epochs, dev score and status."""
    parameters = list(sweep["trials"][0]["params"]) if sweep["trials"] else []
    rows = []
    for trial in sweep["trials"]:
        score = "—" if trial["dev_score"] is None else f"{trial['dev_score']:.4f}"
        epochs = "—" if trial["epochs"] is None else f"{trial['epochs']:.0f}"
        rows.append((trial["trial"], *(trial["params"][p] for p in parameters), epochs, score, trial["status"]))
    return table(("trial", *parameters, "epochs", "dev r", "status"), rows)


def rederived_table(plan: ElgoharyData, results: Results) -> str:
    """Which cells read a phrase table of another size than the one the data step recorded for them (empty
    when none did). eflomal's Gibbs sampler takes no seed, so the data step run again elsewhere aligns, and
    counts, a little differently."""
    rows = []
    europarl = {ablation_group(c, "data") for c in MAIN}
    for condition in ("bilingual_phrases", "pivot_paraphrases"):
        for result in results.all:
            if not result.ok or not result.cell.group.startswith(condition):
                continue
            # The Europarl-only cells read the Europarl phrase table: compared with its own recorded size.
            recorded = (plan.europarl_available if result.cell.group in europarl else plan.available).get(condition)
            read = (result.record.data or {}).get("pairs_read")
            if recorded and read and read != recorded:
                rows.append((result.cell.name, CONDITION_LABELS[condition], f"{read:,}", f"{recorded:,}",
                             f"{(result.record.data or {}).get('pairs_kept', 0):,}"))
    if not rows:
        return ""
    return (table(("cell", "condition", "pairs in its table", "in the recorded table", "pairs it trained on"), rows)
            + "\n\neflomal's sampler takes no seed: the data step, run again on another machine for these cells, "
            "aligned the same sentences a little differently. The tables and findings keep the recorded sizes; these "
            "cells' records hold what they read.")


def rescored_table(plan: ElgoharyData, results: Results) -> str:
    """Each tuning's points: their dev score at the sweep's proxy scale and at the cells' own scale, and which
    one the cells took."""
    rows = []
    for key, rescored in plan.rescored.items():
        proxy_best = plan.sweeps[key]["best_params"]
        for candidate in rescored["candidates"]:
            scores = list(results.values(candidate["group"], DEV).values())
            full = f"{scores[0]:.4f}" if scores else "—"
            taken = "**taken**" if rescored.get("chosen") == candidate["group"] else ""
            proxy = " (the proxy's best)" if candidate["typed"] == proxy_best else ""
            parameters = ", ".join(f"{k.split('.')[-1]} {v}" for k, v in candidate["typed"].items())
            rows.append((tuning_label(key), f"{candidate['group']}{proxy}", parameters,
                         f"{candidate['proxy_dev']:.4f}", full, taken))
    return (table(("tuning", "point", "parameters", "dev r, proxy", "dev r, cells' scale", "taken"), rows)
            + "\n\nA tuning's best proxy points (at least one of each optimiser) trained at its cells' own scale "
            "(their pairs and epochs, the first seed) and scored on the paper's dev set; the best there is what the "
            "tuning's cells train with. The *tuning budget* departure trains the proxy's own choice beside it.")


def below_start_table(plan: ElgoharyData, results: Results) -> str:
    """The J_bi groups of Tables 3, 5 and 6 whose cells trained to below their untrained start (on the
    headline metric), each with what the departures' ablations measured of why (empty when none did)."""
    departures = [d for d in plan.departures() if d.variants]
    rows = []
    for group in plan.groups():
        entry = Entry(group.key, STS_AVG, start=UNTRAINED)
        if group.config.objective.name != "jbi" or "rescore" in group.key or not entry.below_start(results):
            continue
        lifted = []
        for departure in departures:
            variant = departure.variants.get(group.key)
            if variant is None:
                continue
            other = Entry(variant, STS_AVG, start=UNTRAINED)
            values = list(results.values(variant, STS_AVG).values())
            if values and not other.below_start(results):
                lifted.append(f"{departure.aspect}: {departure.other} trains above its start "
                              f"({STS_AVG.format(float(np.mean(values)))}, n={len(values)})")
        trained = np.mean(list(results.values(group.key, STS_AVG).values()))
        start = np.mean(list(results.values(group.key, STS_AVG.under(UNTRAINED)).values()))
        cause = "; ".join(lifted) or "no ablation measured here trains it above its start"
        rows.append((group.title, STS_AVG.format(float(trained)), STS_AVG.format(float(start)), cause))
    if not rows:
        return ""
    return (table(("group", "trained", "its untrained start", "measured cause"), rows)
            + f"\n\n{STS_AVG.label}. A finding both of whose sides are below their starts is not testable here.")
