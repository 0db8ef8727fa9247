"""The bilingual model: the base model's averaging encoder over the joint (English + Spanish) word table, trained so
that each Spanish sentence lands on the base model's vector of its English translation."""

from __future__ import annotations

import numpy as np
import torch

from parabit.embedder import SentenceEmbedder
from parabit.objectives import build_objective
from parabit.recipes.bilingual.config import BilingualObjectiveConfig
from parabit.recipes.bilingual.data import load_arrays, load_spec
from parabit.training import PreparedData, Step, TrainingModule

# The squared L2 distance of an encoding to its target vector: what BilDRL fits definitions with, here a Spanish
# sentence's vector against its English translation's.
TARGET_OBJECTIVE = "dictionary_l2"


class BilingualModule(TrainingModule):
    """``forward(batch, step)``: the Spanish sentences of the batch encoded by the student, the weighted squared
    distance to their English targets (``row`` of the prepared ``targets``), plus the weighted pair objective with
    the targets as the (fixed) English side and its negatives from the batch.

    English rows get no gradient at all (a Spanish sentence is read with Spanish words only and the targets are
    constants), so they stay the base model's; the word weights and common components are buffers, never trained."""

    def __init__(self, encoder, spec: dict, targets: np.ndarray, objective: BilingualObjectiveConfig):
        super().__init__()
        self.encoder = encoder
        self.spec = spec
        self.targets = torch.from_numpy(np.ascontiguousarray(targets))  # not a buffer: no checkpoint holds them
        self.target_weight = objective.target
        self.target_loss = build_objective(TARGET_OBJECTIVE)
        self.pair_loss = build_objective(objective.pair, **objective.pair_options) if objective.pair else None
        self.pair_weight = objective.pair_weight

    @classmethod
    def build(cls, prepared: PreparedData, objective: BilingualObjectiveConfig, *, sparse: bool) -> "BilingualModule":
        spec = load_spec(prepared)
        table, weights, components, targets = load_arrays(prepared, "table", "weights", "components", "targets")
        encoder = SentenceEmbedder.build_encoder(spec, sparse=sparse, initial_vectors=torch.from_numpy(table),
                                                 initial_weights=torch.from_numpy(weights))
        with torch.no_grad():
            encoder.components.copy_(torch.from_numpy(components))
        return cls(encoder, spec, targets, objective)

    def forward(self, batch: dict, step: Step):
        student = self.encoder(batch["ids_a"], batch["len_a"])
        if self.targets.device != student.device:
            self.targets = self.targets.to(student.device)
        target = self.targets[batch["row"]]
        parts = {}
        loss = student.new_zeros(())
        if self.target_weight:
            parts["target"] = self.target_loss(student, target)
            loss = loss + self.target_weight * parts["target"]
        if self.pair_loss is not None and self.pair_weight:
            parts["pair"] = self.pair_loss.in_batch(target, student, step.generator)
            loss = loss + self.pair_weight * parts["pair"]
        return loss, parts
