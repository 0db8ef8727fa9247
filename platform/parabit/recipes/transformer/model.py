"""The transformer recipe's training module: one transformer encodes both sides of each pair, and the loss is the
weighted sum of the configured objectives."""

from __future__ import annotations

import numpy as np
import torch

from parabit.encoders.transformer import TransformerEncoder
from parabit.objectives import build_objective
from parabit.recipes.transformer.config import TransformerConfig
from parabit.recipes.transformer.data import load_teacher_vectors
from parabit.training import PreparedData, Step, TrainingModule


class TransformerModule(TrainingModule):
    """``forward(batch, step)``: the English sides (``ids_a``) and the other sides (``ids_b``) of the batch encoded by
    the one ``encoder``, each objective given what its role takes, the loss their weighted sum (each term reported as
    a part, under its objective's name):

    * ``teacher_target`` (multilingual distillation): both sides' vectors and the teacher's vector of the English
      side (row ``row`` of the prepared teacher vectors, constants);
    * ``ranking`` and ``pair`` (translation ranking, J_bi, J_pa): both sides' vectors, ``in_batch`` with the step's
      seeded generator (their negatives are the batch's other pairs).
    """

    def __init__(self, encoder: TransformerEncoder, terms: list[tuple[str, float, torch.nn.Module]],
                 teacher: np.ndarray | None):
        super().__init__()
        self.encoder = encoder
        self.terms = [(name, weight, loss) for name, weight, loss in terms if weight]
        self.losses = torch.nn.ModuleList([loss for _, _, loss in self.terms])  # moved with the module
        # Not a buffer: constants the checkpoints need not hold (the prepared data has them).
        self.teacher = None if teacher is None else torch.from_numpy(np.ascontiguousarray(teacher))
        missing = [name for name, _, loss in self.terms if loss.role == "teacher_target" and teacher is None]
        if missing:
            raise ValueError(f"objective {missing[0]} needs the teacher's vectors: the prepared data has none")
        if teacher is not None and teacher.shape[1] != encoder.output_dim:
            raise ValueError(f"the teacher's vectors have {teacher.shape[1]} dimensions and the student's "
                             f"{encoder.output_dim}: multilingual distillation fits one to the other, so the "
                             "checkpoint must have the teacher's dimension")

    @classmethod
    def build(cls, config: TransformerConfig, prepared: PreparedData, *, sparse: bool) -> "TransformerModule":
        encoder = TransformerEncoder.from_checkpoint(config.model.checkpoint_path(), sparse=sparse,
                                                     **config.model.encoder_options())
        terms = [(term.name, term.weight, build_objective(term.name, **term.options)) for term in config.objectives]
        return cls(encoder, terms, load_teacher_vectors(prepared) if config.teacher_objectives else None)

    def forward(self, batch: dict, step: Step):
        source = self.encoder(batch["ids_a"], batch["len_a"])
        target = self.encoder(batch["ids_b"], batch["len_b"])
        parts = {}
        loss = source.new_zeros(())
        for name, weight, objective in self.terms:
            if objective.role == "teacher_target":
                if self.teacher.device != source.device:
                    self.teacher = self.teacher.to(source.device)
                parts[name] = objective(source, target, self.teacher[batch["row"]])
            else:
                parts[name] = objective.in_batch(source, target, step.generator)
            loss = loss + weight * parts[name]
        return loss, parts
