"""The document's summary of what the reproduction found: written from each paper's findings, it names every claim
that holds and every one that does not with its cause (without the cause's detail), and counts the rest."""

from __future__ import annotations

from parabit.papers.departures import GENUINE, NO_DIFFERENCE
from parabit.papers.findings import FAILS, HOLDS, NOT_RUN, UNDECIDED, UNTESTABLE
from parabit.reproduction.document import PaperPart, found_summary

TITLES = {"alpha": "Alpha et al. 2018, a method (Table 1)", "beta": "Beta & Gamma 2019, another (Table 2)"}


def _row(claim: str, verdict: str, cause: str = "", why: str = "") -> dict:
    return {"claim": claim, "verdict": verdict, "cause": cause, "why": why}


def test_the_summary_names_what_holds_what_does_not_and_why_and_counts_the_rest():
    rows = [_row("A beats B", HOLDS), _row("C beats D", FAILS, f"{NO_DIFFERENCE} (not measured: data)"),
            _row("E beats F", FAILS, "held-out split: holds with the authors' split (+26.5 (n=3))"),
            _row("G beats H", FAILS, f"{NO_DIFFERENCE} (not measured: data)"), _row("I beats J", UNDECIDED),
            _row("K beats L", NOT_RUN), _row("M beats N", UNTESTABLE)]
    summary = found_summary({"alpha": PaperPart("alpha", TITLES["alpha"], "", rows), "beta": None}, TITLES)
    alpha, beta = summary.split("\n\n")
    assert alpha.startswith("**Alpha et al. 2018**: 1 of its 7 claims hold here: *A beats B*. 3 do not, by cause: ")
    assert (f"{NO_DIFFERENCE}: *C beats D*, *G beats H*; held-out split: holds with the authors' split: *E beats F*."
            in alpha)
    assert "not measured" not in alpha and "+26.5" not in alpha  # the detail stays in the findings table
    assert alpha.endswith("Of the rest, 1 undecided (a difference under the margin, fewer than 3 seeds yet), "
                          "1 not run yet, 1 not testable here.")
    assert beta == "**Beta & Gamma 2019**: not run yet."


def test_a_paper_whose_claims_all_hold_says_only_that():
    rows = [_row("A beats B", HOLDS), _row("C beats D", HOLDS)]
    summary = found_summary({"alpha": PaperPart("alpha", TITLES["alpha"], "", rows)}, TITLES)
    assert summary == "**Alpha et al. 2018**: 2 of its 2 claims hold here: *A beats B*; *C beats D*."
    assert GENUINE not in summary
