"""How machine-translated English differs from the human references it paraphrases (the paper's §6 analysis:
length, repetition, rare words), measured on (reference, translation) pairs of one engine:

* **length**: tokens per sentence;
* **repetition**: the share of a sentence's tokens that repeat an earlier token of it, and of sentences with a
  repeated word bigram;
* **rare words**: each token's frequency rank in GloVe 6B's vocabulary (sorted by corpus frequency), the share of
  tokens beyond rank 10,000 and of tokens GloVe does not know;
* **reference vs back-translation**: how well a bag-of-n-grams logistic regression tells the two apart on held-out
  sentences (0.5: indistinguishable).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from parabit.markdown import table
from parabit.text.glove import load_glove
from parabit.text.tokenize import Tokenizer

RARE_RANK = 10_000


@dataclass(frozen=True)
class TextProfile:
    """Per-sentence measures of one side (references or translations)."""

    lengths: np.ndarray
    repeated_tokens: np.ndarray  # share of tokens repeating an earlier token of the sentence
    repeated_bigram: np.ndarray  # 1 if some word bigram occurs twice
    ranks: np.ndarray  # GloVe frequency rank of every token (0 = not in GloVe)

    @classmethod
    def of(cls, sentences: list[str], tokenizer: Tokenizer, rank: dict[str, int]) -> "TextProfile":
        tokens = tokenizer.tokenize_all(sentences)
        lengths = np.asarray([len(t) for t in tokens], dtype=float)
        repeated = np.asarray([1 - len(set(t)) / len(t) if t else 0.0 for t in tokens])
        bigrams = np.asarray([float(len(set(zip(t, t[1:]))) < len(t) - 1) if len(t) > 1 else 0.0 for t in tokens])
        ranks = np.asarray([rank.get(w, 0) for t in tokens for w in t], dtype=np.int64)
        return cls(lengths, repeated, bigrams, ranks)

    def summary(self) -> dict[str, float]:
        known = self.ranks[self.ranks > 0]
        return {"mean tokens": float(self.lengths.mean()),
                "repeated-token share %": 100 * float(self.repeated_tokens.mean()),
                "sentences with a repeated bigram %": 100 * float(self.repeated_bigram.mean()),
                f"tokens beyond GloVe rank {RARE_RANK:,} %": 100 * float((self.ranks > RARE_RANK).mean()),
                "tokens not in GloVe %": 100 * float((self.ranks == 0).mean()),
                "median rank of known tokens": float(np.median(known)) if known.size else float("nan")}


LENGTH_BINS = tuple(range(0, 62, 2))  # token-count histogram edges (longer sentences counted in the last bin)
RANK_QUANTILES = tuple(i / 100 for i in range(101))


@dataclass(frozen=True)
class Side:
    """One side of a comparison, summarised: its ``measures`` (:meth:`TextProfile.summary`), the density of its
    sentence lengths over :data:`LENGTH_BINS` and the log10 GloVe rank of its known tokens at
    :data:`RANK_QUANTILES` (what the figure draws): small enough for the results ledger."""

    measures: dict[str, float]
    length_density: tuple[float, ...]
    log_rank_quantiles: tuple[float, ...]

    @classmethod
    def of(cls, profile: TextProfile) -> "Side":
        density, _ = np.histogram(np.clip(profile.lengths, 0, LENGTH_BINS[-1] - 1), bins=LENGTH_BINS, density=True)
        known = profile.ranks[profile.ranks > 0]
        quantiles = np.log10(np.quantile(known, RANK_QUANTILES)) if known.size else np.full(len(RANK_QUANTILES),
                                                                                               np.nan)
        return cls(profile.summary(), tuple(float(x) for x in density), tuple(float(x) for x in quantiles))


@dataclass(frozen=True)
class Comparison:
    """References vs translations of one engine."""

    engine: str
    pairs: int
    reference: Side
    translation: Side
    classifier_accuracy: float

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Comparison":
        def side(values: dict) -> Side:
            return Side(dict(values["measures"]), tuple(values["length_density"]), tuple(values["log_rank_quantiles"]))

        return cls(data["engine"], data["pairs"], side(data["reference"]), side(data["translation"]),
                   data["classifier_accuracy"])


def glove_ranks() -> dict[str, int]:
    words, _ = load_glove()
    return {word: i + 1 for i, word in enumerate(words)}


def compare_texts(engine: str, references: list[str], translations: list[str], seed: int = 13,
                  max_pairs: int = 50_000) -> Comparison:
    """Profiles of both sides of up to ``max_pairs`` (a seeded sample) pairs, and the classifier's accuracy."""
    order = np.random.default_rng(seed).permutation(len(references))[:max_pairs]
    references = [references[i] for i in order]
    translations = [translations[i] for i in order]
    tokenizer, rank = Tokenizer(), glove_ranks()
    return Comparison(engine, len(references), Side.of(TextProfile.of(references, tokenizer, rank)),
                      Side.of(TextProfile.of(translations, tokenizer, rank)),
                      separability(references, translations, seed))


def separability(references: list[str], translations: list[str], seed: int) -> float:
    """Held-out accuracy of a logistic regression on word 1–2-grams telling a reference from a translation; the
    pairs are split (not the sentences), so no sentence's paraphrase is in the other half."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    order = np.random.default_rng(seed + 1).permutation(len(references))
    half = len(order) // 2
    if half < 10:
        return float("nan")
    def texts(rows):
        return [references[i] for i in rows] + [translations[i] for i in rows], [0] * len(rows) + [1] * len(rows)

    train_x, train_y = texts(order[:half])
    test_x, test_y = texts(order[half:])
    vectorizer = CountVectorizer(ngram_range=(1, 2), min_df=2, binary=True)
    model = LogisticRegression(max_iter=1000, C=1.0).fit(vectorizer.fit_transform(train_x), train_y)
    return float(model.score(vectorizer.transform(test_x), test_y))


def comparison_table(comparisons: list[Comparison]) -> str:
    """Markdown: one row per measure, reference and translation side by side for every engine."""
    if not comparisons:
        return ""
    header = ["measure", *(f"{c.engine}: {side}" for c in comparisons for side in ("reference", "translation"))]
    rows = [[measure, *(f"{side.measures[measure]:.2f}" for c in comparisons for side in (c.reference, c.translation))]
            for measure in comparisons[0].reference.measures]
    # The classifier and the pairs give one number per engine: under its reference column, its translation's empty.
    rows.append(["classifier accuracy, reference vs translation (0.5 = indistinguishable)",
                 *(cell for c in comparisons for cell in (f"{c.classifier_accuracy:.3f}", ""))])
    rows.append(["pairs measured", *(cell for c in comparisons for cell in (f"{c.pairs:,}", ""))])
    return table(header, rows)


def comparison_figure(comparisons: list[Comparison], path: Path) -> Path:
    """Length histograms, repetition, and the rank distribution (CDF of log rank) of both sides per engine."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for c in comparisons:
        for side, summary, style in (("reference", c.reference, "-"), ("translation", c.translation, "--")):
            label = f"{c.engine} {side}"
            axes[0].stairs(summary.length_density, LENGTH_BINS, linestyle=style, label=label)
            axes[2].plot(summary.log_rank_quantiles, RANK_QUANTILES, linestyle=style, label=label)
    names, values = [], []
    for c in comparisons:
        for side, summary in (("ref", c.reference), ("MT", c.translation)):
            names.append(f"{c.engine}\n{side}")
            values.append(summary.measures["repeated-token share %"])
    axes[1].bar(range(len(values)), values, color=["tab:blue", "tab:orange"] * len(comparisons))
    axes[1].set_xticks(range(len(values)), names, fontsize=7)
    axes[0].set(title="sentence length", xlabel="tokens", ylabel="density")
    axes[1].set(title="repetition", ylabel="repeated-token share %")
    axes[2].set(title="word frequency rank (GloVe 6B)", xlabel="log10 rank", ylabel="share of tokens ≤ rank")
    axes[0].legend(fontsize=7)
    axes[2].legend(fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
