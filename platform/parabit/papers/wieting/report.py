"""Wieting et al.'s part of the document: the metrics every table shows (the mean of the 20 STS 2012–2015 + SICK
tasks that ship, each year, SICK, the dev set), the four tables (filters, length ranges, training data, MT engines),
the setup and scale prose, and the sections beyond the tables (the threshold sweeps, MT output vs human text)."""

from __future__ import annotations

from pathlib import Path

from parabit.markdown import table
from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.papers.elgohary.paper import ROWS
from parabit.papers.metrics import Metric
from parabit.papers.plan import Section
from parabit.papers.tables import Entry, PaperTable, Row
from parabit.papers.wieting import analyses
from parabit.papers.wieting.data import PreparedData
from parabit.papers.wieting.groups import group_label, range_key
from parabit.papers.wieting import paper
from parabit.papers.wieting.settings import WietingSettings
from parabit.papers.wieting.thresholds import Tuned

TASKS = tuple(f"{b}/{s}/pearson" for b, s, _ in ROWS if s != "mean")
AVERAGE = Metric("mean r of 20 STS 2012–2015 + SICK tasks", TASKS)
YEAR_METRICS = {f"STS {y}": Metric.named(f"sts{y}/mean/pearson", digits=3) for y in (2012, 2013, 2014, 2015)}
SICK = Metric.named("sick/test/pearson", "SICK r")
DEV = Metric.named("dev_score", "STS 2016 (dev)")
COLUMNS = {"avg r (20 tasks)": AVERAGE, **YEAR_METRICS, "SICK": SICK, "STS 2016 dev": DEV}


def row(label: str, group: str | None) -> Row:
    return Row(label, tuple(Entry(group, metric) for metric in COLUMNS.values()))


def tables(settings: WietingSettings, prepared: PreparedData) -> list[PaperTable]:
    size, length, engines = (prepared.sizes.get(k, 0) for k in ("main", "length", "engines"))
    ranges = settings.length_ranges
    filters = [row("unfiltered", "bt-unfiltered")]
    for label, tuned in prepared.tuned.items():
        thresholds = ", ".join(f"{k} {v:.3g}" for k, v in tuned.chosen.thresholds.items())
        filters.append(row(f"{label} ({thresholds})", f"bt-{label}"))
    return [PaperTable(f"Each filter alone vs unfiltered, {size:,} back-translated pairs each (AVG; "
                       "thresholds tuned on STS 2016)", tuple(COLUMNS), tuple(filters), corner="pairs"),
            PaperTable(f"Length ranges (both sides), {length:,} pairs each (AVG)", tuple(COLUMNS),
                       tuple(row(group_label(k, ranges), k) for k in [range_key(lo, hi) for lo, hi in ranges]
                             + ["len-any"]),
                       corner="tokens",
                       note="Pairs available per range: " + ", ".join(
                           f"{group_label(k, ranges)} {n:,}" for k, n in prepared.available_by_range.items())
                       + ". The shipped Spanish bitext is mostly short Tatoeba sentences, so the equal size is "
                         "set by the longest range (Europarl and newstest sentences)."),
            PaperTable(f"Training data at equal size ({size:,} pairs), AVG and GRAN", tuple(COLUMNS),
                       (row("back-translated (Apertium es→en), AVG", "bt-unfiltered"),
                        row("bilingual en–es pairs, AVG", "bilingual"),
                        row("PPDB lexical, AVG", "ppdb"),
                        row("back-translated, GRAN", "gran-bt-unfiltered"),
                        row("bilingual en–es pairs, GRAN", "gran-bilingual"),
                        row("PPDB lexical, GRAN", "gran-ppdb")), corner="data"),
            PaperTable(f"MT engines on the same {settings.engine_sample:,} Tatoeba references, "
                       f"{engines:,} pairs each (AVG)", tuple(COLUMNS),
                       (row("Apertium es→en (rule-based back-translation)", "engine-apertium"),
                        row("marian-pt en→pt→en (neural round trip)", "engine-marian")), corner="engine")]


def scale(settings: WietingSettings, quick: bool, sizes: dict[str, int]) -> str:
    if quick:
        return f"quick: {settings.quick_pairs} Tatoeba pairs, 1 epoch"
    epochs = load_run_config(project_path(settings.train)).optim.epochs
    return (f"{sizes.get('main', settings.sample_size):,} pairs per comparison (lengths "
            f"{sizes.get('length', 0):,}, engines {sizes.get('engines', 0):,}), AVG {epochs} epochs, GRAN "
            f"{settings.gran_epochs}")


def setup(settings: WietingSettings, quick: bool, sizes: dict[str, int]) -> str:
    train = load_run_config(project_path(settings.train))
    return (f"Training (`{settings.train}`): AVG {train.model.dim}-d initialised from GloVe 6B 50d (the paper: "
            f"{paper.WORD_VECTORS} {paper.DIM}-d, not shipped), J_pa margin {train.objective.margin}, "
            f"{train.objective.sampling.upper()} in-batch negatives, λ = {train.objective.regularization}, batch "
            f"{train.optim.batch_size}, {train.optim.epochs} epochs (GRAN {settings.gran_epochs}), the best "
            f"epoch on STS 2016 (the paper's dev set); tested on the 20 STS 2012–2015 + SICK tasks that ship (the "
            f"paper's {paper.TASKS} add STS 2013 SMT and SemEval 2015 Twitter, which do not). Data: Apertium es→en "
            f"back-translations of all shipped Spanish bitext (`{settings.backtranslate}`: Tatoeba, the "
            f"Europarl sample, newstest 2012/2013; the paper: NMT of CzEng, Europarl and others, "
            f"{paper.PAIRS_PER_SOURCE // 1000}k pairs per "
            "source). Each variant is its own selection under `outputs/reproduction/<name>/wieting/selections/`; "
            f"sizes: filters {sizes.get('main', 0):,}, lengths {sizes.get('length', 0):,}, engines "
            f"{sizes.get('engines', 0):,} pairs. Threshold windows are quantiles of each score, swept with "
            f"Ray Tune for {settings.tune_epochs} epochs per trial"
            + (" (quick mode: the middle window, untuned)." if quick else "."))


def sections(tuned_filters: dict[str, Tuned], comparisons: list[analyses.Comparison],
             figures: Path) -> list[Section]:
    """The threshold sweeps (``tuned_filters``: every window's dev score, the chosen one marked) and how MT output
    differs from human text (``comparisons``: the §6 analyses, their figure written under ``figures``)."""
    found = []
    if tuned_filters:
        rows = []
        for label, tuned in tuned_filters.items():
            for i, trial in enumerate(tuned.trials):
                thresholds = ", ".join(f"{k} {v:.3g}" for k, v in trial.thresholds.items())
                score = "—" if trial.dev_score is None else f"{trial.dev_score:.4f}"
                rows.append((label, tuple(trial.window), thresholds, f"{trial.pairs:,}", score,
                             "✓" if i == tuned.best else ""))
        found.append(Section("Threshold tuning (one Ray Tune sweep per filter, dev = STS 2016)",
                             table(("filter", "window (quantiles)", "thresholds", "pairs", "STS 2016 dev r", "chosen"),
                                   rows)))
    if comparisons:
        figure = analyses.comparison_figure(comparisons, figures / "wieting-mt-vs-human.png")
        found.append(Section("How MT output differs from human text (references vs translations)",
                             analyses.comparison_table(comparisons), (figure,)))
    return found
