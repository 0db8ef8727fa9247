"""Translate SICK with the pipeline's translator, once: ``python jobs/translate_sick.py --config
jobs/configs/siamese/sick_es.yaml``."""

import sys

from parabit.supervised.cli import translate_sick_main

if __name__ == "__main__":
    sys.exit(translate_sick_main())
