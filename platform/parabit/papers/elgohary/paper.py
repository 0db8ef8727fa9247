"""Elgohary & Carpuat (2017) as published (from ``shared/SEED_TABLES.md``), keyed like parabit's evaluation scores."""

from __future__ import annotations

# (benchmark, subset) in parabit's reports → the paper's row label
ROWS = (
    ("sts2012", "MSRpar", "MSRpar"), ("sts2012", "MSRvid", "MSRvid"), ("sts2012", "SMTeuroparl", "SMT-eur"),
    ("sts2012", "surprise.SMTnews", "SMT-news"), ("sts2012", "surprise.OnWN", "OnWN"), ("sts2012", "mean", "2012 avg"),
    ("sts2013", "headlines", "headline"), ("sts2013", "OnWN", "OnWN"), ("sts2013", "FNWN", "FNWN"),
    ("sts2013", "mean", "2013 avg"),
    ("sts2014", "deft-forum", "deft forum"), ("sts2014", "deft-news", "deft news"), ("sts2014", "headlines", "headline"),
    ("sts2014", "images", "images"), ("sts2014", "OnWN", "OnWN"), ("sts2014", "tweet-news", "tweet news"),
    ("sts2014", "mean", "2014 avg"),
    ("sts2015", "answers-forums", "forums"), ("sts2015", "answers-students", "students"),
    ("sts2015", "headlines", "headline"), ("sts2015", "belief", "belief"), ("sts2015", "images", "images"),
    ("sts2015", "mean", "2015 avg"),
    ("sick", "test", "SICK"),
)

# the paper's training conditions, and the parabit data condition(s) that stand for each
PAPER_CONDITIONS = {"MonoPh": ("pivot_paraphrases", "ppdb"), "BiPh": ("bilingual_phrases",),
                    "BiSent": ("bilingual_sentences",)}
CONDITION_LABELS = {"bilingual_sentences": "BiSent", "bilingual_phrases": "BiPh", "pivot_paraphrases": "MonoPh-pivot",
                    "ppdb": "MonoPh-PPDB"}
OBJECTIVE_LABELS = {"jbi": "J_bi", "jpa": "J_pa"}

# Table 3, rows in ROWS order; columns MonoPh J_bi, MonoPh J_pa, BiPh J_bi, BiPh J_pa, BiSent J_bi, BiSent J_pa
_TABLE3 = """
.28 .42 .54 .38 .54 .36
.33 .55 .71 .38 .71 .19
.39 .41 .49 .46 .47 .47
.40 .50 .59 .40 .58 .38
.52 .57 .64 .62 .46 .62
.39 .49 .59 .45 .54 .41
.56 .66 .70 .58 .66 .61
.55 .53 .75 .34 .48 .25
.35 .29 .41 .32 .25 .16
.49 .49 .62 .41 .46 .34
.35 .47 .51 .36 .36 .33
.59 .68 .77 .59 .76 .58
.56 .63 .73 .58 .67 .58
.58 .73 .73 .59 .66 .49
.65 .62 .80 .55 .55 .47
.59 .66 .73 .64 .56 .69
.55 .63 .71 .55 .59 .52
.35 .42 .55 .48 .50 .45
.66 .66 .73 .73 .65 .69
.64 .60 .79 .64 .73 .66
.46 .71 .68 .67 .48 .61
.52 .71 .75 .62 .67 .56
.53 .63 .70 .63 .59 .60
.53 .62 .66 .57 .63 .54
"""
_COLUMNS = [(c, o) for c in ("MonoPh", "BiPh", "BiSent") for o in ("jbi", "jpa")]
TABLE3: dict[tuple[str, str], dict[tuple[str, str], float]] = {
    (benchmark, subset): dict(zip(_COLUMNS, map(float, line.split())))
    for (benchmark, subset, _), line in zip(ROWS, _TABLE3.strip().splitlines())
}

# Table 4: undertrained-word ratio (tokens seen < 100 times in training), MonoPh / BiPh / BiSent
TABLE4 = {"sts2012": (.15, .17, .09), "sts2013": (.16, .17, .11), "sts2014": (.19, .22, .11),
          "sts2015": (.15, .19, .11), "sick": (.20, .25, .15)}
# the Table 4 column (MonoPh / BiPh / BiSent) that stands beside each parabit condition
PAPER_TABLE4_COLUMN = {"ppdb": 0, "pivot_paraphrases": 0, "bilingual_phrases": 1, "bilingual_sentences": 2}
# the paper's training data: pairs of each condition (as the paper writes them), and the bilingual sentences'
# average length in tokens
PAIRS = {"MonoPh": "3M", "BiPh": "3M", "BiSent": "1.9M"}
SENTENCE_TOKENS = 28
# J_pa's tuning budget (§3.2): pairs and epochs
JPA_TUNING_PAIRS, JPA_TUNING_EPOCHS = 100_000, 5
# Table 5: SICK Pearson under J_bi, all pairs → pairs sharing no SICK bigram (pairs before → after)
TABLE5 = {"MonoPh": (.53, .54, f"{PAIRS['MonoPh']} → 2.3M"), "BiPh": (.66, .65, f"{PAIRS['BiPh']} → 2.1M"),
          "BiSent": (.63, .58, f"{PAIRS['BiSent']} → 0.47M")}
# Table 6: BiPh J_bi by number of training pairs
TABLE6_SIZES = ("0.5M", "1M", "1.9M", "3M")
TABLE6 = {"sts2012": (.55, .58, .59, .59), "sts2013": (.59, .61, .61, .62), "sts2014": (.69, .71, .71, .71),
          "sts2015": (.68, .69, .70, .70), "sick": (.62, .64, .65, .66)}


def two_digits(value: float) -> str:
    """A correlation as the paper prints it: two decimals, no leading zero (``.63``)."""
    return f"{value:.2f}".removeprefix("0")


def paper_value(benchmark: str, subset: str, condition: str, objective: str) -> float | None:
    """The paper's Table 3 number for a parabit condition (``ppdb``/``pivot_paraphrases`` → MonoPh)."""
    paper_condition = next((p for p, ours in PAPER_CONDITIONS.items() if condition in ours), None)
    return TABLE3.get((benchmark, subset), {}).get((paper_condition, objective))
