"""Translate-test: what a user does without a bilingual model. Each Spanish sentence is translated to English by a
translation engine (Apertium es→en), then every sentence is encoded by the English model.

The English model and the language detector are one model, the static bilingual model
(``models:/parabit-encoder-bilingual@champion``, recipe ``bilingual``): its English rows, word weights, common component
and tokenizer are the English champion's, unchanged, so it encodes English exactly as the champion does, and it tells a
sentence's language by its words' language scores (99.99 % of the STS/SICK English sentences and all of the held-out
Tatoeba sentences of either language, docs/quality.md). Whatever reads Spanish is then Apertium's English, read by the
English champion. An English-only reader (the transformer baseline ``translate-test-minilm``: all-MiniLM-L6-v2) is
told the language by py3langid instead (``detector: langid``).

:class:`TranslateTestEmbedder` has the embedder interface (``encode``, ``save``, ``load``), so it is logged, registered
(``parabit translate-test``, :func:`parabit.tracking.registry.register_translate_test`, as ``parabit-translate-test``),
evaluated and served like a trained model; serving it needs the Apertium packages where it runs (``sudo apt-get
install apertium apertium-eng-spa``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from parabit.config import Config
from parabit.export.pyfunc import TRANSLATE_TEST_FORMAT

READER_DIR = "reader"  # the bilingual model inside a saved translate-test folder
TRANSLATE_TEST_MODEL = "parabit-translate-test"
TRANSLATION_BATCH = 2000  # sentences per call of the engine (one Apertium pipeline per call)


class TranslateTestEmbedder:
    """``encode(list[str]) -> np.ndarray``: the sentences read as ``source`` (detected, or given with ``lang``)
    translated to English by the engine ``engine`` (``parabit.translate``, with ``options``), then every sentence
    encoded by ``reader`` as English. A sentence the engine fails on is encoded as written. Translations are kept for
    the embedder's life (an evaluation encodes its sentences several times).

    ``detector``: who tells a sentence's language when none is given: ``reader`` (a bilingual model that reads English
    and ``source``, e.g. the static bilingual model) or ``langid`` (py3langid's classifier, its model inside the
    package, restricted to English and ``source``), which lets an English-only reader (all-MiniLM-L6-v2) serve."""

    def __init__(self, reader, engine: str = "apertium", options: dict | None = None, source: str = "es",
                 detector: Literal["reader", "langid"] = "reader"):
        if "en" not in reader.langs or (detector == "reader" and source not in reader.langs):
            raise ValueError(f"translate-test reads English and {source!r}: its reader reads {list(reader.langs)} "
                             "(use the bilingual model, models:/parabit-encoder-bilingual@champion, or an English "
                             "model with detector 'langid')")
        self.reader = reader
        self.engine = engine
        self.options = dict(options if options is not None else {"mode": "spa-eng"})
        self.source = source
        self.detector = detector
        self.langs = ("en", source)
        self.lang = "en"
        self.spec = {"encoder": "translate-test", "engine": engine, "options": self.options, "source": source,
                     "reader": reader.spec, **({"detector": detector} if detector != "reader" else {})}
        # The distributions the saved model imports beyond every parabit model's (pinned when it is saved).
        self.requirements = tuple(getattr(reader, "requirements", ())) + (("py3langid",) if detector == "langid" else ())
        self._translations: dict[str, str] = {}
        self._identifier = None
        self.failed = 0

    def detect(self, sentences: Sequence[str]) -> list[str]:
        if self.detector == "reader":
            return self.reader.detect(sentences)
        if self._identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            self._identifier = LanguageIdentifier.from_pickled_model(MODEL_FILE)
            self._identifier.set_languages(list(self.langs))
        return [self._identifier.classify(sentence)[0] for sentence in sentences]

    def translate(self, sentences: Sequence[str]) -> list[str]:
        """``sentences`` (in ``source``) in English; a sentence the engine failed on as written."""
        from parabit.translate import build_translator

        missing = [s for s in dict.fromkeys(sentences) if s not in self._translations]
        if missing:
            with build_translator(self.engine, **self.options) as translator:
                for start in range(0, len(missing), TRANSLATION_BATCH):
                    chunk = missing[start:start + TRANSLATION_BATCH]
                    batch = translator.translate(chunk, self.source, "en")
                    self.failed += len(batch.failed)
                    self._translations.update((s, t if t is not None else s)
                                              for s, t in zip(chunk, batch.translations))
        return [self._translations[s] for s in sentences]

    def encode(self, sentences: Sequence[str], batch_size: int = 4096,
               lang: str | Sequence[str | None] | None = None) -> np.ndarray:
        sentences = list(sentences)
        if isinstance(lang, str) or lang is None:
            langs = [lang] * len(sentences)
        else:
            langs = list(lang)
            if len(langs) != len(sentences):
                raise ValueError(f"{len(langs)} languages for {len(sentences)} sentences; give one per sentence")
        unknown = sorted({code for code in langs if code is not None} - set(self.langs))
        if unknown:
            raise ValueError(f"this model reads {list(self.langs)}, not {unknown[0]!r}")
        undetected = [i for i, code in enumerate(langs) if code is None]
        for i, code in zip(undetected, self.detect([sentences[i] for i in undetected])):
            langs[i] = code
        foreign = [i for i, code in enumerate(langs) if code == self.source]
        english = list(sentences)
        for i, text in zip(foreign, self.translate([sentences[i] for i in foreign])):
            english[i] = text
        return self.reader.encode(english, batch_size, lang="en")

    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        return self.encode(sentences)

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        self.reader.save(directory / READER_DIR)
        meta = {"format": TRANSLATE_TEST_FORMAT, "engine": self.engine, "options": self.options,
                "source": self.source, "detector": self.detector}
        (directory / "embedder.json").write_text(json.dumps(meta, indent=1))
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> "TranslateTestEmbedder":
        directory = Path(directory)
        meta = json.loads((directory / "embedder.json").read_text())
        if meta.get("format") != TRANSLATE_TEST_FORMAT:
            raise ValueError(f"{directory}: not a translate-test model (format {meta.get('format')!r})")
        from parabit.export.pyfunc import open_embedder

        return cls(open_embedder(directory / READER_DIR), meta["engine"], meta["options"], meta["source"],
                   meta.get("detector", "reader"))


class TranslateTestConfig(Config):
    """The translate-test baseline to register: ``reader``, the bilingual static model whose language detection and
    English side it uses (a model URI or an embedder folder), the translation ``engine`` and its ``options``, and
    ``source``, the language translated. ``name`` names its MLflow run (in ``experiment``); ``register_as`` the
    registered model, whose versions are compared on ``promotion_dev_set`` (Tatoeba dev retrieval, as the bilingual
    models')."""

    name: str = Field("translate-test-es", pattern=r"^[^/\s]+$")
    """The name of the MLflow run that logs the model (no ``/`` or whitespace), also on its registered versions and
    on the local folder it is saved to when the tracking store cannot be reached."""
    reader: str = "models:/parabit-encoder-bilingual@champion"
    """The bilingual static model that tells each sentence's language and encodes the English: a model URI (an alias
    is logged as the version it points at) or an embedder folder; it must read English and ``source``."""
    engine: str = "apertium"
    """The translation engine (``apertium``, ``marian-pt`` or ``hf-marian``) that turns ``source`` sentences into
    English; serving the model needs it installed where it runs."""
    options: dict = Field(default_factory=lambda: {"mode": "spa-eng"})
    """Keyword options of the engine's constructor; the default is Apertium's Spanish→English mode."""
    source: str = "es"
    """The language translated (ISO 639-1): sentences detected (or given) in it are translated to English first;
    English ones are encoded as written."""
    detector: Literal["reader", "langid"] = "reader"
    """Who tells a sentence's language when none is given: ``reader`` (the bilingual model's word scores) or
    ``langid`` (py3langid, restricted to English and ``source``), for a reader that reads English only."""
    experiment: str = Field("parabit-bilingual", min_length=1)
    """The MLflow experiment of the run; the default is the bilingual models', whose runs it is compared with."""
    register_as: str = Field(TRANSLATE_TEST_MODEL, min_length=1)
    """The registered model the run's model becomes a version of; ``@champion`` then points at its version with the
    best ``promotion_dev_set`` score."""
    promotion_dev_set: ClassVar[str] = "tatoeba-es-dev"

