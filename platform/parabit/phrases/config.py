"""The phrase pipeline's configuration: bitext → word alignment → phrase table → pivot paraphrases.

``load_config(PhrasesConfig, "jobs/configs/phrases_en_es.yaml")`` checks every value when it is loaded, with a
message that says what to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt, model_validator

from parabit.config import Config
from parabit.data.heldout import HeldoutSetting
from parabit.paths import output_root
from parabit.backtranslation.config import SourceConfig
from parabit.text.tokenize import TokenizerName


class AlignConfig(Config):
    """Word alignment with eflomal, one model fitted per shard of ``shard_size`` sentence pairs.

    eflomal estimates its lexical statistics from all the sentences it is given at once, so a shard is one
    alignment problem: make ``shard_size`` at least the corpus size for one global fit, or smaller to align shards
    in parallel (each fitted on its own shard). ``model``: 1 IBM1, 2 HMM, 3 HMM + fertility. ``n_samplers``
    independent Gibbs samplers per shard (their counts are averaged). Pairs with a side longer than
    ``max_tokens`` tokens (or empty after tokenising) are rejected with that reason. ``symmetrisation`` merges the
    two directions: ``grow-diag-final-and`` (Moses' default), ``grow-diag-final``, ``intersection`` or ``union``.
    """

    shard_size: PositiveInt = 80_000
    """Sentence pairs per eflomal fit (one Ray Data batch): at least the corpus size for one global fit, smaller to
    align shards in parallel, each fitted on its own pairs only."""
    model: Literal[1, 2, 3] = 3
    """eflomal's alignment model: ``1`` IBM1, ``2`` HMM, ``3`` HMM + fertility (eflomal's default)."""
    n_samplers: PositiveInt = 2
    """Independent Gibbs samplers per shard, their counts averaged: more give steadier links for more compute."""
    rel_iterations: PositiveFloat = 1.0
    """Gibbs iterations relative to eflomal's default schedule (about 5000/√n for a shard of n sentence pairs, at
    least 2): ``2.0`` samples twice as long."""
    null_prior: float = Field(0.2, ge=0, le=1)
    """eflomal's prior probability that a word aligns to NULL (stays unaligned): higher leaves more words unlinked."""
    symmetrisation: Literal["grow-diag-final-and", "grow-diag-final", "intersection", "union"] = "grow-diag-final-and"
    """How the two directions' links are merged: ``grow-diag-final-and`` (Moses' default), ``grow-diag-final``,
    ``intersection`` (the fewest, surest links) or ``union`` (every link of either direction)."""
    max_tokens: PositiveInt = 80
    """Longest side aligned, in tokens: a pair with a longer side (or a side without tokens) is rejected."""
    tokenizer: TokenizerName = "regexp"
    """Word tokenizer of both sides: ``regexp`` (Penn-Treebank-like), ``toktok``, ``treebank`` or ``wordpunct``; the
    phrases are made of its tokens."""
    lowercase: bool = True
    """Lower-case both sides before tokenising, so the phrase table and the paraphrases are in lower case."""
    cpus_per_shard: PositiveFloat = 1.0
    """Logical CPUs Ray reserves for each shard's alignment task: with the cluster's CPUs, how many shards align at
    once."""


class PhraseTableConfig(Config):
    """Moses-style phrase extraction and the phrase table.

    Every phrase pair consistent with the alignment with at most ``max_length`` tokens on each side is counted
    (``batch_size`` aligned sentences per Ray Data task, merged across tasks by a Ray Data groupby). p(e|f) and
    p(f|e) are relative frequencies over the full counts; pairs seen fewer than ``min_count`` times or with both
    probabilities below ``min_probability`` are pruned (rejected with the reason).
    """

    max_length: PositiveInt = 7
    """Longest phrase extracted, in tokens, on each side (Moses' default)."""
    batch_size: PositiveInt = 10_000
    """Aligned sentence pairs per counting task (Ray Data batch): memory and parallelism, not the counts."""
    min_count: PositiveInt = 2
    """Phrase pairs extracted fewer times than this over the whole corpus are pruned; ``1`` keeps every pair."""
    min_probability: float = Field(0.0, ge=0, le=1)
    """A phrase pair is pruned when both p(e|f) and p(f|e) are below this; ``0`` prunes none by probability."""


class PivotConfig(Config):
    """Pivot paraphrases (Bannard & Callison-Burch 2005): English phrases e1 ≠ e2 sharing a foreign phrase f,
    scored p(e2|e1) = Σ_f p(e2|f)·p(f|e1).

    Only the ``pivot_top_k`` most likely English phrases of each pivot (by p(e|f)) take part, which bounds the
    self-join; a paraphrase is kept when its score is at least ``min_score`` and it is among the ``top_k`` best of
    its phrase. ``drop_punctuation_only`` rejects pairs whose two sides differ only in punctuation.
    """

    pivot_top_k: PositiveInt = 20
    """English phrases per foreign pivot that take part, the most likely by p(e|f): the self-join of a pivot grows
    with the square of this."""
    top_k: PositiveInt = 10
    """Paraphrases kept per English phrase, the best-scored; a candidate rejected as punctuation-only still takes one
    of these places."""
    min_score: float = Field(0.01, ge=0, le=1)
    """Least score p(e2|e1), summed over the shared pivots, that a paraphrase needs to be kept."""
    drop_punctuation_only: bool = True
    """Reject pairs whose sides are equal once punctuation and spaces are removed (e.g. ``u.s.`` and ``us``)."""


class PhrasesConfig(Config):
    """The whole phrase pipeline. Outputs go to ``output_dir`` (default ``<output root>/pipelines/<name>``); one
    MLflow run per execution is logged to ``experiment``. ``heldout: exclude``: ingest rejects every pair that shares
    a sentence with the held-out evaluation sets (:mod:`parabit.data.heldout`); ``keep`` (the default) ingests all."""

    name: str = Field("phrases_en_es", pattern=r"^[^/\s]+$")
    """The pipeline's name (no ``/`` or whitespace): its MLflow run's name, its default output folder, and how a
    training config names its outputs (``pipeline:<name>/pivot``); running the same name again resumes it."""
    output_dir: str | None = None
    """Where the stages write; None: ``<output root>/pipelines/<name>``, the only folder that ``pipeline:<name>``
    references find. A relative path is taken from the current directory."""
    experiment: str = "parabit-pipelines"
    """The MLflow experiment that gets one run per execution of the pipeline."""
    sources: tuple[SourceConfig, ...] = Field(default_factory=lambda: (SourceConfig(format="tatoeba", lang="es"),))
    """The bitext inputs (default: the shipped Tatoeba en–es pairs); all of one foreign ``lang``, the phrase table's,
    and no two files with the same name."""
    align: AlignConfig = Field(default_factory=AlignConfig)
    """Word alignment with eflomal (the ``align`` stage)."""
    phrase_table: PhraseTableConfig = Field(default_factory=PhraseTableConfig)
    """Phrase extraction, counting and pruning (the ``phrase_table`` stage)."""
    pivot: PivotConfig = Field(default_factory=PivotConfig)
    """Pivot paraphrases from the phrase table (the ``pivot`` stage)."""
    heldout: HeldoutSetting = "keep"
    """``exclude``: ingest rejects every pair that shares a sentence with the held-out evaluation sets (so no phrase
    comes from them); ``keep``: ingests all (what the seed papers' reproduction trained on)."""

    @model_validator(mode="after")
    def _one_language(self):
        if not self.sources:
            raise ValueError("sources is empty: name at least one bitext input")
        langs = {source.lang for source in self.sources}
        if len(langs) != 1:
            raise ValueError(f"sources must share one foreign language for one phrase table; got {sorted(langs)}")
        names = [source.path and Path(source.path).name for source in self.sources]
        if len(set(names)) != len(names):
            raise ValueError(f"sources must have distinct file names (row ids hash them); got {names}")
        return self

    @property
    def lang(self) -> str:
        return self.sources[0].lang

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "pipelines" / self.name
