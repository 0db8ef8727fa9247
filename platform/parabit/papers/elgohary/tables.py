"""Elgohary & Carpuat's tables: Table 3 (every condition and objective, each column beside its untrained start),
Table 5 (SICK without the pairs sharing a SICK bigram), Table 6 (bilingual phrases by number of pairs) from the
cells, and Table 4 (undertrained test tokens), computed from the training pairs alone."""

from __future__ import annotations

from parabit.markdown import table
from parabit.papers.elgohary.analyses import TEST_SETS
from parabit.papers.elgohary.config import MONO
from parabit.papers.elgohary.data import ElgoharyData
from parabit.papers.elgohary.groups import size_group
from parabit.papers.elgohary.metrics import SICK, UNTRAINED
from parabit.papers.elgohary.paper import (CONDITION_LABELS, OBJECTIVE_LABELS, PAIRS, PAPER_TABLE4_COLUMN, ROWS,
                                           TABLE4, TABLE5, TABLE6, TABLE6_SIZES, paper_value)
from parabit.papers.metrics import Metric
from parabit.papers.tables import BELOW_START, Entry, PaperTable, Row


def paper_tables(plan: ElgoharyData) -> list[PaperTable]:
    """Tables 3, 5 and 6 with the paper's numbers (5 and 6 where the plan's analyses hold them)."""
    cells = [(c, o) for c in plan.config.conditions for o in plan.config.objectives]
    table3 = PaperTable(
        "Table 3 (Pearson r; paper in brackets; MonoPh stands for both PPDB and pivot paraphrases)",
        tuple(f"{CONDITION_LABELS[c]} {OBJECTIVE_LABELS[o]}" for c, o in cells),
        tuple(Row(f"**{label}**" if subset == "mean" else label, tuple(
            Entry(f"{c}-{o}", Metric.named(f"{benchmark}/{subset}/pearson", digits=2),
                  paper_value(benchmark, subset, c, o), start=UNTRAINED) for c, o in cells))
            for benchmark, subset, label in ROWS)
        + tuple(Row(f"*{label}, untrained start*", tuple(
            Entry(f"{c}-{o}", Metric.named(f"untrained/{benchmark}/{subset}/pearson", digits=2)) for c, o in cells))
            for benchmark, subset, label in ROWS if subset in ("mean", "test")),
        corner="set",
        note="The untrained start of a column is its cells' own model before the first step (the same seed, "
             "vocabulary and unknown-word rule), evaluated by the same runs: a trained number marked "
             f"{BELOW_START} "
             "is below it (training made the model worse; the section *Cells below their untrained start* "
             "says what the ablations measured of why).")
    tables = [table3]
    if "memorisation" in plan.config.analyses and "jbi" in plan.config.objectives:
        rows = []
        for c in plan.config.conditions:
            paper = TABLE5["MonoPh" if c in MONO else CONDITION_LABELS[c]]
            rows.append(Row(CONDITION_LABELS[c], (Entry(f"{c}-jbi", SICK, paper[0], start=UNTRAINED),
                                                  Entry(f"{c}-jbi-nosickbigram", SICK, paper[1],
                                                        start=UNTRAINED))))
        counts = "; ".join(f"{CONDITION_LABELS[c]} {plan.available[c]:,} → {plan.filtered_pairs(c):,}"
                           for c in plan.config.conditions if c in plan.available)
        tables.append(PaperTable(
            "Table 5 (SICK test r, J_bi: all pairs vs pairs sharing no word bigram with SICK test)",
            ("all pairs", "no SICK bigram"), tuple(rows), corner="condition",
            note=f"Training pairs (all → no SICK bigram): {counts}. The paper: "
                 + "; ".join(f"{k} {v[2]}" for k, v in TABLE5.items()) + "."))
    if plan.sizes:
        columns = [f"BiPh {n:,} ({label})" for n, label in plan.sizes.items()]
        rows = []
        for name in TEST_SETS:
            metric = Metric.named(f"{name}/{'test' if name == 'sick' else 'mean'}/pearson", digits=2)
            entries = [Entry(size_group(plan, n), metric, TABLE6[name][TABLE6_SIZES.index(label)]
                             if label in TABLE6_SIZES else None, start=UNTRAINED)
                       for n, label in plan.sizes.items()]
            entries.append(Entry("bilingual_sentences-jbi" if "bilingual_sentences" in plan.config.conditions
                                 else None, metric, paper_value(name, "test" if name == "sick" else "mean",
                                                                "bilingual_sentences", "jbi"), start=UNTRAINED))
            rows.append(Row(name, tuple(entries)))
        tables.append(PaperTable(
            "Table 6 (bilingual phrases, J_bi, by number of pairs; then bilingual sentences; year avg / SICK r)",
            (*columns, f"BiSent {plan.available.get('bilingual_sentences', 0):,}"), tuple(rows), corner="set",
            note="Seeded samples of the unpruned phrase table "
                 f"({plan.available.get('bilingual_phrases', 0):,} pairs) at the paper's sizes "
                 + "/".join(TABLE6_SIZES) + " (a size beyond the table is the whole table), and as many phrase "
                 "pairs as there are sentence pairs (the paper's equal-size comparison, at "
                 f"{PAIRS['BiSent']} there). The "
                 f"sizes above the main comparison's train with the first seed only. {BELOW_START}: below the "
                 "cells' own untrained start."))
    return tables


def table4(plan: ElgoharyData) -> str:
    """Table 4 (markdown): each condition's share of test tokens seen fewer than 100 times in its training pairs,
    the paper's beside it."""
    ratios = plan.undertrained()
    conditions = list(ratios)
    rows = [(name, *(f"{ratios[c][name]:.2f} ({TABLE4[name][PAPER_TABLE4_COLUMN[c]]:.2f})" for c in conditions))
            for name in TEST_SETS]
    return (table(("test set", *(CONDITION_LABELS[c] for c in conditions)), rows) + "\n\nComputed from each "
            "condition's training pairs (no training run; the paper's MonoPh column stands beside both PPDB and "
            "pivot paraphrases).")
