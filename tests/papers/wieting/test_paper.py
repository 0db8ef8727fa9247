"""Wieting et al. as stated (:mod:`parabit.papers.wieting.paper`) against what the reproduction runs: the training
config it names is the paper's public code's defaults but for the word vectors, which a departure names, and the
reproduction config's comparison size is the paper's."""

from __future__ import annotations

import yaml

from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.papers.wieting import paper
from parabit.papers.wieting.findings import paper_departures


def test_the_training_config_is_the_papers_but_for_its_word_vectors():
    train = load_run_config(project_path("jobs/configs/wieting/train_avg.yaml"))
    assert (train.objective.margin, train.objective.sampling, train.objective.regularization) == (
        paper.MARGIN, paper.SAMPLING, paper.REGULARIZATION)
    assert (train.optim.name, train.optim.lr, train.optim.batch_size, train.optim.epochs) == (
        paper.OPTIMISER, paper.LEARNING_RATE, paper.BATCH_SIZE, paper.EPOCHS["avg"])
    assert train.model.dim != paper.DIM
    vectors = next(d for d in paper_departures() if d.aspect == "word vectors")
    assert vectors.paper == f"{paper.WORD_VECTORS} {paper.DIM}-d"


def test_the_reproduction_compares_the_papers_number_of_pairs():
    config = yaml.safe_load(project_path("jobs/configs/reproduction.yaml").read_text())
    assert config["wieting"]["sample_size"] == paper.PAIRS
