"""Chen et al.'s Table 3 (reverse-dictionary retrieval) and Table 4 (bilingual paraphrase identification) from
the recorded BilDRL runs (``outputs/bildrl/results/*.json``, written by :mod:`parabit.dictionary.trainer`)."""

from __future__ import annotations

import json
from pathlib import Path

from parabit.dictionary.config import DIRECTIONS

MODEL_ORDER = ("BOW", "CNN", "GRU", "ATT", "GRU-MTL", "ATT-MTL", "ATT-joint")

# Chen et al. 2019, Table 3 (P@1 %, P@10 %, MRR) for the directions built here, and Table 4 (En&Es accuracy %, F1).
PAPER_TABLE3 = {
    "BOW": {"fr-en": (0.4, 2.2, .006), "en-es": (0.4, 2.4, .007), "es-en": (0.4, 2.6, .007)},
    "CNN": {"fr-en": (6.4, 14.8, .072), "en-es": (3.8, 7.2, .045), "es-en": (7.0, 16.8, .088)},
    "GRU": {"fr-en": (38.8, 49.8, .410), "en-es": (47.8, 59.0, .496), "es-en": (57.6, 67.2, .604)},
    "ATT": {"fr-en": (39.8, 50.2, .425), "en-es": (51.6, 59.2, .534), "es-en": (60.4, 68.4, .629)},
    "GRU-MTL": {"fr-en": (44.4, 52.8, .467), "en-es": (50.4, 60.0, .530), "es-en": (63.6, 71.8, .659)},
    "ATT-MTL": {"fr-en": (47.6, 56.6, .497), "en-es": (55.8, 62.2, .575), "es-en": (66.4, 75.0, .687)},
    "ATT-joint": {"fr-en": (68.2, 75.4, .706), "en-es": (69.0, 72.8, .704), "es-en": (78.6, 83.4, .803)},
}
PAPER_TABLE4 = {"GRU-MTL": (63.33, .722), "ATT-MTL": (66.07, .735), "ATT-joint": (67.13, .759)}


def row_label(record: dict) -> str:
    """BOW / CNN / GRU / ATT for single-direction runs, ``<ENC>-MTL`` for multi-task, ``<ENC>-joint`` for joint."""
    encoder = record["encoder"].upper()
    if record["joint"]:
        return f"{encoder}-joint"
    return f"{encoder}-MTL" if len(record["directions"]) > 1 else encoder


def load_records(folder: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(Path(folder).glob("*.json"))]


def _paper3(label: str, direction: str) -> str:
    p1, p10, mrr = PAPER_TABLE3[label][direction]
    return f"{p1:.1f}, {p10:.1f}, {mrr:.3f}"


def table3(records: list[dict], prefix: str = "", paper: bool = True) -> str:
    """Markdown: one row per model, per direction ``P@1 %, P@10 %, MRR`` (later runs of a cell win), with the
    paper's cell beside ours (``paper / ours``) unless ``paper`` is false; ``prefix`` "cos_" gives the cosine-kNN
    scores."""
    cells: dict[tuple[str, str], str] = {}
    for record in records:
        for direction in DIRECTIONS:
            scores = record["scores"].get(direction)
            if scores and f"{prefix}mrr" in scores:
                cells[row_label(record), direction] = (f"{100 * scores[prefix + 'p_at_1']:.1f}, "
                                                       f"{100 * scores[prefix + 'p_at_10']:.1f}, "
                                                       f"{scores[prefix + 'mrr']:.3f}")
    labels = [m for m in MODEL_ORDER if any((m, d) in cells for d in DIRECTIONS)]
    def cell(label: str, direction: str) -> str:
        ours = cells.get((label, direction), "—")
        return f"{_paper3(label, direction)} / {ours}" if paper else ours

    lines = ["| model | " + " | ".join(f"{d} (paper / ours)" if paper else d for d in DIRECTIONS) + " |",
             "|---|" + "---|" * len(DIRECTIONS)]
    for label in labels:
        lines.append(f"| {label} | " + " | ".join(cell(label, d) for d in DIRECTIONS) + " |")
    return "\n".join(lines)


def table4(records: list[dict]) -> str:
    """Markdown: one row per model with a paraphrase score, ``accuracy %`` and ``F1`` on En&Es."""
    rows = {row_label(r): r["scores"]["paraphrase-en-es"] for r in records if "paraphrase-en-es" in r["scores"]}
    lines = ["| model | En&Es accuracy % (paper / ours) | En&Es F1 (paper / ours) |", "|---|---|---|"]
    for label in [m for m in MODEL_ORDER if m in rows]:
        accuracy, f1 = PAPER_TABLE4.get(label, (float("nan"), float("nan")))
        lines.append(f"| BilDRL-{label} | {accuracy:.2f} / {100 * rows[label]['accuracy']:.2f} "
                     f"| {f1:.3f} / {rows[label]['f1']:.3f} |")
    return "\n".join(lines)


def bli_table(scores: dict[str, dict[str, float]]) -> str:
    """Markdown: the spaces' BLI (``test set -> bli_scores``), P@1 %, P@10 %, MRR over the words in the space."""
    lines = ["| space, test set | words | P@1 % | P@10 % | MRR |", "|---|---|---|---|---|"]
    for name, s in scores.items():
        lines.append(f"| {name} | {int(s['words'])} | {100 * s['p_at_1']:.1f} | {100 * s['p_at_10']:.1f} "
                     f"| {s['mrr']:.3f} |")
    return "\n".join(lines)
