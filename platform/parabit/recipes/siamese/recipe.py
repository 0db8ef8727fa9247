"""Recipe ``siamese``: supervised Siamese (attentive) LSTMs on SICK, SICK-es and MSRP (Bao et al. 2018), scored on
the dev split after every epoch; the best-on-dev epoch is tested and exported."""

from __future__ import annotations

from pathlib import Path

import torch

from parabit.embedder import SentenceEmbedder
from parabit.evaluation.report import EvaluationReport
from parabit.recipes.siamese.config import SiameseConfig
from parabit.recipes.siamese.data import prepare_siamese_data, read_split
from parabit.evaluation.supervised import as_scores, best_threshold, dev_score, task_scores
from parabit.recipes.siamese.model import SiameseModule, build_head, predict_pairs
from parabit.training import EMBEDDER_DIR
from parabit.training import PreparedData
from parabit.training import Evaluation, Recipe


def benchmark_name(config: SiameseConfig) -> str:
    """``sick-en``, ``sick-es``, ``sick-en-es`` or ``msrp``: the report's benchmark column."""
    return "msrp" if config.data.task == "msrp" else f"sick-{config.data.language}"


class SiameseRecipe(Recipe[SiameseConfig]):
    name = "siamese"
    config_class = SiameseConfig

    def prepare(self) -> PreparedData:
        return prepare_siamese_data(self.config.data)

    def describe(self, prepared: PreparedData) -> str:
        pairs = {split: stats['pairs'] for split, stats in prepared.stats['splits'].items()}
        return f"{pairs} pairs, vocabulary {len(prepared.vocab)}"

    def tags(self) -> dict[str, str]:
        return {"parabit.task": benchmark_name(self.config), "parabit.variant": self.config.model.variant}

    def build_module(self, prepared: PreparedData, *, sparse: bool) -> SiameseModule:
        return SiameseModule(self.config, prepared.vocab)

    def validate(self, module: SiameseModule, prepared: PreparedData) -> dict[str, float]:
        """Dev scores (SICK: Pearson r, Spearman, MSE; MSRP: accuracy and F1 at the best dev threshold, which the
        test then uses)."""
        if not hasattr(self, "_dev"):
            device = next(module.parameters()).device
            self._dev = {k: torch.from_numpy(v).to(device) for k, v in read_split(prepared, "dev").items()}
        predicted = predict_pairs(module.encoder, module.head, self._dev)
        gold = self._dev["label"].cpu().numpy()
        threshold = best_threshold(predicted, gold) if self.config.data.task == "msrp" else None
        scores = task_scores(self.config.data.task, predicted, gold, threshold=threshold)
        return {"dev_score": dev_score(self.config.data.task, scores), **{f"dev/{k}": v for k, v in scores.items()}}

    def export(self, module: SiameseModule, prepared: PreparedData) -> SentenceEmbedder:
        return SentenceEmbedder(module.encoder, module.spec, prepared.vocab, prepared.tokenizer, prepared.lang_a,
                                prepared.max_tokens)

    def evaluate(self, checkpoint_dir: Path, prepared: PreparedData, selected: dict) -> Evaluation:
        """Test the selected (best-on-dev) encoder; the report also holds that epoch's dev scores."""
        embedder = SentenceEmbedder.load(checkpoint_dir / EMBEDDER_DIR)
        test = {k: torch.from_numpy(v) for k, v in read_split(prepared, "test").items()}
        predicted = predict_pairs(embedder.encoder, build_head(self.config), test)
        scores = task_scores(self.config.data.task, predicted, test["label"].numpy(),
                             threshold=selected.get("dev/threshold"))
        dev = {key.split("/", 1)[1]: value for key, value in selected.items() if key.startswith("dev/")}
        benchmark = benchmark_name(self.config)
        report = EvaluationReport(as_scores(benchmark, "test", scores, len(predicted))
                                  + as_scores(benchmark, "dev", dev, len(read_split(prepared, "dev")["label"])))
        return Evaluation(report, embedder)

    def final_score(self, report: EvaluationReport) -> float:
        """The task's selection metric on the test split: SICK relatedness Pearson r, MSRP accuracy (the report's
        ``dev`` rows are the selected epoch's dev scores, what the run was chosen on)."""
        test = {s.metric: s.value for s in report.scores
                if s.benchmark == benchmark_name(self.config) and s.subset == "test"}
        return dev_score(self.config.data.task, test) if test else float("nan")
