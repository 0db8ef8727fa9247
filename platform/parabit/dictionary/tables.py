"""Chen et al.'s Table 3 (reverse-dictionary retrieval) and Table 4 (bilingual paraphrase identification) from the
finished BilDRL runs in MLflow (experiment ``parabit-bildrl``; each run's ``<task>/test/<metric>`` scores)."""

from __future__ import annotations

import ast

from mlflow.tracking import MlflowClient

from parabit.dictionary.config import DIRECTIONS
from parabit.tracking import tags
from parabit.tracking.store import tracking_uri

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


def load_records(experiment: str = "parabit-bildrl", uri: str | None = None) -> list[dict]:
    """One record per finished BilDRL run (oldest first, so a later run of a cell wins): its name, encoder,
    directions, joint flag, MLflow run id and ``scores[task][metric]``."""
    client = MlflowClient(uri or tracking_uri())
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return []
    runs = client.search_runs([found.experiment_id], f"attributes.status = 'FINISHED' and tags.`{tags.RECIPE}` = "
                              "'bildrl'", order_by=["start_time ASC"])
    records = []
    for run in runs:
        scores: dict[str, dict[str, float]] = {}
        for key, value in run.data.metrics.items():
            task, _, rest = key.partition("/test/")
            if rest:
                scores.setdefault(task, {})[rest] = value
        records.append({"name": run.info.run_name, "encoder": run.data.params["model.encoder"],
                        "directions": list(ast.literal_eval(run.data.params["directions"])),
                        "joint": run.data.params["joint.enabled"] == "True", "mlflow_run_id": run.info.run_id,
                        "scores": scores})
    return records


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


def bildrl_tables(bli: bool = True, experiment: str = "parabit-bildrl") -> str | None:
    """Tables 3 (Euclidean and cosine kNN) and 4 from the finished runs, plus (``bli``) the target spaces' BLI and
    Table 4's untrained reference row; logged to MLflow as run ``bildrl-tables``. None when there is no run."""
    from parabit.dictionary.bli import bli_scores, standard_bli_sets
    from parabit.dictionary.config import DictionaryBuildConfig
    from parabit.dictionary.evaluation import untrained_references
    from parabit.dictionary.space import BilingualSpace
    from parabit.tracking import RunTracker

    records = load_records(experiment)
    if not records:
        return None
    three, three_cos, four = table3(records), table3(records, prefix="cos_"), table4(records)
    sections = {"Table 3 (P@1 %, P@10 %, MRR; kNN by Euclidean distance)": three,
                "Table 3, kNN by cosine": three_cos}
    bli_text = None
    if bli:
        scores = {}
        build = DictionaryBuildConfig()
        for lang, path in build.spaces.items():
            space = BilingualSpace.load(path)
            for name, (pairs, src, tgt) in standard_bli_sets(lang).items():
                scores[f"en-{lang} space, {name}"] = bli_scores(space, pairs, src, tgt)
            if lang == "es":  # Table 4 reference: the same MLP on mean space vectors (no dictionary training)
                base = untrained_references(space, build.output_path, (), paraphrase=True)["paraphrase-en-es"]
                four += (f"\n| space mean, untrained (reference) | — / {100 * base['accuracy']:.2f} "
                         f"| — / {base['f1']:.3f} |")
        bli_text = bli_table(scores)
    sections["Table 4 (bilingual paraphrase identification)"] = four
    if bli_text is not None:
        sections["BLI of the target spaces (cosine, best-ranked gold translation)"] = bli_text
    tracker = RunTracker(experiment, "bildrl-tables", tags={tags.KIND: "bildrl-tables"})
    tracker.start()
    with tracker.closing():
        for name, text in (("table3", three), ("table3_cosine", three_cos), ("table4", four), ("bli", bli_text)):
            if text is not None:
                tracker.log_text(text, f"tables/{name}.md")
        tracker.log_dict({r["name"]: r["mlflow_run_id"] for r in records}, "tables/runs.json")
    return "\n\n".join(f"{title}\n{text}" for title, text in sections.items()) + f"\n\nMLflow run {tracker.run_id}"
