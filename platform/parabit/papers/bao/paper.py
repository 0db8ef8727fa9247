"""Bao et al. (2018) as published (``shared/SEED_TABLES.md``), and parabit's earlier single-seed measurements."""

from __future__ import annotations

MODELS = ("sialstm", "siabilstm", "attsialstm", "attsiabilstm")
LABELS = {"sialstm": "SiaLSTM (Baseline1)", "siabilstm": "SiaBiLSTM (Baseline2)", "attsialstm": "AttSiaLSTM",
          "attsiabilstm": "AttSiaBiLSTM"}

# The paper's data and word vectors: SICK train / trial / test pairs, MSRP train / test pairs.
SICK_SPLITS = (4500, 500, 4927)
MSRP_SPLITS = (4076, 1725)
WORD_VECTORS = "300-d fastText"

# Table I: SICK EN Pearson r, EN MSE, ZH r, TIB r, and the MSRP column (a fraction), which the paper's text calls
# "p": precision (SEED_TABLES.md: "precision/accuracy (MSRP)"), not accuracy.
TABLE1 = {
    "sialstm": {"en_r": .7121, "en_mse": .032, "zh_r": .328, "tib_r": .3451, "msrp_p": .6041},
    "siabilstm": {"en_r": .6326, "en_mse": .0388, "zh_r": .3062, "tib_r": .2854, "msrp_p": .6168},
    "attsialstm": {"en_r": .7832, "en_mse": .026, "zh_r": .4646, "tib_r": .3627, "msrp_p": .6568},
    "attsiabilstm": {"en_r": .7518, "en_mse": .031, "zh_r": .4173, "tib_r": .3437, "msrp_p": .6319},
}
# Table II: AttSiaLSTM test r by maximum sentence length, on Chinese and Tibetan (no English rows in the paper).
TABLE2_LENGTHS = (15, 20, 25)
TABLE2 = {"zh": (.4334, .4646, .4547), "tib": (.3258, .3566, .3627)}

# parabit's earlier runs (one seed, 30 epochs, best-dev epoch; SICK EN test r), kept to compare the reproduction with.
EARLIER_TABLE1 = {"sialstm": .7618, "siabilstm": .7638, "attsialstm": .7911, "attsiabilstm": .7867}
EARLIER_TABLE2 = {("attsialstm", 15): .7849, ("attsialstm", 20): .7910, ("sialstm", 15): .7524,
                  ("sialstm", 20): .7582}
