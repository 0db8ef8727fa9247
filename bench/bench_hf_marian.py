"""hf-marian throughput on CPU: sentences/s of the engine with its per-token costs, by batch size and beam, against
plain ``generate`` without scores (what the cost bookkeeping adds), all in one process run.

    python bench/bench_hf_marian.py [--sentences 96] [--max-new-tokens 32] [--threads 2] [--repeats 3]

No real opus-mt weights exist on this machine (none may be downloaded), so the model is built here with
:func:`parabit.translate.tiny_marian.build_tiny_marian` in opus-mt-es-en's *shape* (d_model 512, 6 + 6 layers,
8 heads, FFN 2048) but randomly initialised, with a SentencePiece vocabulary trained on Tatoeba. A random model rarely
emits </s>, so nearly every sentence runs to ``--max-new-tokens``: the numbers are a compute-bound lower bound for
sentences of that output length, not what a trained model does on Tatoeba (shorter outputs, early stops). Ratios in
the same run are the meaningful part. The numbers replace this benchmark's section of ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch

from _common import machine_line, median, table, timed, write_section
from parabit.data.bitext import read_tatoeba
from parabit.translate import HFMarianTranslator
from parabit.translate.tiny_marian import build_tiny_marian


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=96)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    pairs = read_tatoeba(lang="es")
    spanish = [p.foreign for p in pairs[::len(pairs) // args.sentences][:args.sentences]]
    model_dir = Path(tempfile.mkdtemp(prefix="bench-hf-marian-")) / "opus-mt-shaped-es-en"
    build_seconds, _ = timed(lambda: build_tiny_marian([(p.foreign, p.en) for p in pairs[::6][:20_000]], model_dir,
                                                       vocab_size=8000, d_model=512, layers=6, init_std=0.02))
    runs = [("plain generate, no scores", 16, 1), ("hf-marian, batch 1", 1, 1), ("hf-marian, batch 16", 16, 1),
            ("hf-marian, batch 16, 4 beams", 16, 4)]
    translators = {name: HFMarianTranslator(model_dir=str(model_dir), batch_size=batch_size, num_beams=beams,
                                            max_new_tokens=args.max_new_tokens, device="cpu")
                   for name, batch_size, beams in runs}
    for translator in translators.values():
        translator.translate(spanish[:2], "es", "en")  # warm-up
    times, tokens = {name: [] for name, _, _ in runs}, {}
    for _ in range(args.repeats):  # interleaved, so a change in the machine's load hits every run alike
        for name, batch_size, _ in runs:
            translator = translators[name]
            if name.startswith("plain"):
                elapsed, _ = timed(lambda: plain_generate(translator, spanish, batch_size, args.max_new_tokens))
            else:
                elapsed, batch = timed(lambda: translator.translate(spanish, "es", "en"))
                tokens[name] = sum(len(costs) for costs in batch.costs)
            times[name].append(elapsed)
    seconds = {name: median(values) for name, values in times.items()}
    base = seconds["plain generate, no scores"]
    rows = [[name, batch_size, beams, f"{seconds[name]:.1f}", f"{len(spanish) / seconds[name]:.2f}",
             f"{tokens[name] / seconds[name]:.0f}" if name in tokens else "", f"{base / seconds[name]:.2f}"]
            for name, batch_size, beams in runs]
    write_section("bench_hf_marian", f"""## hf-marian on CPU: sentences/s with per-token costs (`bench/bench_hf_marian.py`)

{machine_line()} · {len(spanish)} Tatoeba Spanish sentences, torch {torch.__version__}, {args.threads} torch threads,
max_new_tokens {args.max_new_tokens}, median of {args.repeats} interleaved repeats; model: opus-mt-es-en's shape (d_model 512, 6+6 layers, vocab
{len(translators[runs[0][0]].tokenizer)}), **random weights** built offline in {build_seconds:.0f} s (no real weights here).

{table(["run", "batch", "beams", "seconds", "sentences/s", "output tokens/s", "throughput vs plain generate"], rows)}

A random model runs nearly every sentence to max_new_tokens, so these are lower bounds for outputs that long; a
trained opus-mt stops at </s>. "vs plain generate" = plain seconds / run seconds: plain `generate` (batch 16, greedy,
no scores) does the same search as "hf-marian, batch 16" without keeping the logits and `compute_transition_scores`,
so on a quiet machine that ratio is the cost bookkeeping's overhead; far from 1 it shows how much the shared machine's
load moved during the run, and then no row is more precise than that.""")


def plain_generate(translator: HFMarianTranslator, texts: list[str], batch_size: int, max_new_tokens: int) -> None:
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            inputs = translator.tokenizer(texts[start:start + batch_size], return_tensors="pt", padding=True,
                                          truncation=True)
            translator.model.generate(**inputs, num_beams=1, do_sample=False, max_new_tokens=max_new_tokens,
                                      max_length=None)


if __name__ == "__main__":
    main()
