"""Ingest memory: peak RSS of the pipeline's ingest stage on the shipped en-es bitext, and on 10× that input.

    .venv/bin/python bench/bench_ingest_memory.py [--times 10]

The shipped Tatoeba en-es file and the Europarl v7 en-es excerpt are written out as one Moses pair (``corpus.en``,
``corpus.es``), once and ``--times`` times over (the issue's "10× larger by repetition"). Each input is ingested by
``parabit.backtranslation.ingest.ingest`` (the stage function the pipeline runs in its driver) in a fresh subprocess, whose
peak RSS (``ru_maxrss``) and wall time are reported. Streaming ingest holds one chunk plus a digest per distinct
pair, so the ratio of the two peaks should stay near 1 while the input grows ``--times``-fold; the baseline is the
same process importing everything and ingesting nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import machine_line, table, write_section

from parabit.data.bitext import TATOEBA_FILES, read_europarl, read_tatoeba
from parabit.data.errors import Quarantine
from parabit.paths import data_path

PROBE = """
import json, resource, sys, time
from pathlib import Path
from parabit.backtranslation.config import SourceConfig
from parabit.backtranslation.ingest import ingest
corpus, workdir = Path(sys.argv[1]), Path(sys.argv[2])
started = time.perf_counter()
rows = 0
if corpus.name != "nothing":
    rows = ingest([SourceConfig(format="moses", lang="es", path=str(corpus / "corpus.en"),
                                foreign_path=str(corpus / "corpus.es"))], workdir)
print(json.dumps({"rows": rows, "seconds": time.perf_counter() - started,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_corpus(folder: Path, times: int) -> int:
    """The shipped en-es bitext as a Moses pair repeated ``times`` times; returns its number of lines."""
    pairs = read_tatoeba(data_path("bitext", *TATOEBA_FILES["es"]), lang="es") + read_europarl(
        "es", "train", quarantine=Quarantine())  # 22 lines with an empty English side are left out
    english = "".join(f"{pair.en}\n" for pair in pairs)
    spanish = "".join(f"{pair.foreign}\n" for pair in pairs)
    folder.mkdir(parents=True)
    with open(folder / "corpus.en", "w", encoding="utf-8") as en, \
            open(folder / "corpus.es", "w", encoding="utf-8") as es:
        for _ in range(times):
            en.write(english)
            es.write(spanish)
    return len(pairs) * times


def probe(corpus: Path, workdir: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", PROBE, str(corpus), str(workdir)], capture_output=True, text=True,
                            check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=10)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    lines = {1: write_corpus(scratch / "x1", 1), args.times: write_corpus(scratch / f"x{args.times}", args.times)}
    baseline = probe(scratch / "nothing", scratch / "out-nothing")
    results = {}
    for times in (1, args.times):
        results[times] = probe(scratch / f"x{times}", scratch / f"out-x{times}")
        print(f"{times}x: {lines[times]:,} lines, {results[times]}", flush=True)
    rows = [["imports only (baseline)", "0", f"{baseline['peak_mib']:,.0f}", "", ""]]
    for times, result in results.items():
        rows.append([f"{times}× shipped en-es", f"{lines[times]:,}", f"{result['peak_mib']:,.0f}",
                     f"{result['peak_mib'] - baseline['peak_mib']:,.0f}", f"{result['seconds']:.1f}"])
    above = {times: result["peak_mib"] - baseline["peak_mib"] for times, result in results.items()}
    grown = above[args.times] / max(above[1], 1)
    body = f"""## Ingest memory (`bench/bench_ingest_memory.py`)

{machine_line()}. The shipped Tatoeba en-es +
Europarl v7 en-es excerpt as one Moses pair, once and {args.times}× over, each ingested in a fresh process
(`parabit.backtranslation.ingest.ingest`, chunks of 10,000 pairs); peak RSS from `ru_maxrss`.

{table(["input", "lines", "peak RSS (MiB)", "above baseline (MiB)", "seconds"], rows)}

Input {args.times}× larger → ingest memory above the baseline ×{grown:.2f}
(peak RSS ×{results[args.times]['peak_mib'] / results[1]['peak_mib']:.2f}).
The repeats are rejected as duplicates, so every later stage sees the same rows as the 1× run; those stages read
their input with Ray Data (`read_parquet` → `map_batches` → `write_parquet`), which streams blocks.
"""
    write_section("bench_ingest_memory", body)


if __name__ == "__main__":
    sys.exit(main())
