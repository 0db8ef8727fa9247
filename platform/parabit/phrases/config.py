"""The phrase pipeline's configuration: bitext → word alignment → phrase table → pivot paraphrases.

``load_config(PhrasesConfig, "jobs/configs/phrases_en_es.yaml")`` checks every value when it is loaded, with a
message that says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from parabit.paths import output_root
from parabit.pipeline.config import SourceConfig, _entries
from parabit.text.tokenize import TOKENIZERS

SYMMETRISATIONS = ("grow-diag-final-and", "grow-diag-final", "intersection", "union")


def _check_positive(name: str, value: float, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value}")


@dataclass
class AlignConfig:
    """Word alignment with eflomal, one model fitted per shard of ``shard_size`` sentence pairs.

    eflomal estimates its lexical statistics from all the sentences it is given at once, so a shard is one
    alignment problem: make ``shard_size`` at least the corpus size for one global fit, or smaller to align shards
    in parallel (each fitted on its own shard). ``model``: 1 IBM1, 2 HMM, 3 HMM + fertility. ``n_samplers``
    independent Gibbs samplers per shard (their counts are averaged). Pairs with a side longer than
    ``max_tokens`` tokens (or empty after tokenising) are rejected with that reason. ``symmetrisation`` merges the
    two directions: ``grow-diag-final-and`` (Moses' default), ``grow-diag-final``, ``intersection`` or ``union``.
    """

    shard_size: int = 80_000
    model: int = 3
    n_samplers: int = 2
    rel_iterations: float = 1.0
    null_prior: float = 0.2
    symmetrisation: str = "grow-diag-final-and"
    max_tokens: int = 80
    tokenizer: str = "regexp"
    lowercase: bool = True
    cpus_per_shard: float = 1.0

    def __post_init__(self):
        _check_positive("align.shard_size", self.shard_size)
        if self.model not in (1, 2, 3):
            raise ValueError(f"align.model is {self.model}; choose 1 (IBM1), 2 (HMM) or 3 (HMM + fertility)")
        _check_positive("align.n_samplers", self.n_samplers)
        _check_positive("align.rel_iterations", self.rel_iterations)
        _check_positive("align.max_tokens", self.max_tokens)
        _check_positive("align.cpus_per_shard", self.cpus_per_shard)
        if self.symmetrisation not in SYMMETRISATIONS:
            raise ValueError(f"align.symmetrisation is {self.symmetrisation!r}; choose one of {list(SYMMETRISATIONS)}")
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"align.tokenizer is {self.tokenizer!r}; choose one of {sorted(TOKENIZERS)}")


@dataclass
class PhraseTableConfig:
    """Moses-style phrase extraction and the phrase table.

    Every phrase pair consistent with the alignment with at most ``max_length`` tokens on each side is counted
    (``batch_size`` aligned sentences per Ray Data task, merged across tasks by a Ray Data groupby). p(e|f) and
    p(f|e) are relative frequencies over the full counts; pairs seen fewer than ``min_count`` times or with both
    probabilities below ``min_probability`` are pruned (rejected with the reason).
    """

    max_length: int = 7
    batch_size: int = 10_000
    min_count: int = 2
    min_probability: float = 0.0

    def __post_init__(self):
        _check_positive("phrase_table.max_length", self.max_length)
        _check_positive("phrase_table.batch_size", self.batch_size)
        _check_positive("phrase_table.min_count", self.min_count)
        if not 0 <= self.min_probability <= 1:
            raise ValueError(f"phrase_table.min_probability must be in [0, 1], got {self.min_probability}")


@dataclass
class PivotConfig:
    """Pivot paraphrases (Bannard & Callison-Burch 2005): English phrases e1 ≠ e2 sharing a foreign phrase f,
    scored p(e2|e1) = Σ_f p(e2|f)·p(f|e1).

    Only the ``pivot_top_k`` most likely English phrases of each pivot (by p(e|f)) take part, which bounds the
    self-join; a paraphrase is kept when its score is at least ``min_score`` and it is among the ``top_k`` best of
    its phrase. ``drop_punctuation_only`` rejects pairs whose two sides differ only in punctuation.
    """

    pivot_top_k: int = 20
    top_k: int = 10
    min_score: float = 0.01
    drop_punctuation_only: bool = True

    def __post_init__(self):
        _check_positive("pivot.pivot_top_k", self.pivot_top_k)
        _check_positive("pivot.top_k", self.top_k)
        if not 0 <= self.min_score <= 1:
            raise ValueError(f"pivot.min_score must be in [0, 1], got {self.min_score}")


@dataclass
class PhrasesConfig:
    """The whole phrase pipeline. Outputs go to ``output_dir`` (default ``<output root>/pipelines/<name>``); one
    MLflow run per execution is logged to ``experiment``."""

    name: str = "phrases_en_es"
    output_dir: str | None = None
    experiment: str = "parabit-pipelines"
    sources: tuple[SourceConfig, ...] = (SourceConfig(format="tatoeba", lang="es"),)
    align: AlignConfig = field(default_factory=AlignConfig)
    phrase_table: PhraseTableConfig = field(default_factory=PhraseTableConfig)
    pivot: PivotConfig = field(default_factory=PivotConfig)

    def __post_init__(self):
        self.sources = _entries(SourceConfig, tuple(self.sources), "sources")
        if not self.sources:
            raise ValueError("sources is empty: name at least one bitext input")
        langs = {source.lang for source in self.sources}
        if len(langs) != 1:
            raise ValueError(f"sources must share one foreign language for one phrase table; got {sorted(langs)}")
        names = [source.path and Path(source.path).name for source in self.sources]
        if len(set(names)) != len(names):
            raise ValueError(f"sources must have distinct file names (row ids hash them); got {names}")

    @property
    def lang(self) -> str:
        return self.sources[0].lang

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "pipelines" / self.name
