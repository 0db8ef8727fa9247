"""Recipe ``bilingual``: Spanish rows for an English averaging model (multilingual distillation, Reimers & Gurevych
2020, for a static student), so that one model encodes English and Spanish into one space. Selected on Tatoeba dev
retrieval; evaluated on bitext retrieval, SICK-es and cross-lingual SICK beside the English STS and SICK."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from parabit.data.heldout import HeldoutSets
from parabit.data.sts import read_sts_year
from parabit.data.sick import read_sick, read_translated_sick
from parabit.embedder import SentenceEmbedder, UnknownWords
from parabit.evaluation import EvaluationSuite
from parabit.evaluation.report import EvaluationReport, Score
from parabit.paths import pipeline_stage
from parabit.recipes.bilingual.config import BilingualConfig
from parabit.recipes.bilingual.data import BaseModel, load_arrays, prepare_bilingual
from parabit.recipes.bilingual.model import BilingualModule
from parabit.training import EMBEDDER_DIR, Evaluation, InitialInput, PreparedData, Recipe, ScoredOnDevSet

LANGUAGE_ID = "language-id"  # the report's benchmark of how often each language is told apart


def detection_scores(embedder: SentenceEmbedder, years: tuple[int, ...]) -> list[Score]:
    """How often the model reads a sentence in its own language when none is given: the held-out Tatoeba test
    sentences of each language, and every English sentence of the STS test years and SICK test (a misread English
    sentence is encoded with Spanish words, so this says how far the English scores may move)."""
    heldout = HeldoutSets.load()
    groups = {f"tatoeba-{lang}": (lang, [p.en if lang == "en" else p.foreign for p in heldout.tatoeba_test])
              for lang in embedder.langs}
    english = [s for year in years for subset in read_sts_year(year, "test") for p in subset.pairs
               for s in (p.sentence_a, p.sentence_b)]
    english += [s for p in read_sick("test") for s in (p.sentence_a, p.sentence_b)]
    groups["sts-sick-en"] = ("en", list(dict.fromkeys(english)))
    scores = []
    for subset, (lang, sentences) in groups.items():
        read = np.asarray(embedder.detect(sentences))
        scores.append(Score(LANGUAGE_ID, subset, "accuracy", float(np.mean(read == lang)), len(sentences)))
    return scores


class BilingualRecipe(ScoredOnDevSet, Recipe[BilingualConfig]):
    name = "bilingual"
    config_class = BilingualConfig

    def _base(self) -> BaseModel:
        if not hasattr(self, "_base_model"):
            self._base_model = BaseModel.load(self.config.model.base)
        return self._base_model

    def check_inputs(self) -> None:
        """The base model loads and SICK-es (when evaluated) is there: before Ray starts, not after training."""
        self._base()
        translated = self.config.evaluation.sick_translated
        if translated:
            read_translated_sick(pipeline_stage(translated), "trial")

    def prepare(self) -> PreparedData:
        return prepare_bilingual(self.config, self._base())

    def inputs(self) -> tuple[str, list[str]]:
        return f"bilingual-{self.config.data.lang}-en", list(self.config.data.sources)

    def initial_inputs(self, prepared: PreparedData) -> list[InitialInput]:
        return [InitialInput("base-model", digest=prepared.stats["base_digest"], source=self.config.model.base,
                             profile={"english_words": prepared.stats["english_words"]})]

    def build_module(self, prepared: PreparedData, *, sparse: bool) -> BilingualModule:
        return BilingualModule.build(prepared, self.config.objective, sparse=sparse)

    def export(self, module: BilingualModule, prepared: PreparedData) -> SentenceEmbedder:
        if not hasattr(self, "_scores"):
            self._scores = load_arrays(prepared, "language_scores")[0]
        return SentenceEmbedder(module.encoder, module.spec, prepared.vocab, prepared.tokenizer, "en",
                                prepared.max_tokens, UnknownWords("shared"), langs=("en", self.config.data.lang),
                                language_scores=self._scores)

    def evaluate(self, checkpoint_dir: Path, prepared: PreparedData, selected: dict) -> Evaluation:
        embedder = SentenceEmbedder.load(checkpoint_dir / EMBEDDER_DIR)
        suite = EvaluationSuite.standard(self.config.evaluation)
        report = EvaluationReport([*suite(embedder.encode).scores,
                                   *detection_scores(embedder, self.config.evaluation.sts_years)])
        variants = {}
        if "untrained" in self.config.evaluation.also:
            variants["untrained"] = suite(self.untrained_embedder().encode)
        return Evaluation(report, embedder, variants=variants)

    def final_score(self, report: EvaluationReport) -> float:
        """Tatoeba es–en retrieval accuracy on the held-out test pairs, the mean of both directions."""
        try:
            return report.value("tatoeba-es", "mean", "accuracy")
        except KeyError:
            return float("nan")
