"""Recipe ``pairs``: a sentence encoder trained on pairs (bilingual sentences or phrases, back-translated or PPDB
paraphrases) with J_bi or J_pa, scored on the dev STS set after every epoch and on the full suite at the end."""

from __future__ import annotations

from pathlib import Path

from parabit.data.errors import DataFormatError
from parabit.embedder import SentenceEmbedder
from parabit.evaluation import EvaluationSuite
from parabit.evaluation.dev import DevSet
from parabit.pairs.config import PairsConfig
from parabit.pairs.data import prepare_pairs
from parabit.pairs.model import PairModule
from parabit.training.checkpointing import EMBEDDER_DIR
from parabit.training.prepared import PreparedData
from parabit.training.recipe import Evaluation, Recipe


class PairsRecipe(Recipe[PairsConfig]):
    name = "pairs"
    config_class = PairsConfig

    def check_inputs(self) -> None:
        path = self.config.data.path
        if path and not Path(path).exists():
            raise DataFormatError(path, None, "data.path does not exist; point it at the training pairs (e.g. a "
                                  "pipeline's select/data/pairs.parquet) or run the step that makes them first")

    def prepare(self) -> PreparedData:
        return prepare_pairs(self.config.data)

    def build_module(self, prepared: PreparedData, *, sparse: bool) -> PairModule:
        return PairModule.build(self.config.model, self.config.objective, prepared.vocab, sparse=sparse)

    def export(self, module: PairModule, prepared: PreparedData) -> SentenceEmbedder:
        return SentenceEmbedder(module.encoder, module.spec, prepared.vocab, prepared.tokenizer, prepared.lang_a,
                                prepared.max_tokens)

    def validate(self, module: PairModule, prepared: PreparedData) -> dict[str, float]:
        if not hasattr(self, "_dev"):
            self._dev = DevSet(self.config.dev)
        score, details = self._dev(self.export(module, prepared).encode)
        return {"dev_score": score, **details}

    def evaluate(self, checkpoint_dir: Path, prepared: PreparedData, selected: dict) -> Evaluation:
        embedder = SentenceEmbedder.load(checkpoint_dir / EMBEDDER_DIR)
        return Evaluation(EvaluationSuite.standard(self.config.evaluation)(embedder.encode), embedder)
