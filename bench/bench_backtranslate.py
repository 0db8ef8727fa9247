"""Back-translation throughput: the Ray Data stage (1 and 2 actors) against plain ``apertium -u spa-eng``.

    python bench/bench_backtranslate.py [--sentences 20000]

All runs translate the same first N Spanish sentences of Tatoeba, in the same process run, so the ratios compare
like with like on whatever the machine is doing at the time. Measured:

* ``apertium``: one ``apertium -u spa-eng`` process over a file of all sentences (the floor: no framing, no Ray);
* ``translator``: :class:`ApertiumTranslator` in this process, batches of 2,000 (the framing's cost);
* ``stage, k actors``: the pipeline's back-translate stage on Ray Data with k translator actors, including actor
  start-up, the parquet read, and the exactly-once write.

The numbers replace this benchmark's section of ``bench/RESULTS.md`` (other sections are left alone).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parabit.config import from_dict
from parabit.pipeline.backtranslate import backtranslate
from parabit.pipeline.config import SourceConfig, TranslationConfig
from parabit.pipeline.ingest import ingest
from parabit.pipeline.stage import run_stage
from parabit.ray_runtime import init_ray
from parabit.translate import ApertiumTranslator

RESULTS = Path(__file__).with_name("RESULTS.md")
START, END = "<!-- bench_backtranslate:start -->", "<!-- bench_backtranslate:end -->"


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=20_000)
    args = parser.parse_args()
    n = args.sentences
    work = Path(tempfile.mkdtemp(prefix="bench-backtranslate-"))
    ingested = run_stage(work, "ingest", "bench", lambda d: ingest([SourceConfig(limit=n)], d))
    spanish = ingested.read_data(["foreign"]).column("foreign").to_pylist()
    (work / "es.txt").write_text("\n".join(spanish) + "\n")

    seconds = {"apertium": timed(lambda: subprocess.run(
        ["apertium", "-u", "spa-eng", str(work / "es.txt"), str(work / "en.txt")], check=True))}

    def translate_in_process():
        with ApertiumTranslator("spa-eng") as translator:
            for start in range(0, len(spanish), 2000):
                translator.translate(spanish[start:start + 2000], "es", "en")

    seconds["translator"] = timed(translate_in_process)
    init_ray()
    for actors in (1, 2):
        config = from_dict(TranslationConfig, {"actors": actors, "batch_size": 2000})
        stage = f"stage, {actors} actor{'s' * (actors > 1)}"
        seconds[stage] = timed(lambda: run_stage(work, f"bt{actors}", "bench",
                                                 lambda d: backtranslate(ingested, config, d)))
    write_section(n, seconds)


def write_section(n: int, seconds: dict[str, float]) -> None:
    base = seconds["apertium"]
    rows = "\n".join(f"| {name} | {s:.1f} | {n / s:,.0f} | {base / s:.2f} |" for name, s in seconds.items())
    section = f"""{START}
## Back-translation throughput (`bench/bench_backtranslate.py`)

Command: `{' '.join([Path(sys.executable).name, *sys.argv])}` · date: {datetime.date.today()} ·
machine: {platform.node()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end ·
{n:,} Tatoeba Spanish sentences → English.

| run | seconds | sentences/s | throughput vs plain apertium |
|---|---|---|---|
{rows}

"throughput vs plain apertium" is plain-apertium seconds / run seconds (1.0 = as fast as the bare command).
{END}"""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)
    print(section)


if __name__ == "__main__":
    main()
