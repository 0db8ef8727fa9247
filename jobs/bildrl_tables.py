"""Assemble Chen et al.'s Tables 3 and 4 from the finished BilDRL runs (the paper's numbers beside ours) and the
BLI of the target spaces, print them and log them to MLflow (experiment ``parabit-bildrl``, run ``bildrl-tables``:
``tables/table3.md``, ``table3_cosine.md``, ``table4.md``, ``bli.md``).

``python jobs/bildrl_tables.py [--results outputs/bildrl/results] [--no-bli]``
"""

import argparse
import sys
from pathlib import Path

from parabit.dictionary.bli import bli_scores, standard_bli_sets
from parabit.dictionary.build import read_paraphrases
from parabit.dictionary.config import DictionaryBuildConfig
from parabit.dictionary.paraphrase import paraphrase_scores
from parabit.dictionary.space import BilingualSpace
from parabit.dictionary.tables import bli_table, load_records, table3, table4
from parabit.paths import output_root
from parabit.tracking import RunTracker


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", default=str(output_root() / "bildrl" / "results"))
    parser.add_argument("--no-bli", action="store_true",
                        help="skip the BLI of the target spaces and the untrained space-mean paraphrase baseline")
    args = parser.parse_args(argv)
    records = load_records(Path(args.results))
    if not records:
        print(f"no BilDRL results under {args.results}; run jobs/train_dictionary.py first", file=sys.stderr)
        return 1
    three, three_cos, four = table3(records), table3(records, prefix="cos_"), table4(records)
    print("Table 3 (P@1 %, P@10 %, MRR; kNN by Euclidean distance)\n" + three
          + "\n\nTable 3, kNN by cosine\n" + three_cos
          + "\n\nTable 4 (bilingual paraphrase identification)\n" + four)
    bli = None
    if not args.no_bli:
        scores = {}
        for lang, path in DictionaryBuildConfig().spaces.items():
            space = BilingualSpace.load(path)
            for name, (pairs, src, tgt) in standard_bli_sets(lang).items():
                scores[f"en-{lang} space, {name}"] = bli_scores(space, pairs, src, tgt)
            if lang == "es":   # Table 4 reference: the same MLP on mean space vectors (no dictionary training)
                pairs = read_paraphrases(DictionaryBuildConfig().output_path, "es")
                base = paraphrase_scores(lambda t: space.average(t, "en"), lambda t: space.average(t, "es"), pairs)
                four += f"\n| space mean, untrained (reference) | — / {100 * base['accuracy']:.2f} | — / {base['f1']:.3f} |"
        bli = bli_table(scores)
        print("\nTable 4 with the untrained reference row\n" + four)
        print("\nBLI of the target spaces (cosine, best-ranked gold translation)\n" + bli)
    tracker = RunTracker("parabit-bildrl", "bildrl-tables", tags={"parabit.kind": "bildrl-tables"})
    tracker.start()
    tracker.log_text(three, "tables/table3.md")
    tracker.log_text(three_cos, "tables/table3_cosine.md")
    tracker.log_text(four, "tables/table4.md")
    if bli is not None:
        tracker.log_text(bli, "tables/bli.md")
    tracker.log_dict({r["name"]: r["mlflow_run_id"] for r in records}, "tables/runs.json")
    tracker.finish()
    print(f"MLflow run {tracker.run_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
