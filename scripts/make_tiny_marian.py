"""Build a tiny Hugging Face Marian model directory (opus-mt layout) offline from shipped Tatoeba pairs, for smoke runs
and benchmarks of the ``hf-marian`` engine without a real model:
``python scripts/make_tiny_marian.py OUT_DIR [--lang es] [--pairs 400] [--train-steps 0] [--layers 1]``.

The model translates ``lang``→English and is tiny and (by default) untrained: it exercises the engine's real code
path, not translation quality. See parabit.translate.tiny_marian.
"""

import argparse
import sys
from pathlib import Path

from parabit.data.bitext import TATOEBA_FILES, read_tatoeba
from parabit.translate.tiny_marian import build_tiny_marian


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--lang", default="es", choices=sorted(TATOEBA_FILES))
    parser.add_argument("--pairs", type=int, default=400, help="Tatoeba pairs (every 200th line) for the vocabulary")
    parser.add_argument("--vocab-size", type=int, default=400)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--train-steps", type=int, default=0)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    pairs = [(p.foreign, p.en) for p in read_tatoeba(lang=args.lang)[::200][:args.pairs]]
    out = build_tiny_marian(pairs, args.output, src=args.lang, tgt="en", vocab_size=args.vocab_size,
                            d_model=args.d_model, layers=args.layers, train_steps=args.train_steps, seed=args.seed)
    print(f"{args.lang}-en Marian model from {len(pairs)} Tatoeba pairs -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
