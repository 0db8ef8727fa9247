"""What Elgohary & Carpuat's reproduction reads of its cells: the headline STS 2012–2015 average (and the paper's
number for it), the dev score its tuning chooses by, SICK, the undertrained-token ratio and the prefix of a cell's
untrained start."""

from __future__ import annotations

from parabit.papers.elgohary.paper import paper_value
from parabit.papers.metrics import Metric

YEARS = ("sts2012", "sts2013", "sts2014", "sts2015")
STS_AVG = Metric("STS 2012–2015 mean of yearly avg r", tuple(f"{y}/mean/pearson" for y in YEARS))
UNTRAINED = "untrained"  # the prefix of a cell's metrics as its own model scored before the first step
DEV = Metric.named("dev_score", "dev r (STS 2012 SMT-europarl train)")
SICK = Metric.named("sick/test/pearson", "SICK test r")
UNDERTRAINED = Metric("undertrained-token ratio, mean of STS 2012–2015 and SICK", ("-",))


def paper_sts_avg(condition: str, objective: str) -> float:
    values = [paper_value(year, "mean", condition, objective) for year in YEARS]
    return sum(values) / len(values)
