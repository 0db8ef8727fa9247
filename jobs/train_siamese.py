"""Supervised Siamese LSTM (Bao et al. 2018) on Ray Train: ``python jobs/train_siamese.py --config
jobs/configs/siamese/sick_en_attsialstm.yaml`` (several ``--config`` run one after another in one Ray session)."""

import sys

from parabit.supervised.cli import train_siamese_main

if __name__ == "__main__":
    sys.exit(train_siamese_main())
