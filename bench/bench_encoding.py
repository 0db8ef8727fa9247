"""Encoding: the exported pyfunc model over every STS 2012–2016 and SICK test sentence, against a naive path.

    .venv/bin/python bench/bench_encoding.py [--repeats 5] [--dim 300]
    .venv/bin/python bench/bench_encoding.py --model-uri models:/parabit-encoder@champion

With ``--model-uri`` a registered model (weights, SIF weighting and common-component removal included) is timed
instead, by ``pyfunc predict`` and its parts (no naive path: it re-implements only the plain AVG encoder); its
section of RESULTS.md is ``bench_encoding_model``. With ``--lang es`` as well (a bilingual model,
``models:/parabit-encoder-bilingual@champion``) the input is Spanish: every sentence of SICK-es (``parabit
translate-sick``), the held-out Tatoeba test and dev pairs and newstest2012, read with each sentence's language
detected (as a user calls it) and with ``lang`` given; the teacher encodes the English originals of the same
sentences. Its section is ``bench_encoding_model_es``.

The model is an AVG encoder (dim ``--dim``) over the vocabulary of the full shipped en-es bitext, saved with
``save_embedder_model`` and loaded with ``mlflow.pyfunc.load_model`` — the same code as a registered model
(weights are the random initial ones: speed does not depend on their values). Measured, alternating, ``--repeats``
times each, wall clock and CPU time (median):

* ``pyfunc predict``: ``model.predict(DataFrame({"text": sentences}))``, every sentence of the pairs in order
  (sentences repeat across pairs, as a user's input may);
* ``naive``: the same vectors the straightforward way: nltk's ``RegexpTokenizer`` per sentence, one vocabulary
  key string and dict lookup per token, a Python loop to pad, every sentence encoded (what parabit did before);
* the pyfunc path's parts on the distinct sentences: tokenise, ids (lookup + pad), encoder forward.

For comparison, all-MiniLM-L6-v2 took 244 s on the same sentences on this machine (figure quoted in issue 10).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import torch
from _common import machine_line, median, table, write_section
from nltk.tokenize import RegexpTokenizer

from parabit.data.sick import read_sick
from parabit.data.sts import STS_BENCHMARK_YEARS, read_sts_year
from parabit.embedder import SentenceEmbedder
from parabit.export.pyfunc import save_embedder_model
from parabit.text.tokenize import TREEBANK_LIKE_PATTERN
from parabit.text.vocab import PAD_ID, UNK_WORD
from parabit.recipes.pairs.config import DataConfig, ModelConfig
from parabit.recipes.pairs.data import prepare_pairs
from parabit.recipes.pairs.model import encoder_spec, initial_word_table

MINILM_SECONDS = 244.0


def evaluation_sentences() -> list[str]:
    sentences = []
    for year in STS_BENCHMARK_YEARS:
        for subset in read_sts_year(year, "test"):
            sentences += [s for pair in subset.pairs for s in (pair.sentence_a, pair.sentence_b)]
    return sentences + [s for pair in read_sick("test") for s in (pair.sentence_a, pair.sentence_b)]


def spanish_sentences() -> tuple[list[str], list[str]]:
    """(Spanish, English) of the same sentences: SICK-es (all splits; both sentences of each pair), the held-out
    Tatoeba test and dev pairs and newstest2012."""
    from parabit.data.heldout import HeldoutSets
    from parabit.data.sick import read_translated_sick
    from parabit.paths import pipeline_stage

    spanish, english = [], []
    for split in ("train", "trial", "test"):
        for original, translated in read_translated_sick(pipeline_stage("pipeline:sick-es/translate"), split):
            spanish += [translated.sentence_a, translated.sentence_b]
            english += [original.sentence_a, original.sentence_b]
    heldout = HeldoutSets.load()
    for pair in (*heldout.tatoeba_test, *heldout.tatoeba_dev, *heldout.newstest2012):
        spanish.append(pair.foreign)
        english.append(pair.en)
    return spanish, english


def naive_encode(embedder: SentenceEmbedder, sentences: list[str]) -> np.ndarray:
    """Per sentence nltk tokenising, per token key lookups, a Python padding loop, no de-duplication."""
    split = RegexpTokenizer(TREEBANK_LIKE_PATTERN).tokenize
    vocab, lang = embedder.vocab, embedder.lang
    sequences = [[vocab.id(token, lang) for token in (split(s.lower()) or [UNK_WORD])][:embedder.max_tokens]
                 for s in sentences]
    lengths = np.array([len(s) for s in sequences])
    ids = np.full((len(sequences), lengths.max()), PAD_ID, dtype=np.int64)
    for row, sequence in enumerate(sequences):
        ids[row, :len(sequence)] = sequence
    with torch.no_grad():
        return embedder.encoder(torch.from_numpy(ids), torch.from_numpy(lengths)).numpy()


def clocked(action) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--model-uri", help="time this registered model (e.g. models:/parabit-encoder@champion)")
    parser.add_argument("--lang", choices=["en", "es"], default="en",
                        help="with --model-uri: the input's language (es: a bilingual model on Spanish sentences)")
    parser.add_argument("--teacher-repeats", type=int, default=1,
                        help="with --model-uri: also time all-MiniLM-L6-v2 (the extra parabit[teacher]) on the same "
                             "sentences this many times, alternating with the model (0: quote the 244 s instead)")
    args = parser.parse_args()

    if args.lang != "en" and not args.model_uri:
        parser.error("--lang es times a bilingual model: give its --model-uri")
    if args.model_uri:
        return bench_model(args.model_uri, args.lang, args.repeats, args.teacher_repeats)
    sentences = evaluation_sentences()
    distinct = list(dict.fromkeys(sentences))
    prepared = prepare_pairs(DataConfig(condition="bilingual_sentences"))
    torch.manual_seed(0)
    model_config = ModelConfig(encoder="avg", dim=args.dim)
    spec = encoder_spec(model_config, len(prepared.vocab))
    encoder = SentenceEmbedder.build_encoder(spec, initial_vectors=initial_word_table(model_config, prepared.vocab))
    embedder = SentenceEmbedder(encoder.eval(), spec, prepared.vocab, prepared.tokenizer, "en", prepared.max_tokens)
    folder = Path(tempfile.mkdtemp(prefix="bench-encoding-")) / "model"
    save_embedder_model(embedder, folder)
    model = mlflow.pyfunc.load_model(str(folder))
    frame = pd.DataFrame({"text": sentences})
    loaded = model.unwrap_python_model().embedder

    timings: dict[str, list[tuple[float, float]]] = {}
    check = None
    for _ in range(args.repeats):
        runs = {
            "pyfunc predict (all sentences)": lambda: model.predict(frame),
            "naive (all sentences)": lambda: naive_encode(loaded, sentences),
            "… tokenise (distinct)": lambda: loaded.tokenizer.tokenize_flat(distinct),
            "… ids: tokenise + lookup + pad (distinct)": lambda: loaded.token_ids(distinct),
        }
        for name, action in runs.items():
            wall, cpu, result = clocked(action)
            timings.setdefault(name, []).append((wall, cpu))
            if name.startswith("pyfunc"):
                check = result
            elif name.startswith("naive"):
                assert np.allclose(check, result, atol=1e-5), "the pyfunc path and the naive path disagree"
        ids, lengths = loaded.token_ids(distinct)
        with torch.no_grad():
            wall, cpu, _ = clocked(lambda: loaded.encoder(torch.from_numpy(ids), torch.from_numpy(lengths)))
        timings.setdefault("… encoder forward (distinct, one batch)", []).append((wall, cpu))
        print({name: f"{t[-1][0]:.3f} s" for name, t in timings.items()}, flush=True)

    base = median([t[0] for t in timings["naive (all sentences)"]])
    rows = []
    for name, values in timings.items():
        wall, cpu = median([v[0] for v in values]), median([v[1] for v in values])
        rows.append([name, f"{wall:.3f}", f"{cpu:.3f}", f"{base / wall:.1f}×", f"{MINILM_SECONDS / wall:,.0f}×"])
    body = f"""## Encoding the evaluation sentences (`bench/bench_encoding.py`)

{machine_line()} · {len(sentences):,} sentences ({len(distinct):,} distinct) of the STS 2012–2016 and SICK test pairs,
AVG dim {args.dim}, vocabulary {len(prepared.vocab):,}, pyfunc model loaded with `mlflow.pyfunc.load_model`;
{args.repeats} alternating repeats, medians. Target: pyfunc predict ≤ 2 s.

{table(["run", "wall s", "CPU s", "speed vs naive (wall)", "speed vs all-MiniLM-L6-v2 (244 s, quoted)"], rows)}
"""
    write_section("bench_encoding", body)


def bench_model(uri: str, lang: str, repeats: int, teacher_repeats: int) -> None:
    """Time the registered model ``uri`` as a user loads it on sentences in ``lang``, and the teacher on the same
    sentences in English."""
    if lang == "en":
        sentences = english = evaluation_sentences()
        what = "of the STS 2012–2016 and SICK test pairs"
    else:
        sentences, english = spanish_sentences()
        what = ("in Spanish: SICK-es (all splits), the held-out Tatoeba test and dev pairs and newstest2012; the "
                "teacher encodes their English originals")
    distinct = list(dict.fromkeys(sentences))
    model = mlflow.pyfunc.load_model(uri)
    loaded = model.unwrap_python_model().embedder
    if lang not in loaded.langs:
        raise SystemExit(f"{uri} reads {list(loaded.langs)}, not {lang!r}")
    runs = {"pyfunc predict (all sentences)": lambda: model.predict(pd.DataFrame({"text": sentences}))}
    if lang != "en":
        runs["pyfunc predict (all sentences, language detected)"] = runs.pop("pyfunc predict (all sentences)")
        runs[f"pyfunc predict (all sentences, lang={lang} given)"] = lambda: model.predict(
            pd.DataFrame({"text": sentences, "lang": [lang] * len(sentences)}))
    runs["… tokenise (distinct)"] = lambda: loaded.tokenizer.tokenize_flat(distinct)
    runs["… ids: tokenise + lookup + pad (distinct)"] = lambda: loaded.token_ids(distinct, lang=lang)
    timings: dict[str, list[tuple[float, float]]] = {}
    teacher_walls: list[float] = []
    for repeat in range(max(repeats, teacher_repeats)):
        if repeat < repeats:
            for name, action in runs.items():
                wall, cpu, _ = clocked(action)
                timings.setdefault(name, []).append((wall, cpu))
        if repeat < teacher_repeats:
            from parabit.teacher import teacher_encode

            teacher_walls.append(clocked(lambda: teacher_encode(english, batch_size=64))[0])
            print(f"all-MiniLM-L6-v2: {teacher_walls[-1]:.1f} s", flush=True)
    teacher = median(teacher_walls) if teacher_walls else MINILM_SECONDS
    how = (f"{teacher:.0f} s, timed here: median of {len(teacher_walls)}, "
           f"{min(teacher_walls):.0f}–{max(teacher_walls):.0f} s" if teacher_walls else f"{teacher:.0f} s, quoted")
    rows = []
    for name, values in timings.items():
        wall, cpu = median([v[0] for v in values]), median([v[1] for v in values])
        walls = [v[0] for v in values]
        rows.append([name, f"{wall:.3f} ({min(walls):.3f}–{max(walls):.3f})", f"{cpu:.3f}", f"{teacher / wall:,.0f}×"])
    body = f"""## Encoding {"Spanish " if lang != "en" else ""}evaluation sentences with a registered model (`bench/bench_encoding.py --model-uri{f" --lang {lang}" if lang != "en" else ""}`)

{machine_line()} · model `{uri}` ({loaded.spec['encoder']}, dim {loaded.spec['dim']}, vocabulary {len(loaded.vocab):,}) · {len(sentences):,}
sentences ({len(distinct):,} distinct) {what}, loaded with
`mlflow.pyfunc.load_model`; {repeats} repeats, medians (min–max). all-MiniLM-L6-v2 (`sentence-transformers`, batch 64,
every sentence, as a user would call it) in the same run, alternating. Target: ≥ 500× faster than all-MiniLM-L6-v2.

{table(["run", "wall s", "CPU s", f"speed vs all-MiniLM-L6-v2 ({how})"], rows)}
"""
    write_section("bench_encoding_model" + ("" if lang == "en" else f"_{lang}"), body)


if __name__ == "__main__":
    sys.exit(main())
