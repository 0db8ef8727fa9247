"""Wieting, Mallinson & Gimpel (2017) as stated (``shared/SEED_TABLES.md``): the settings it trains with, the data
and tasks it uses, and the one number among the findings it states as directions (its tables are not reproduced
here)."""

from __future__ import annotations

# The controlled comparisons: training pairs per variant, and each encoder's epochs.
PAIRS = 24_000
EPOCHS = {"avg": 20, "gran": 3}
# The paper's public code's defaults: J_pa with MAX negatives from the mini-batch, λ = 0, Adam, and the size of its
# PARAGRAM-SL999 word vectors.
MARGIN = 0.4
SAMPLING = "max"
REGULARIZATION = 0.0
BATCH_SIZE = 100
OPTIMISER, LEARNING_RATE = "adam", 0.001
WORD_VECTORS, DIM = "PARAGRAM-SL999", 300
# Reference / back-translation pairs per source (100k to mine training pairs from, 50k for the classifier and LMs),
# and the evaluation tasks its average Pearson is taken over (STS 2012–2015, SemEval 2015 Twitter, SICK).
PAIRS_PER_SOURCE = 150_000
TASKS = 22
# The best length range, in tokens (quality falling with length).
BEST_LENGTH = (0, 10)
