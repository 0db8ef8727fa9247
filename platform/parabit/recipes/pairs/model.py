"""The pair model: one encoder for both sides (both languages in one word table), a pair objective and its
regulariser, as one training module whose forward is the loss of a batch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from parabit.data.dictionaries import read_muse_train
from parabit.embedder import SentenceEmbedder
from parabit.encoders import AvgEncoder, SentenceEncoder, touched_rows
from parabit.objectives import L2Regularizer, L2ToInitRegularizer, build_objective
from parabit.recipes.pairs.config import ModelConfig, ObjectiveConfig
from parabit.recipes.pairs.data import contextual_sums
from parabit.teacher.vectors import ContextualBlend, build_distilled_table, load_distilled_table
from parabit.text.frequency import sif_weights
from parabit.text.glove import glove_rows_by_translation, glove_rows_for, rows_by_translation
from parabit.text.vocab import PAD_ID, UNK_WORD, Vocabulary
from parabit.training import PreparedData, RowGradient, Step, TrainingModule


def encoder_spec(config: ModelConfig, vocab_size: int) -> dict:
    """What :meth:`SentenceEmbedder.build_encoder` needs to rebuild this encoder at inference."""
    return {"encoder": config.encoder, "vocab_size": vocab_size, "dim": config.dim,
            "options": config.encoder_options()}


def initial_word_weights(config: ModelConfig, vocab: Vocabulary, counts: dict | None) -> torch.Tensor | None:
    """The per-word weights the averaging encoder starts from (SIF), or None without weighting."""
    if config.weighting == "none":
        return None
    return torch.from_numpy(sif_weights(vocab, config.sif_a, counts))


def initial_word_table(config: ModelConfig, vocab: Vocabulary, blend: ContextualBlend | None = None) -> torch.Tensor:
    """Initial word vectors: N(0, init_std²) (seeded by the caller's torch seed); with ``init: glove``, GloVe rows
    for English words; with ``init: distilled``, the teacher's distilled vectors of every English word (the table the
    driver built, see :func:`prepare_initial_vectors`; ``blend``: the contextual blend it was built with). With
    ``foreign_init: muse``, each foreign word starts at the mean English vector of its MUSE translations."""
    table = torch.randn(len(vocab), config.dim) * config.init_std
    if config.init == "glove":
        glove, _ = glove_rows_for(vocab, "en", std=config.init_std)
        if config.foreign_init == "muse":
            for lang in sorted(set(vocab.languages) - {"en"}):
                glove_rows_by_translation(glove, vocab, lang, muse_translations(lang))
        table = torch.from_numpy(glove)
    elif config.init == "distilled":
        ids, words = distilled_words(vocab)
        table[PAD_ID] = 0.0
        table[ids] = torch.from_numpy(load_distilled_table(words, config.dim, blend=blend))
        if config.foreign_init == "muse":
            # Foreign rows are set from English rows only, so the table can be read and written in place.
            rows = table.numpy()
            position = {word: index for index, word in zip(ids, words)}
            for lang in sorted(set(vocab.languages) - {"en"}):
                rows_by_translation(rows, vocab, lang, muse_translations(lang), position, rows)
    return table


def distilled_words(vocab: Vocabulary) -> tuple[list[int], list[str]]:
    """The ids and words of the vocabulary's English words that get distilled vectors (all but the unknown word)."""
    entries = [(index, word) for index, word in vocab.words("en") if word != UNK_WORD]
    return [index for index, _ in entries], [word for _, word in entries]


def contextual_blend(config: ModelConfig, prepared: PreparedData) -> ContextualBlend | None:
    """The contextual blend of the run's distilled table (``model.contextual``), from its prepared teacher pass."""
    if not config.contextual:
        return None
    sums = contextual_sums(prepared)
    if sums is None:
        raise ValueError(f"{prepared.directory}: no contextual sums in the prepared data; model.contextual needs "
                         "data.teacher_contextual: true")
    return ContextualBlend(config.contextual, config.contextual_min_count, sums)


def prepare_initial_vectors(config: ModelConfig, prepared: PreparedData) -> Path | None:
    """Build what :func:`initial_word_table` reads on the workers (driver side, once; cached): with
    ``init: distilled``, the table of the vocabulary's distilled vectors. Its path, or None when nothing is needed."""
    if config.init != "distilled":
        return None
    return build_distilled_table(distilled_words(prepared.vocab)[1], config.dim, actors=config.teacher_actors,
                                 blend=contextual_blend(config, prepared))


def muse_translations(lang: str) -> dict[str, list[str]]:
    """``word -> [English translations]`` from the MUSE ``lang``-en training split (test words excluded)."""
    translations: dict[str, list[str]] = {}
    for entry in read_muse_train(lang, "en"):
        translations.setdefault(entry.source_word, []).append(entry.target_word)
    return translations


class PairModule(TrainingModule):
    """``forward(batch, step)``: encode both sides of a pair batch, J_bi or J_pa with in-batch negatives, plus the
    configured regulariser on the word-table rows the batch used. ``spec`` rebuilds the encoder at inference."""

    def __init__(self, encoder: SentenceEncoder, spec: dict, objective: ObjectiveConfig,
                 teacher: TeacherSentences | None = None):
        super().__init__()
        self.encoder = encoder
        self.spec = spec
        self.loss = build_objective(objective.name, **objective.loss_options())
        self.distillation = None
        if objective.distillation > 0:
            if teacher is None:
                raise ValueError("objective.distillation needs the teacher's sentences (data.teacher_sentences)")
            self.distillation = build_objective(objective.distillation_loss, **objective.distillation_options())
            self.distillation_weight, self.distillation_batch = objective.distillation, objective.distillation_batch
            self.teacher = teacher
        self.regularizer = None
        if objective.regularization > 0:
            # Only the L2-to-init regulariser keeps a copy of the initial table (a second word table in memory).
            self.regularizer = (L2Regularizer(objective.regularization) if objective.regularization_kind == "l2"
                                else L2ToInitRegularizer(objective.regularization, encoder.embedding.weight))

    @classmethod
    def build(cls, model: ModelConfig, objective: ObjectiveConfig, vocab: Vocabulary, *, sparse: bool,
              counts: dict | None = None, teacher: TeacherSentences | None = None,
              blend: ContextualBlend | None = None) -> "PairModule":
        """The configured encoder over ``vocab`` with its initial word table (seeded by the caller's torch seed;
        ``blend``: the contextual blend of a distilled table) and word weights (``counts``: the training text's word
        counts per language, for words GloVe lacks); ``teacher``: the sentences the distillation objective draws
        from."""
        spec = encoder_spec(model, len(vocab))
        extra = {}
        weights = initial_word_weights(model, vocab, counts)
        if weights is not None:
            extra["initial_weights"] = weights
        encoder = SentenceEmbedder.build_encoder(spec, sparse=sparse and model.sparse,
                                                 initial_vectors=initial_word_table(model, vocab, blend), **extra)
        return cls(encoder, spec, objective, teacher)

    def forward(self, batch: dict, step: Step) -> torch.Tensor:
        g1 = self.encoder(batch["ids_a"], batch["len_a"])
        g2 = self.encoder(batch["ids_b"], batch["len_b"])
        loss = self.loss.in_batch(g1, g2, step.generator)
        if self.regularizer is not None:
            rows = torch.unique(torch.cat([touched_rows(batch["ids_a"], batch["len_a"]),
                                           touched_rows(batch["ids_b"], batch["len_b"])]))
            loss = loss + self.regularizer(self.encoder.embedding.weight, rows)
        if self.distillation is not None:
            ids, lengths, teacher = self.teacher.draw(self.distillation_batch, step.generator)
            student = self.encoder(ids.to(g1.device), lengths.to(g1.device))
            loss = loss + self.distillation_weight * self.distillation(student, teacher.to(g1.device))
        return loss

    def closed_form_table(self) -> torch.nn.Parameter | None:
        """The averaging encoder's word table, when it is all that trains (fixed or no word weights, sparse
        gradients) under J_bi or J_pa without distillation, and ``forward`` is this class's own."""
        encoder = self.encoder
        if (type(self).forward is not PairModule.forward or self.distillation is not None
                or not isinstance(encoder, AvgEncoder) or encoder.learn_weights or not encoder.embedding.sparse
                or not hasattr(self.loss, "loss_and_gradient")):
            return None
        trainable = [parameter for parameter in self.parameters() if parameter.requires_grad]
        table = encoder.embedding.weight
        return table if len(trainable) == 1 and trainable[0] is table else None

    @torch.no_grad()
    def row_gradient(self, batch: dict, step: Step) -> RowGradient:
        """:meth:`forward`'s loss for the kernel's fused step: both sides encoded from the batch's row bags, the
        objective's loss and gradient with respect to the sentence vectors in closed form
        (:mod:`parabit.objectives.triplet_hinge`), and the regulariser as a row penalty."""
        encoder = self.encoder
        bags = encoder.bags((batch["ids_a"], batch["len_a"]), (batch["ids_b"], batch["len_b"]))
        loss, gradient = self.loss.loss_and_gradient(encoder.encode_bags(bags), step.generator)
        # Removing fixed common components is a symmetric projection: it maps the gradient back to the bag sums.
        scale, centre = self.regularizer.row_penalty() if self.regularizer is not None else (0.0, None)
        return RowGradient(loss, encoder.embedding.weight, bags, encoder.remove_components(gradient), scale, centre)


@dataclass
class TeacherSentences:
    """Sentences as padded ids with the teacher's vector of each (the prepared ``teacher`` table and array)."""

    ids: torch.Tensor
    lengths: torch.Tensor
    vectors: torch.Tensor

    def draw(self, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``count`` sentences drawn without replacement (seeded by ``generator``): ids, lengths, teacher vectors."""
        rows = torch.randperm(len(self.lengths), generator=generator, device=generator.device)[:count].cpu()
        return self.ids[rows], self.lengths[rows], self.vectors[rows]
