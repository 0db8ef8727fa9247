"""Phrase extraction speed: parabit's extractor vs nltk's ``phrase_extraction`` on the same aligned sentence pairs.

``python bench/bench_phrase_extraction.py --pairs 3000`` reads that many aligned pairs (half Tatoeba, half Europarl)
from the phrase pipeline's ``align`` stage (run ``jobs/phrases.py`` first), extracts every phrase pair up to
``--max-length`` tokens with both, and replaces this benchmark's section of ``bench/RESULTS.md``. It also counts how
many of nltk's pairs are not consistent with the alignment (nltk truncates spans longer than the limit).
"""

from __future__ import annotations

import argparse

import pyarrow.compute as pc
from _common import machine_line, table, timed, write_section
from nltk.translate.phrase_based import phrase_extraction

from parabit.paths import output_root
from parabit.phrases.align import parse_links
from parabit.phrases.extract import consistent_spans
from parabit.backtranslation.stage import read_parquet_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--max-length", type=int, default=7)
    parser.add_argument("--pipeline", default=str(output_root() / "pipelines" / "phrases_en_es"))
    args = parser.parse_args()
    aligned = read_parquet_dir(f"{args.pipeline}/align/data", ["source", "en_tokens", "foreign_tokens", "alignment"])
    half = args.pairs // 2
    rows = []
    for europarl in (False, True):
        part = aligned.filter(pc.starts_with(aligned["source"], "europarl") if europarl
                              else pc.invert(pc.starts_with(aligned["source"], "europarl")))
        rows += [(e, f, sorted(parse_links(a))) for e, f, a in zip(
            part["en_tokens"].to_pylist()[:half], part["foreign_tokens"].to_pylist()[:half],
            part["alignment"].to_pylist()[:half])]

    ours_s, ours = timed(lambda: [set(consistent_spans(len(e.split()), len(f.split()), a, args.max_length))
                                  for e, f, a in rows])
    nltk_s, theirs = timed(lambda: [{(s, t) for s, t, _, _ in phrase_extraction(e, f, a, args.max_length)}
                                    for e, f, a in rows])
    ours_n, nltk_n = sum(map(len, ours)), sum(map(len, theirs))
    extra = sum(len(t - o) for o, t in zip(ours, theirs))
    missing = sum(len(o - t) for o, t in zip(ours, theirs))
    body = "\n\n".join([
        "## Phrase extraction (`bench/bench_phrase_extraction.py`)",
        machine_line() + f" · {len(rows):,} eflomal-aligned en-es pairs (half Tatoeba, half Europarl), "
        f"max phrase length {args.max_length}.",
        table(["extractor", "seconds", "pairs/s", "phrase pairs", "speed vs nltk"], [
            ["nltk phrase_extraction", f"{nltk_s:.2f}", f"{len(rows) / nltk_s:,.0f}", f"{nltk_n:,}", "1.00"],
            ["parabit consistent_spans", f"{ours_s:.2f}", f"{len(rows) / ours_s:,.0f}", f"{ours_n:,}",
             f"{nltk_s / ours_s:.2f}"]]),
        f"nltk emitted {extra:,} span pairs that parabit does not (inconsistent with the alignment or over the length "
        f"limit: nltk truncates long foreign spans) and missed {missing:,} that parabit emits.",
    ])
    print(write_section("bench_phrase_extraction", body))


if __name__ == "__main__":
    main()
