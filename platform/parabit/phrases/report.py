"""What the phrase pipeline built: counts per stage and random examples of alignments, phrase pairs, paraphrases."""

from __future__ import annotations

import pyarrow.compute as pc

from parabit.backtranslation.stage import StageOutput


def _examples(stage: StageOutput, columns: list[str], n: int, seed: int) -> list[dict]:
    table = stage.read_data(columns)
    if table.num_rows == 0:
        return []
    frame = table.to_pandas()
    return frame.sample(min(n, len(frame)), random_state=seed).to_dict("records")


def _alignment_text(row: dict) -> str:
    english, foreign = row["en_tokens"].split(), row["foreign_tokens"].split()
    links = [link.split("-") for link in row["alignment"].split()]
    return "; ".join(f"{english[int(i)]}={foreign[int(j)]}" for i, j in links)


def summary(stages: dict[str, StageOutput], n: int = 10, seed: int = 0) -> str:
    """Markdown: counts of aligned pairs, links, phrase pairs and paraphrases, with ``n`` random examples of each."""
    align, table, pivot = stages["align"], stages["phrase_table"], stages["pivot"]
    links = sum(len(a.split()) for a in align.read_data(["alignment"])["alignment"].to_pylist())
    occurrences = pc.sum(table.read_data(["count"])["count"]).as_py() or 0
    lines = [
        f"- aligned sentence pairs: {align.rows_out:,} of {align.rows_in:,} ({align.reject_reasons or 'none rejected'}),"
        f" {links:,} symmetrised links; {align.seconds:.0f} s",
        f"- phrase pairs: {table.rows_in:,} distinct extracted, {table.rows_out:,} kept after pruning "
        f"({table.reject_reasons}), {occurrences:,} occurrences of the kept pairs; {table.seconds:.0f} s",
        f"- pivot paraphrases: {pivot.rows_in:,} candidates, {pivot.rows_out:,} kept ({pivot.reject_reasons}); "
        f"{pivot.seconds:.0f} s",
        "", f"{n} random alignments:", "",
        *(f"    {r['en_tokens']} ||| {r['foreign_tokens']} ||| {_alignment_text(r)}"
          for r in _examples(align, ["en_tokens", "foreign_tokens", "alignment"], n, seed)),
        "", f"{n} random phrase pairs (count, p(e|f), p(f|e)):", "",
        *(f"    {r['en']} ||| {r['foreign']} ||| {r['count']} {r['p_en_given_foreign']:.3f} {r['p_foreign_given_en']:.3f}"
          for r in _examples(table, ["en", "foreign", "count", "p_en_given_foreign", "p_foreign_given_en"], n, seed)),
        "", f"{n} random pivot paraphrases (score, shared pivots):", "",
        *(f"    {r['phrase']} ||| {r['paraphrase']} ||| {r['score']:.3f} {r['pivots']}"
          for r in _examples(pivot, ["phrase", "paraphrase", "score", "pivots"], n, seed)),
    ]
    return "\n".join(lines)
