"""Recipe ``pairs``: a sentence encoder trained on pairs (bilingual sentences or phrases, back-translated or PPDB
paraphrases) with J_bi or J_pa, scored on the dev STS set after every epoch and on the full suite at the end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import torch

from parabit.data.errors import DataFormatError
from parabit.embedder import SentenceEmbedder, UnknownWords
from parabit.evaluation import EvaluationSuite
from parabit.evaluation.report import EvaluationReport
from parabit.recipes.pairs.config import PairsConfig
from parabit.recipes.pairs.data import COUNTS_FILE, prepare_pairs
from parabit.recipes.pairs.model import (PairModule, TeacherSentences, contextual_blend, distilled_words,
                                         prepare_initial_vectors)
from parabit.teacher.model import teacher_id
from parabit.teacher.vectors import distilled_table_path
from parabit.training import EMBEDDER_DIR
from parabit.training import PreparedData, arrow_to_tensors
from parabit.training import Evaluation, InitialInput, Recipe, ScoredOnDevSet


def teacher_sentences(prepared: PreparedData) -> TeacherSentences | None:
    """The prepared sentences the teacher encoded (``data.teacher_sentences``), or None when there are none."""
    vectors = prepared.directory / "teacher.npy"
    if not vectors.is_file():
        return None
    table = arrow_to_tensors(pq.read_table(prepared.table_path("teacher")))
    return TeacherSentences(torch.from_numpy(table["ids_a"]), torch.from_numpy(table["len_a"]),
                            torch.from_numpy(np.load(vectors)))


class PairsRecipe(ScoredOnDevSet, Recipe[PairsConfig]):
    name = "pairs"
    config_class = PairsConfig

    def check_inputs(self) -> None:
        for path in self.config.data.all_paths:
            if not path.exists():
                raise DataFormatError(path, None, "data.path does not exist; point it at the training pairs (e.g. "
                                      "pipeline:<name>, a pipeline's select/data/pairs.parquet) or run the step that "
                                      "makes them first")

    def prepare(self) -> PreparedData:
        prepared = prepare_pairs(self.config.data)
        prepare_initial_vectors(self.config.model, prepared)
        return prepared

    def initial_inputs(self, prepared: PreparedData) -> list[InitialInput]:
        if self.config.model.init != "distilled":
            return []
        words = distilled_words(prepared.vocab)[1]
        path = distilled_table_path(words, self.config.model.dim,
                                    blend=contextual_blend(self.config.model, prepared))  # built by prepare()
        return [InitialInput(f"distilled-{teacher_id()}-{self.config.model.dim}d", digest=path.stem, source=str(path),
                             profile={"teacher": teacher_id(), "dim": self.config.model.dim, "words": len(words)})]

    def inputs(self) -> tuple[str, list[str]]:
        data = self.config.data
        return "+".join(source.label for source in data.all_sources), [str(path.resolve()) for path in data.all_paths]

    def build_module(self, prepared: PreparedData, *, sparse: bool) -> PairModule:
        counts_file = prepared.directory / COUNTS_FILE
        counts = json.loads(counts_file.read_text()) if counts_file.is_file() else None
        return PairModule.build(self.config.model, self.config.objective, prepared.vocab, sparse=sparse,
                                counts=counts, teacher=teacher_sentences(prepared),
                                blend=contextual_blend(self.config.model, prepared))

    def refit(self, module: PairModule, prepared: PreparedData) -> None:
        """Refit the encoder's common components on the training sentences (every worker alike: the weights are
        the same everywhere, so are the components)."""
        if not self.config.model.components:
            return
        if not hasattr(self, "_fit"):
            device = module.encoder.embedding.weight.device
            table = arrow_to_tensors(pq.read_table(prepared.table_path("fit")))
            self._fit = {name: torch.from_numpy(array).to(device) for name, array in table.items()}
        with torch.no_grad():
            vectors = torch.cat([module.encoder.pool(self._fit["ids_a"][rows], self._fit["len_a"][rows])
                                 for rows in torch.split(torch.arange(len(self._fit["len_a"])), 8192)])
        module.encoder.fit_components(vectors)

    def export(self, module: PairModule, prepared: PreparedData) -> SentenceEmbedder:
        model = self.config.model
        return SentenceEmbedder(module.encoder, module.spec, prepared.vocab, prepared.tokenizer, prepared.lang_a,
                                prepared.max_tokens, UnknownWords(model.unknown_words, self.config.seed, model.init_std))

    def evaluate(self, checkpoint_dir: Path, prepared: PreparedData, selected: dict) -> Evaluation:
        embedder = SentenceEmbedder.load(checkpoint_dir / EMBEDDER_DIR)
        suite = EvaluationSuite.standard(self.config.evaluation)
        variants = {}
        for variant in self.config.evaluation.also:
            if variant == "untrained":
                variants[variant] = suite(self.untrained_embedder().encode)
            elif variant == "shared_unknown":
                variants[variant] = suite(embedder.with_unknown(UnknownWords("shared")).encode)
        return Evaluation(suite(embedder.encode), embedder, variants=variants)

    def final_score(self, report: EvaluationReport) -> float:
        """The mean over the evaluated STS years of each year's mean Pearson r (the seed tables' headline)."""
        means = [s.value for s in report.scores if s.benchmark.startswith("sts") and s.subset == "mean"
                 and s.metric == "pearson"]
        return sum(means) / len(means) if means else float("nan")
