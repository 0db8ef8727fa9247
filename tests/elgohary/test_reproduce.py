"""The reproduction's tables: the paper's numbers keyed right, the layout of Table 3, undertrained-word ratios."""

from __future__ import annotations

from collections import Counter

import pytest

from parabit.config import ConfigError, load_config
from parabit.elgohary.analyses import undertrained_ratio
from parabit.elgohary.paper import ROWS, TABLE3, paper_value
from parabit.elgohary.config import ReproductionConfig, phrase_data_paths, train_config
from parabit.elgohary.reproduce import markdown, table3
from parabit.evaluation.report import EvaluationReport, Score
from parabit.paths import PROJECT_ROOT
from parabit.phrases import PhrasesConfig
from parabit.text.tokenize import Tokenizer


def test_paper_numbers_are_keyed_to_parabit_scores():
    assert len(TABLE3) == len(ROWS) == 24
    assert paper_value("sts2012", "MSRpar", "bilingual_phrases", "jbi") == 0.54
    assert paper_value("sick", "test", "ppdb", "jpa") == paper_value("sick", "test", "pivot_paraphrases", "jpa") == 0.62
    assert paper_value("sts2015", "mean", "bilingual_sentences", "jbi") == 0.59


def test_table3_layout_puts_the_paper_beside_parabit():
    report = EvaluationReport([Score("sts2012", "MSRpar", "pearson", 0.412, 750),
                               Score("sick", "test", "pearson", 0.5, 4927)])
    frame = table3({("bilingual_phrases", "jbi"): report, ("ppdb", "jpa"): report})
    assert list(frame.columns) == ["set", "BiPh J_bi", "MonoPh-PPDB J_pa"]
    assert frame.iloc[0].tolist() == ["MSRpar", "0.41 (0.54)", "0.41 (0.42)"]
    assert frame.iloc[-1].tolist() == ["SICK", "0.50 (0.66)", "0.50 (0.62)"]
    assert frame.iloc[1]["BiPh J_bi"] == "– (0.71)"
    assert markdown(frame).splitlines()[1] == "|---|---|---|"


def test_training_configs_of_the_cells():
    config = load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml")
    paths = phrase_data_paths(load_config(PhrasesConfig, PROJECT_ROOT / config.phrases_config))
    jbi = train_config(config, "bilingual_phrases", "jbi", paths)
    assert (jbi.objective.negatives, jbi.objective.margin, jbi.objective.regularization, jbi.optim.batch_size) == \
        (15, 1.0, 1e-3, 25)
    assert jbi.data.path.endswith("phrase_table/data") and jbi.optim.epochs == 10 and jbi.data.max_pairs == 20000
    jpa = train_config(config, "pivot_paraphrases", "jpa", paths, "-x", drop_bigrams_of=["sick"])
    assert (jpa.name, jpa.objective.distance, jpa.data.drop_bigrams_of) == (
        "elgohary-pivot_paraphrases-jpa-x", "cosine", ("sick",))
    with pytest.raises(ConfigError, match=r"conditions\[0\]: Input should be"):
        load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml", {"conditions": ["pairs_parquet"]})


def test_undertrained_ratio_counts_token_occurrences():
    counts = Counter({"a": 500, "man": 99, "plays": 100})
    # tokens: a man plays guitar . → man (99), guitar (0), "." (0) are under 100
    assert undertrained_ratio(counts, ["A man plays guitar."], Tokenizer()) == pytest.approx(3 / 5)
