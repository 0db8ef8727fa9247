"""Write a seeded random sample of a shipped Tatoeba bitext as parquet (``en``, ``foreign``), the ``parquet`` source
of the back-translation pipeline: ``python scripts/sample_bitext.py --lang es --size 8000 --seed 13 OUT.parquet``.

Used to give two engines the very same English references (jobs/configs/engine_comparison/).
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from parabit.data.bitext import TATOEBA_FILES, read_tatoeba
from parabit.paths import data_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--lang", default="es", choices=sorted(TATOEBA_FILES))
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    pairs = read_tatoeba(data_path("bitext", *TATOEBA_FILES[args.lang]), lang=args.lang)
    unique = list(dict.fromkeys((p.en, p.foreign) for p in pairs))  # exact duplicates would be dropped at ingest
    chosen = np.sort(np.random.default_rng(args.seed).choice(len(unique), size=args.size, replace=False))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"en": [unique[i][0] for i in chosen], "foreign": [unique[i][1] for i in chosen]}),
                   args.output)
    print(f"{args.size} of {len(unique)} distinct pairs -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
