"""The back-translation pipeline's configuration: one config class per stage, checked when it is loaded.

``load_config(PipelineConfig, "jobs/configs/backtranslate_slice.yaml")`` fails at once, with a message that says what
to do, on an unknown source format, translation engine, Apertium mode, filter name, filter option or threshold, so
that a typo never surfaces an hour into a run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, NonNegativeFloat, PositiveFloat, PositiveInt, model_validator

from parabit.config import Config, ConfigError
from parabit.data.bitext import TATOEBA_FILES
from parabit.data.heldout import HeldoutSetting
from parabit.filters import Filter, FilterError, build_filter, filter_class
from parabit.paths import data_root, output_root
from parabit.translate import TranslatorError, translator_class


class SourceConfig(Config):
    """One bitext input. ``format``: ``tatoeba`` (``english TAB foreign`` lines; ``path`` defaults to the shipped
    Tatoeba file of ``lang``), ``moses`` (``path`` the English file, ``foreign_path`` the line-aligned foreign file) or
    ``parquet`` (columns ``en`` and ``foreign``). Relative paths are under the data root (``$PARABIT_DATA``).
    ``limit`` keeps the first that many pairs."""

    format: Literal["tatoeba", "moses", "parquet"] = "tatoeba"
    """The file layout: ``tatoeba`` (``english TAB foreign`` lines), ``moses`` (two line-aligned files) or
    ``parquet`` (columns ``en`` and ``foreign``)."""
    path: str | None = None
    """The file to read: for ``moses`` the English file, for ``parquet`` the table; for ``tatoeba`` optional (None:
    the shipped Tatoeba file of ``lang``). Relative paths are under the data root (``$PARABIT_DATA``)."""
    foreign_path: str | None = None
    """The foreign file whose line *i* translates line *i* of ``path``: required for ``moses``, refused otherwise."""
    lang: str = "es"
    """The foreign side's language (ISO 639-1, e.g. ``es``); without ``path`` it picks the shipped Tatoeba file
    (``es`` or ``fr``). In ``backtranslate`` mode it must be the source language of ``translation.direction``."""
    limit: PositiveInt | None = None
    """Read only this many pairs from the start (None: all), counted before de-duplication: for ``tatoeba`` and
    ``moses`` the pairs the reader accepts, for ``parquet`` rows (bad ones included)."""

    @model_validator(mode="after")
    def _paths(self):
        if self.format != "tatoeba" and not self.path:
            raise ValueError(f"a {self.format} source needs 'path' (the file to read)")
        if (self.format == "moses") != bool(self.foreign_path):
            raise ValueError("'foreign_path' (the line-aligned foreign file) is required for, and only for, "
                             "moses sources")
        if not self.path and self.lang not in TATOEBA_FILES:
            raise ValueError(f"no shipped Tatoeba file for lang {self.lang!r} (shipped: {sorted(TATOEBA_FILES)}); "
                             "give 'path'")
        return self

    def resolve(self, path: str) -> Path:
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else data_root() / candidate

    @property
    def file(self) -> Path:
        """The file this source reads (its name is hashed into the row ids): ``path`` resolved, else the shipped
        Tatoeba file of ``lang``."""
        return self.resolve(self.path) if self.path else data_root().joinpath("bitext", *TATOEBA_FILES[self.lang])


class TranslationConfig(Config):
    """How the English paraphrase of each pair is made, by ``engine`` built with ``options`` (Apertium: ``mode``,
    ``timeout_s``; marian-pt: ``threads``, ``postprocess``; hf-marian: ``model_dir``, ``batch_size``, ``num_beams``,
    ``max_new_tokens``, ``device``).

    ``mode: backtranslate`` (default): the foreign side is translated ``direction`` (e.g. ``es-en``) into English.
    ``mode: roundtrip``: the English reference goes to a pivot language and back, ``direction`` naming the three
    languages (e.g. ``en-pt-en``, Mallinson et al. 2017); any bitext's English side can feed it.

    ``actors`` long-lived translator actors (one engine load each) each use ``cpus_per_actor`` logical CPUs (keep the
    total below the cluster's CPUs: the reading tasks need some too) and ``gpus_per_actor`` GPUs (for a neural engine
    on GPU nodes; 0 runs anywhere), and translate ``batch_size`` sentences at a time."""

    engine: str = "apertium"
    """The translation engine: ``apertium`` (rule-based), ``marian-pt`` (offline neural en↔pt, CPU) or ``hf-marian``
    (a Hugging Face Marian model folder you provide; the only one that reports the per-token costs that the
    ``translation_cost`` filter scores)."""
    direction: str = "es-en"
    """ISO 639-1 codes joined by ``-``: ``source-target`` in ``backtranslate`` mode (e.g. ``es-en``, the sources'
    ``lang`` first), ``en-<pivot>-en`` in ``roundtrip`` mode (e.g. ``en-pt-en``)."""
    options: dict = Field(default_factory=lambda: {"mode": "spa-eng"})
    """Keyword options of the engine's constructor (see the class docstring), checked when loaded. The default is
    Apertium's Spanish→English mode: replace it with the engine or direction. Apertium without ``mode`` uses each
    leg's own mode, which a round trip needs."""
    mode: Literal["backtranslate", "roundtrip"] = "backtranslate"
    """``backtranslate``: the foreign side is translated into English; ``roundtrip``: the English reference goes to
    the pivot language and back (the pivot text is kept in column ``pivot``)."""
    actors: PositiveInt = 1
    """Translator actors working in parallel, each loading the engine once; fewer start when the cluster cannot hold
    this many at ``cpus_per_actor`` and ``gpus_per_actor`` each."""
    cpus_per_actor: PositiveFloat = 0.5
    """Logical Ray CPUs reserved per actor (fractions allowed); keep ``actors`` × this below the cluster's CPUs, as
    the tasks that read the input need some too."""
    gpus_per_actor: NonNegativeFloat = 0
    """GPUs reserved per actor (a fraction shares one GPU); 0 runs on any node. For a neural engine on GPU nodes,
    with its ``device`` option."""
    batch_size: PositiveInt = 1000
    """Sentences per actor call, at most an equal share of the input per actor so a small input keeps every actor
    busy; not the engine's own batch (``options.batch_size`` of ``hf-marian``)."""

    @model_validator(mode="after")
    def _engine_can_translate(self):
        languages = self.direction.split("-")
        if self.mode == "backtranslate" and (len(languages) != 2 or not all(languages)):
            raise ValueError(f"translation.direction must look like 'es-en' in backtranslate mode, "
                             f"got {self.direction!r}")
        if self.mode == "roundtrip" and (len(languages) != 3 or not all(languages) or languages[0] != "en"
                                         or languages[2] != "en"):
            raise ValueError(f"translation.direction must look like 'en-pt-en' (English reference → pivot → English) "
                             f"in roundtrip mode, got {self.direction!r}")
        try:
            for src, tgt in self.legs:
                translator_class(self.engine).check_options(src, tgt, self.options)
        except TranslatorError as err:
            raise ValueError(f"translation: {err}") from None
        return self

    @property
    def legs(self) -> list[tuple[str, str]]:
        """The translation steps in order: ``[("es", "en")]``, or ``[("en", "pt"), ("pt", "en")]`` for a round trip."""
        languages = self.direction.split("-")
        return list(zip(languages, languages[1:]))

    @property
    def languages(self) -> tuple[str, str]:
        """(source, target) of a back-translation; (English, English) for a round trip."""
        languages = self.direction.split("-")
        return languages[0], languages[-1]


class FilterConfig(Config):
    """One filter from ``parabit.filters.FILTERS`` with its constructor ``options`` and ``accept`` ``thresholds``."""

    name: str
    """The filter: ``length``, ``length_ratio``, ``translation_cost``, ``ngram_overlap``, ``bleu``, ``lm``,
    ``classifier``, ``teacher`` or ``bilingual`` (:data:`parabit.filters.FILTERS`)."""
    options: dict = Field(default_factory=dict)
    """Keyword arguments of the filter's constructor (e.g. ``order: 2`` for ``ngram_overlap``); changing them
    re-scores."""
    thresholds: dict = Field(default_factory=dict)
    """Keyword thresholds of the filter's ``accept``: ``minimum``/``maximum`` (``min_tokens``/``max_tokens`` for
    ``length``, ``max_ratio`` for ``length_ratio``, ``max_cost`` for ``translation_cost``); a NaN score fails any bound
    that is set. Empty: the filter's own defaults (only ``length``, at least 1 token, and ``length_ratio``, at most
    2.0, have any), else it only adds its score. Changing them re-runs only the selection."""

    @model_validator(mode="after")
    def _known_filter(self):
        try:
            build_filter(self.name, **self.options)
        except FilterError as err:
            raise ValueError(str(err)) from None
        unknown = set(self.thresholds) - filter_class(self.name).threshold_names()
        if unknown:
            raise ValueError(f"filter {self.name!r} has no threshold(s) {sorted(unknown)}; "
                             f"its thresholds are {sorted(filter_class(self.name).threshold_names())}")
        return self


def _default_filters() -> tuple[FilterConfig, ...]:
    return (
        FilterConfig(name="length", thresholds={"min_tokens": 1, "max_tokens": 40}),
        FilterConfig(name="length_ratio", thresholds={"max_ratio": 2.0}),
        FilterConfig(name="ngram_overlap", options={"order": 1}, thresholds={"maximum": 0.95}),
        FilterConfig(name="ngram_overlap", options={"order": 2}),
        FilterConfig(name="ngram_overlap", options={"order": 3}),
        FilterConfig(name="bleu"),
        FilterConfig(name="lm"),
        FilterConfig(name="classifier"),
    )


class ScoreConfig(Config):
    """Scoring: every filter in ``filters`` adds its score column(s). ``holdout_fraction`` of the pairs (chosen by
    ``row_id``, so the same ones every run) are set aside to fit the language model and the classifier, and are not
    used for training pairs."""

    filters: tuple[FilterConfig, ...] = Field(default_factory=_default_filters)
    """The filters, in order; a rejected pair's reason names the first whose thresholds it fails, and no two may write
    the same column. Default: ``length`` (1–40 tokens), ``length_ratio`` (at most 2.0), unigram ``ngram_overlap`` (at
    most 0.95), and bigram and trigram overlap, ``bleu``, ``lm`` and ``classifier`` scored without thresholds."""
    holdout_fraction: float = Field(0.05, gt=0, lt=1)
    """Share of the pairs (in steps of 1/10,000, chosen by ``row_id``, the same ones every run) set aside to fit the
    ``lm`` and ``classifier`` filters; they are rejected, so no training pair was seen by a model that scored it."""
    batch_size: PositiveInt = 2000
    """Pairs per scoring batch, and per block of the input (one parallel scoring task each); the scores do not
    depend on it."""

    @model_validator(mode="after")
    def _distinct_columns(self):
        columns = self.score_columns
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:
            raise ValueError(f"score.filters write column(s) {repeated} more than once; remove the repeated filter")
        return self

    def build_filters(self) -> list[Filter]:
        """Fresh (unfitted) filter instances, in configuration order."""
        return [build_filter(f.name, **f.options) for f in self.filters]

    @property
    def score_columns(self) -> list[str]:
        return [column for f in self.build_filters() for column in f.columns]

    def scoring_settings(self) -> dict:
        """What the scores depend on: filters with their options and the held-out share, but not thresholds, so a
        threshold sweep re-runs selection only."""
        return {"filters": [[f.name, f.options] for f in self.filters], "holdout_fraction": self.holdout_fraction}

    def thresholds(self) -> list[tuple[str, dict, dict]]:
        return [[f.name, f.options, f.thresholds] for f in self.filters]

    def pinned(self) -> "ScoreConfig":
        """This scoring with every filter's model named as it is now (a registered alias as its version): what a
        run scores with and records, so the score stage of a later run is redone when the alias has moved."""
        filters = tuple(f.model_copy(update={"options": {**f.options, **build_filter(f.name, **f.options)
                                                         .pinned_options()}}) for f in self.filters)
        return self.model_copy(update={"filters": filters})


class SelectConfig(Config):
    """Selection: pairs passing every filter's thresholds (and, with ``drop_identical``, whose back-translation
    differs from the reference) are sampled down to ``sample_size`` with ``seed`` (None keeps them all)."""

    sample_size: PositiveInt | None = 24_000
    """Training pairs to keep, drawn at random from those that pass every check (all of them when fewer pass; None
    keeps all); the others that passed are rejected as ``not sampled``."""
    seed: int = 13
    """Seed of that draw: the same seed and scores select the same pairs, also in a re-run after a crash."""
    drop_identical: bool = True
    """Reject pairs whose back-translation equals the reference, ignoring case: they teach no paraphrase."""


class PipelineConfig(Config):
    """The whole back-translation pipeline. Outputs go to ``output_dir`` (default
    ``<output root>/pipelines/<name>``); one MLflow run per execution is logged to ``experiment``.
    ``heldout: exclude``: ingest rejects every pair that shares a sentence with the held-out evaluation sets
    (:mod:`parabit.data.heldout`), so nothing made from them reaches training; ``keep`` (the default) ingests all."""

    name: str = Field("backtranslate", pattern=r"^[^/\s]+$")
    """The pipeline's name (no ``/`` or whitespace): its MLflow run's name, its default output folder, and how a
    training config names its pairs (``data.path: pipeline:<name>``)."""
    output_dir: str | None = None
    """Where the stages write; None: ``<output root>/pipelines/<name>``, the only folder that ``pipeline:<name>``
    references find. A relative path is taken from the current directory."""
    experiment: str = "parabit-pipelines"
    """The MLflow experiment of the pipeline's run (one per execution; one that a killed execution left running is
    taken over)."""
    sources: tuple[SourceConfig, ...] = Field(default_factory=lambda: (SourceConfig(),))
    """The bitext inputs (at least one, with distinct file names since row ids hash them), read in order into one
    table in which a repeated pair is kept once. Default: the shipped Tatoeba en–es file."""
    translation: TranslationConfig = Field(default_factory=TranslationConfig)
    """How each pair's English paraphrase is made: engine, direction, and the actors that run it."""
    score: ScoreConfig = Field(default_factory=ScoreConfig)
    """The filters that score every pair, and the held-out share that fits the learned ones."""
    select: SelectConfig = Field(default_factory=SelectConfig)
    """Which scored pairs become training pairs."""
    heldout: HeldoutSetting = "keep"
    """``exclude``: ingest rejects every pair that shares a sentence with the held-out evaluation sets (Tatoeba es–en
    test and dev, newstest2012); ``keep`` ingests all, as runs did before those sets existed."""

    @model_validator(mode="after")
    def _consistent(self):
        if not self.sources:
            raise ValueError("sources is empty; list at least one bitext source")
        names = [source.file.name for source in self.sources]
        if len(set(names)) != len(names):
            # Row ids hash the file name and line number, so two inputs with one name would collide.
            raise ValueError(f"sources must have distinct file names (row ids hash them); got {names}")
        foreign = {source.lang for source in self.sources}
        if self.translation.mode == "backtranslate" and foreign != {self.translation.languages[0]}:
            raise ValueError(f"sources are in {sorted(foreign)} but translation.direction is "
                             f"{self.translation.direction!r}; make them agree")

        costed = [f.name for f in self.score.filters if build_filter(f.name, **f.options).needs_cost]
        if costed and not translator_class(self.translation.engine).provides_cost:
            raise ValueError(f"filter(s) {costed} need per-token translation costs, which engine "
                             f"{self.translation.engine!r} does not provide; remove them from score.filters or use "
                             "an engine that reports costs")
        return self

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "pipelines" / self.name


def ingest_settings(config: Any) -> Any:
    """What a pipeline's ingest stage depends on (``config.sources`` and ``config.heldout``): the sources, and the
    held-out rule when it excludes (at its default it is left out, so an ingest made before the rule existed stays
    valid)."""
    return config.sources if config.heldout == "keep" else (config.sources, {"heldout": config.heldout})


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else str(value)


def fingerprint(*parts: Any) -> str:
    """A short stable hash of config sections (configs, mappings, plain values), to tell if a stage is stale."""
    text = json.dumps(parts, sort_keys=True, default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


__all__ = ["ConfigError", "FilterConfig", "PipelineConfig", "ScoreConfig", "SelectConfig", "SourceConfig",
           "TranslationConfig", "fingerprint", "ingest_settings"]
