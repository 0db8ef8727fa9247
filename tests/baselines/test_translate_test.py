"""Translate-test with all-MiniLM-L6-v2 as a baseline of ``parabit evaluate``: Spanish read through real Apertium, scored
as any encoder is."""

from __future__ import annotations

import pytest

from parabit.cli import run_command


# Slow (1–4 min on 2 cores): the packaged MiniLM, py3langid and Apertium over the held-out Tatoeba test pairs and STS
# 2016.
@pytest.mark.slow
def test_parabit_evaluate_scores_translate_test_minilm_on_retrieval(capsys):
    code = run_command(argv=["evaluate", "--encoder", "translate-test-minilm", "--no-mlflow", "--set", "sts_years=[2016]",
                        "--set", "sick=false", "--set", "msrp=false", "--set", "bitext_retrieval=[tatoeba-es]"])
    assert code == 0
    table = capsys.readouterr().out
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in table.splitlines() if line.startswith(("tatoeba",
                                                                                                       "sts2016"))}
    # MiniLM alone finds 13 % of the Spanish sentences' translations (docs/quality.md); through Apertium, most.
    assert float(rows[("tatoeba-es", "es-en")][0]) > 0.8
    assert float(rows[("sts2016", "avg")][1]) > 0.75  # English as MiniLM reads it
