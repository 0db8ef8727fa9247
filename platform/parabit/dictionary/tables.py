"""Chen et al.'s Table 3 (reverse-dictionary retrieval) and Table 4 (bilingual paraphrase identification) from
the recorded BilDRL runs (``outputs/bildrl/results/*.json``, written by :mod:`parabit.dictionary.trainer`)."""

from __future__ import annotations

import json
from pathlib import Path

from parabit.dictionary.config import DIRECTIONS

MODEL_ORDER = ("BOW", "CNN", "GRU", "ATT", "GRU-MTL", "ATT-MTL", "ATT-joint")


def row_label(record: dict) -> str:
    """BOW / CNN / GRU / ATT for single-direction runs, ``<ENC>-MTL`` for multi-task, ``<ENC>-joint`` for joint."""
    encoder = record["encoder"].upper()
    if record["joint"]:
        return f"{encoder}-joint"
    return f"{encoder}-MTL" if len(record["directions"]) > 1 else encoder


def load_records(folder: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(Path(folder).glob("*.json"))]


def table3(records: list[dict], prefix: str = "") -> str:
    """Markdown: one row per model, per direction ``P@1 %, P@10 %, MRR`` (later runs of a cell win); ``prefix``
    "cos_" gives the cosine-kNN scores."""
    cells: dict[tuple[str, str], str] = {}
    for record in records:
        for direction in DIRECTIONS:
            scores = record["scores"].get(direction)
            if scores and f"{prefix}mrr" in scores:
                cells[row_label(record), direction] = (f"{100 * scores[prefix + 'p_at_1']:.1f}, "
                                                       f"{100 * scores[prefix + 'p_at_10']:.1f}, "
                                                       f"{scores[prefix + 'mrr']:.3f}")
    labels = [m for m in MODEL_ORDER if any((m, d) in cells for d in DIRECTIONS)]
    lines = ["| model | " + " | ".join(DIRECTIONS) + " |", "|---|" + "---|" * len(DIRECTIONS)]
    for label in labels:
        lines.append(f"| {label} | " + " | ".join(cells.get((label, d), "—") for d in DIRECTIONS) + " |")
    return "\n".join(lines)


def table4(records: list[dict]) -> str:
    """Markdown: one row per model with a paraphrase score, ``accuracy %`` and ``F1`` on En&Es."""
    rows = {row_label(r): r["scores"]["paraphrase-en-es"] for r in records if "paraphrase-en-es" in r["scores"]}
    lines = ["| model | En&Es accuracy % | En&Es F1 |", "|---|---|---|"]
    for label in [m for m in MODEL_ORDER if m in rows]:
        lines.append(f"| BilDRL-{label} | {100 * rows[label]['accuracy']:.2f} | {rows[label]['f1']:.3f} |")
    return "\n".join(lines)
