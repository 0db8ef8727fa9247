"""SICK in another language: every SICK pair machine-translated, written once as parquet (an exactly-once stage).

Bao et al. (2018) test their Siamese LSTMs on SICK translated into Chinese and Tibetan by online MT; parabit makes
SICK-es the same way with its own :class:`~parabit.translate.Translator` (Apertium ``eng-spa`` by default). Each
distinct sentence is translated once, in whole batches, by one long-lived translator.

Output (``<output_root>/pipelines/<name>/translate/``, see :mod:`parabit.backtranslation.stage`): ``data/`` holds one row
per translated pair with ``row_id`` (= SICK's ``pair_ID``, unique over train, trial and test), ``source`` (the SICK
file), ``line``, ``split``, the English ``sentence_a_en``/``sentence_b_en``, the translated ``sentence_a``/
``sentence_b``, ``relatedness``, ``entailment``, ``lang`` and the provenance ``engine``/``engine_options``. A pair
whose sentence the engine fails on goes to ``rejects/`` with the engine's reason; rows in = rows out + rejected.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import Field, PositiveInt, field_validator, model_validator

from parabit.config import Config
from parabit.data.sick import SICK_FILES, SICKPair, read_sick
from parabit.paths import output_root
from parabit.backtranslation.config import fingerprint
from parabit.backtranslation.stage import DATA, REJECTS, StageOutput, reject_rows, run_stage, write_rejects
from parabit.translate import TranslatorError, build_translator, translator_class

log = logging.getLogger(__name__)

STAGE = "translate"


class SICKTranslationConfig(Config):
    """Which SICK splits to translate into ``lang`` with ``engine`` (built with ``options``), ``batch_size``
    distinct sentences at a time. ``max_pairs_per_split`` keeps the first pairs of each split (tests, quick looks).
    Output under ``output`` (default ``<output_root>/pipelines/<name>``)."""

    name: str = Field("sick-es", pattern=r"^[^/\s]+$")
    """The translation's name (no ``/`` or whitespace): its MLflow run's name (experiment ``parabit-pipelines``) and
    its default output folder, which evaluation and training configs name as ``pipeline:<name>/translate``."""
    lang: str = "es"
    """The language SICK is translated into (ISO 639-1); the engine must translate ``en`` into it, and every row
    records it."""
    engine: str = "apertium"
    """The translation engine (``apertium``, ``marian-pt`` or ``hf-marian``, as in the back-translation pipeline)."""
    options: dict = Field(default_factory=lambda: {"mode": "eng-spa"})
    """Keyword options of the engine's constructor, checked when loaded. The default is Apertium's English→Spanish
    mode: replace it with ``lang`` or ``engine``."""
    splits: tuple[str, ...] = ("train", "trial", "test")
    """The SICK splits to translate: some of ``train``, ``trial`` and ``test`` (at least one)."""
    max_pairs_per_split: PositiveInt | None = None
    """Translate only each split's first this many pairs, for tests and quick looks (None: every pair)."""
    batch_size: PositiveInt = 1000
    """Distinct sentences per call of the engine."""
    output: str | None = None
    """The output folder, the stage being its ``translate/`` (None: ``<output root>/pipelines/<name>``); a relative
    path is taken from the current directory."""

    @field_validator("splits")
    @classmethod
    def _sick_splits(cls, splits: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(splits) - set(SICK_FILES))
        if unknown or not splits:
            raise ValueError(f"splits {list(splits)}: use some of {sorted(SICK_FILES)}")
        return splits

    @model_validator(mode="after")
    def _engine_can_translate(self):
        try:
            translator_class(self.engine).check_options("en", self.lang, self.options)
        except TranslatorError as err:
            raise ValueError(str(err)) from None
        return self

    @property
    def output_path(self) -> Path:
        return Path(self.output) if self.output else output_root() / "pipelines" / self.name


def _pairs(config: SICKTranslationConfig) -> list[tuple[str, SICKPair]]:
    pairs = []
    for split in config.splits:
        rows = read_sick(split)
        pairs += [(split, pair) for pair in rows[:config.max_pairs_per_split]]
    return pairs


def _translate_distinct(config: SICKTranslationConfig, sentences: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """``{sentence: (translation, failure reason)}``, each distinct sentence translated once, batch by batch."""
    distinct = list(dict.fromkeys(sentences))
    out: dict[str, tuple[str | None, str | None]] = {}
    with build_translator(config.engine, **config.options) as translator:
        for start in range(0, len(distinct), config.batch_size):
            batch = distinct[start:start + config.batch_size]
            result = translator.translate(batch, "en", config.lang)
            for sentence, text, error in zip(batch, result.translations, result.errors):
                reason = f"translation failed: {error}" if error else (None if text else "empty translation")
                out[sentence] = (text if reason is None else None, reason)
            log.info("translated %d of %d distinct SICK sentences", min(start + len(batch), len(distinct)),
                     len(distinct))
    return out


def translate_sick(config: SICKTranslationConfig, workdir: Path) -> int:
    """Stage function: translate every configured SICK pair; returns the number of pairs read."""
    pairs = _pairs(config)
    translated = _translate_distinct(config, [s for _, p in pairs for s in (p.sentence_a, p.sentence_b)])
    options = json.dumps(config.options, sort_keys=True)
    kept, rejected = [], []
    for split, pair in pairs:
        (text_a, reason_a), (text_b, reason_b) = translated[pair.sentence_a], translated[pair.sentence_b]
        reason = reason_a or reason_b
        row = {"row_id": pair.pair_id, "source": f"sick2014/{SICK_FILES[split]}", "line": pair.line, "split": split,
               "sentence_a_en": pair.sentence_a, "sentence_b_en": pair.sentence_b}
        if reason is not None:
            rejected.append({**row, "reason": f"sentence {'A' if reason_a else 'B'}: {reason}",
                             "text": f"{pair.sentence_a}\t{pair.sentence_b}"})
            continue
        kept.append({**row, "sentence_a": text_a, "sentence_b": text_b, "relatedness": pair.relatedness,
                     "entailment": pair.entailment, "lang": config.lang, "engine": config.engine,
                     "engine_options": options})
    (workdir / DATA).mkdir(parents=True)
    if kept:
        pq.write_table(pa.Table.from_pylist(kept), workdir / DATA / "part-0.parquet")
    if rejected:
        table = pa.Table.from_pylist(rejected)
        write_rejects(reject_rows(table, table["reason"], "text"), workdir / REJECTS)
    return len(pairs)


def run_sick_translation(config: SICKTranslationConfig) -> StageOutput:
    """Translate SICK exactly once: a complete output made with the same configuration is reused as it is."""
    settings = config.model_dump(mode="json", exclude={"output"})
    return run_stage(config.output_path, STAGE, fingerprint(settings),
                     lambda workdir: translate_sick(config, workdir))


def translation_stage(path: str | Path) -> StageOutput | None:
    """The complete SICK translation stage at ``path`` (``.../translate`` or its ``data/``), or None."""
    path = Path(path)
    return StageOutput.load(path) or StageOutput.load(path.parent)


def read_translated_sick(path: str | Path, split: str) -> pa.Table:
    """The translated pairs of one split from a stage output folder (``.../translate`` or its ``data/``), in
    SICK's order; raises FileNotFoundError saying how to make it when the stage has not run."""
    stage = translation_stage(path)
    if stage is None:
        raise FileNotFoundError(f"{path} is not a complete SICK translation stage (no manifest); make it with "
                                "`python jobs/translate_sick.py` (see jobs/configs/siamese/sick_es.yaml)")
    table = stage.read_data()
    table = table.filter(pc.equal(table["split"], split))
    return table.take(pc.sort_indices(table, [("line", "ascending")]))
