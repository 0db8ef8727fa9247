"""SICK (SemEval-2014 Task 1): tab-separated with a header; the test file has CRLF line endings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from parabit.data.errors import DataFormatError, lookup
from parabit.data.lines import iter_table
from parabit.paths import data_path

SICK_HEADER = ("pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment")
SICK_FILES = {"train": "SICK_train.txt", "trial": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
ENTAILMENT_LABELS = frozenset({"NEUTRAL", "ENTAILMENT", "CONTRADICTION"})


@dataclass(frozen=True)
class SICKPair:
    """One SICK pair; ``relatedness`` is the gold score in [1, 5]."""

    pair_id: int
    sentence_a: str
    sentence_b: str
    relatedness: float
    entailment: str
    line: int


def read_sick(split: str = "test", path: str | Path | None = None) -> list[SICKPair]:
    """Read a SICK split ("train" 4500, "trial" 500, "test" 4927 pairs) or an explicit file."""
    if path is None:
        path = data_path("sick2014", lookup(SICK_FILES, split, "SICK split"))
    path = Path(path)
    pairs = []
    for number, fields in iter_table(path, SICK_HEADER):
        pair_id, sentence_a, sentence_b, score, entailment = fields
        try:
            relatedness = float(score)
            pair_number = int(pair_id)
        except ValueError:
            raise DataFormatError(path, number, f"pair_ID {pair_id!r} or relatedness {score!r} is not a number") from None
        if not 1.0 <= relatedness <= 5.0:
            raise DataFormatError(path, number, f"relatedness {relatedness} is outside [1, 5]")
        if entailment not in ENTAILMENT_LABELS:
            raise DataFormatError(path, number, f"unknown entailment label {entailment!r}")
        pairs.append(SICKPair(pair_number, sentence_a, sentence_b, relatedness, entailment, number))
    return pairs


STAGE_MANIFEST = "_MANIFEST.json"  # what marks a pipeline stage's output complete (parabit.backtranslation.stage)


def read_translated_sick(folder: str | Path, split: str = "test") -> list[tuple[SICKPair, SICKPair]]:
    """The SICK pairs of ``split`` that ``parabit translate-sick`` translated (its stage folder, ``.../translate``,
    or that folder's ``data/``), in SICK's order: (English pair, translated pair) each, with the gold score. A pair
    the engine failed on is not there. Raises FileNotFoundError saying how to make the translation."""
    lookup(SICK_FILES, split, "SICK split")
    folder = Path(folder)
    stage = next((f for f in (folder, folder.parent) if (f / STAGE_MANIFEST).is_file()), None)
    if stage is None:
        raise FileNotFoundError(f"{folder} is not a complete SICK translation (no {STAGE_MANIFEST}); make it with "
                                "`parabit translate-sick` (SICK-es by default)")
    table = pq.read_table(stage / "data")
    table = table.filter(pc.equal(table["split"], split))
    table = table.take(pc.sort_indices(table, [("line", "ascending")]))
    pairs = []
    for row in table.to_pylist():
        english = SICKPair(row["row_id"], row["sentence_a_en"], row["sentence_b_en"], row["relatedness"],
                           row["entailment"], row["line"])
        pairs.append((english, SICKPair(row["row_id"], row["sentence_a"], row["sentence_b"], row["relatedness"],
                                        row["entailment"], row["line"])))
    return pairs
