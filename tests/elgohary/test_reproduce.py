"""Elgohary & Carpuat's reproduction: the paper's numbers keyed right, each cell's training config, undertrained-word
ratios."""

from __future__ import annotations

from collections import Counter

import pytest

from parabit.config import ConfigError, load_config
from parabit.elgohary.analyses import undertrained_ratio
from parabit.elgohary.paper import ROWS, TABLE3, paper_value
from parabit.elgohary.config import ReproductionConfig, phrase_data_paths, train_config
from parabit.paths import PROJECT_ROOT
from parabit.phrases import PhrasesConfig
from parabit.text.tokenize import Tokenizer


def test_paper_numbers_are_keyed_to_parabit_scores():
    assert len(TABLE3) == len(ROWS) == 24
    assert paper_value("sts2012", "MSRpar", "bilingual_phrases", "jbi") == 0.54
    assert paper_value("sick", "test", "ppdb", "jpa") == paper_value("sick", "test", "pivot_paraphrases", "jpa") == 0.62
    assert paper_value("sts2015", "mean", "bilingual_sentences", "jbi") == 0.59


def test_training_configs_of_the_cells():
    config = load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml")
    paths = phrase_data_paths(load_config(PhrasesConfig, PROJECT_ROOT / config.phrases_config))
    jbi = train_config(config, "bilingual_phrases", "jbi", paths)
    assert (jbi.objective.negatives, jbi.objective.margin, jbi.objective.regularization, jbi.optim.batch_size) == \
        (15, 1.0, 1e-3, 25)
    assert jbi.data.path.endswith("phrase_table/data") and jbi.optim.epochs == 10 and jbi.data.max_pairs is None
    jpa = train_config(config, "pivot_paraphrases", "jpa", paths, "-x", drop_bigrams_of=["sick"])
    assert (jpa.name, jpa.objective.distance, jpa.data.drop_bigrams_of) == (
        "elgohary-pivot_paraphrases-jpa-x", "cosine", ("sick",))
    with pytest.raises(ConfigError, match=r"conditions\[0\]: Input should be"):
        load_config(ReproductionConfig, PROJECT_ROOT / "jobs/configs/elgohary.yaml", {"conditions": ["pairs_parquet"]})


def test_undertrained_ratio_counts_token_occurrences():
    counts = Counter({"a": 500, "man": 99, "plays": 100})
    # tokens: a man plays guitar . → man (99), guitar (0), "." (0) are under 100
    assert undertrained_ratio(counts, ["A man plays guitar."], Tokenizer()) == pytest.approx(3 / 5)
