"""Recipe ``bildrl``: definition encoders mapping a word's definition onto the word's vector in a bilingual space
(Chen et al. 2019): one direction, multi-task over two, or joint with skip-gram and alignment losses."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import ray.data
import torch

from parabit.recipes.bildrl.config import BilDRLConfig
from parabit.recipes.bildrl.evaluation import DefinitionEmbedder, evaluate_run
from parabit.recipes.bildrl.model import BilDRLModule
from parabit.recipes.bildrl.prepare import prepare_dictionary_run, prepared_space
from parabit.evaluation.report import EvaluationReport, Score
from parabit.training.run import load_state
from parabit.training import PreparedData
from parabit.training import Evaluation, Recipe


class BilDRLRecipe(Recipe[BilDRLConfig]):
    name = "bildrl"
    config_class = BilDRLConfig

    def prepare(self) -> PreparedData:
        return prepare_dictionary_run(self.config)

    def describe(self, prepared: PreparedData) -> str:
        return f"training rows {prepared.stats['train_rows']}, space vocabulary {len(prepared.vocab)}"

    def tags(self) -> dict[str, str]:
        return {"parabit.papers.bildrl.encoder": self.config.model.encoder,
                "parabit.papers.bildrl.directions": ",".join(self.config.directions),
                "parabit.papers.bildrl.joint": str(self.config.joint.enabled)}

    def datasets(self, prepared: PreparedData) -> dict[str, ray.data.Dataset]:
        datasets = super().datasets(prepared)
        if self.config.joint.enabled:
            datasets["bitext"] = ray.data.from_arrow(pq.read_table(prepared.table_path("bitext")))
        return datasets

    def build_module(self, prepared: PreparedData, *, sparse: bool) -> BilDRLModule:
        space = prepared_space(prepared)
        ranges = {"en": space.language_range("en"), "foreign": space.language_range(self.config.language)}
        return BilDRLModule(self.config, torch.from_numpy(space.vectors), ranges)

    def evaluate(self, checkpoint_dir: Path, prepared: PreparedData, selected: dict) -> Evaluation:
        """Retrieval per direction and paraphrase identification, as ``<task>/<split>/<metric>`` scores (what
        :mod:`parabit.recipes.bildrl.tables` reads back from the MLflow runs)."""
        embedder = DefinitionEmbedder.from_state(load_state(checkpoint_dir)["model"], self.config,
                                                 prepared_space(prepared))
        scores = evaluate_run(embedder, self.config)
        report = EvaluationReport([Score(task, split, metric, value, int(values.get("test_cases", 0)))
                                   for task, splits in scores.items() for split, values in splits.items()
                                   for metric, value in values.items()])
        return Evaluation(report, artifacts={"bildrl/scores.json": scores})

    def final_score(self, report: EvaluationReport) -> float:
        """P@1 of retrieving the held-out words (``<direction>/test/p_at_1``), averaged over the directions the run
        trains: the number Chen et al.'s Table 3 and this project's findings compare runs on."""
        found = [s.value for s in report.scores if s.benchmark in self.config.directions and s.subset == "test"
                 and s.metric == "p_at_1"]
        return sum(found) / len(found) if found else float("nan")
