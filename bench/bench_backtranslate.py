"""Back-translation throughput: the pipeline's back-translate stage (1 and 2 actors) against plain Apertium.

    .venv/bin/python bench/bench_backtranslate.py [--sentences 118964] [--repeats 3] [--batch-size N]

All runs translate the same first N Spanish sentences of Tatoeba (default: all 118,964) into English with Apertium
``spa-eng``, in one process run; the runs of a round follow each other and the rounds repeat, so every ratio compares
runs made minutes apart on whatever the shared machine is doing. Measured per round:

* ``apertium``: one ``apertium -u spa-eng`` process over a file of all sentences: the engine alone, the baseline 1.00
  for one translator;
* ``apertium ×2 on halves``: two ``apertium -u spa-eng`` processes at once, each over one half of the file: what two
  cores can do at best, the baseline of the 2-actor stage;
* ``translator``: :class:`ApertiumTranslator` in this process, batches of the stage's batch size (the framing: one
  long-lived null-flush pipeline, records in and out);
* ``stage, k actors``: the pipeline's back-translate stage (``run_stage`` + ``backtranslate``: actor start-up, the
  parquet input, the translation, the exactly-once write and checks) with ``translation.actors = k``,
  ``cpus_per_actor`` 1, on the Ray this script starts once (as a pipeline job does).

Throughput ratio = baseline seconds / run seconds of the same round; the table gives the median over rounds and each
round's value. The numbers replace this benchmark's section of ``bench/RESULTS.md`` (machine, load, command).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")

from _common import machine_line, median, table, timed, write_section  # noqa: E402

from parabit.config import from_dict  # noqa: E402
from parabit.backtranslation.backtranslate import backtranslate  # noqa: E402
from parabit.backtranslation.config import SourceConfig, TranslationConfig  # noqa: E402
from parabit.backtranslation.ingest import ingest  # noqa: E402
from parabit.backtranslation.stage import run_stage  # noqa: E402
from parabit.ray_runtime import init_ray  # noqa: E402
from parabit.translate import ApertiumTranslator  # noqa: E402

TATOEBA_ES = 118_964
APERTIUM = ["apertium", "-u", "spa-eng"]


def plain(files: list[Path]) -> None:
    """``apertium -u spa-eng`` over each file, all at once."""
    processes = [subprocess.Popen([*APERTIUM, str(f), str(f.with_suffix(".en"))]) for f in files]
    if any(process.wait() for process in processes):
        raise RuntimeError("apertium failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=TATOEBA_ES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=TranslationConfig().batch_size,
                        help="translation.batch_size (default: the configuration's default)")
    args = parser.parse_args()
    load_before = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    work = Path(tempfile.mkdtemp(prefix="bench-backtranslate-"))
    ingested = run_stage(work, "ingest", "bench", lambda d: ingest([SourceConfig(limit=args.sentences)], d))
    spanish = ingested.read_data(["foreign"]).column("foreign").to_pylist()
    n = len(spanish)
    whole, halves = work / "es.txt", [work / "es-1.txt", work / "es-2.txt"]
    whole.write_text("\n".join(spanish) + "\n")
    halves[0].write_text("\n".join(spanish[:n // 2]) + "\n")
    halves[1].write_text("\n".join(spanish[n // 2:]) + "\n")

    def translator_alone() -> None:
        with ApertiumTranslator("spa-eng") as translator:
            for start in range(0, n, args.batch_size):
                translator.translate(spanish[start:start + args.batch_size], "es", "en")

    def stage(actors: int, name: str):
        config = from_dict(TranslationConfig, {"actors": actors, "cpus_per_actor": 1, "batch_size": args.batch_size})
        return lambda: run_stage(work, name, "bench", lambda d: backtranslate(ingested, config, d))

    init_ray()
    runs = {
        "apertium": lambda: plain([whole]),
        "apertium ×2 on halves": lambda: plain(halves),
        "translator": translator_alone,
        "stage, 1 actor": None,
        "stage, 2 actors": None,
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for repeat in range(args.repeats):
        for name, action in runs.items():
            if action is None:
                action = stage(int(name.split()[1]), f"{name.replace(' ', '').replace(',', '-')}-{repeat}")
            seconds[name].append(timed(action)[0])
        print(f"round {repeat + 1}:", {name: f"{s[-1]:.1f} s" for name, s in seconds.items()}, flush=True)

    baselines = {"apertium": "apertium", "apertium ×2 on halves": "apertium", "translator": "apertium",
                 "stage, 1 actor": "apertium", "stage, 2 actors": "apertium ×2 on halves"}
    rows = []
    for name, values in seconds.items():
        base = baselines[name]
        ratios = [b / s for b, s in zip(seconds[base], values)]
        rows.append([name, f"{median(values):.1f}", f"{n / median(values):,.0f}", base, f"**{median(ratios):.2f}**",
                     ", ".join(f"{r:.2f}" for r in ratios)])
    body = f"""## Back-translation throughput (`bench/bench_backtranslate.py`)

{machine_line()}; load before the runs {load_before} · {n:,} Tatoeba Spanish sentences → English, Apertium
`spa-eng`; stage batch size {args.batch_size:,}, `cpus_per_actor` 1; {args.repeats} rounds of all runs in turn.

{table(["run", "seconds (median)", "sentences/s", "baseline", "throughput vs baseline (median)", "each round"], rows)}

"throughput vs baseline" = baseline seconds / run seconds in the same round (1.0 = as fast as the baseline).
The stage's time includes its actors' start-up, reading the ingested parquet, writing its output and the
exactly-once checks; Ray itself was started once, before the first round (as a pipeline job starts it).
Targets: stage with 1 actor ≥ 0.85 × apertium; stage with 2 actors ≥ 0.85 × apertium ×2 on halves.
"""
    write_section("bench_backtranslate", body)


if __name__ == "__main__":
    sys.exit(main())
