"""Supervised sentence-pair training: Siamese (attentive) LSTMs on SICK, SICK-es and MSRP (Bao et al. 2018)."""
