"""Relational distillation as distributions: for each sentence of a batch, the student's softmax over its cosine
similarities to the other sentences fitted to the teacher's (Wada et al. 2025's loss, after Hinton et al.'s
temperature-scaled distillation)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from parabit.objectives.cosine import cosine_matrix


class SimilarityKLLoss(nn.Module):
    """``forward(student [B, d], teacher [B, D])``: the mean over sentences of the cross-entropy of the student's
    in-batch similarity distribution ``softmax(cos(s_i, s_j) / temperature)`` (j ≠ i) against the teacher's, i.e.
    the KL divergence up to the teacher's entropy, which no student parameter changes. Only the ranking and spacing of
    similarities matter, not their absolute values (which the squared-difference loss fits). Computed in float32
    under autocast (:func:`~parabit.objectives.cosine.cosine_matrix`): a softmax of near-tied similarities at a low
    temperature needs the precision."""

    role = "distillation"

    def __init__(self, temperature: float = 0.05):
        super().__init__()
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        if len(student) != len(teacher) or len(student) < 2:
            raise ValueError(f"need the same number (≥ 2) of student and teacher vectors, got {len(student)} and "
                             f"{len(teacher)}")
        self_pairs = torch.eye(len(student), dtype=torch.bool, device=student.device)
        student_logits = (cosine_matrix(student, student) / self.temperature).masked_fill(self_pairs, float("-inf"))
        teacher_logits = (cosine_matrix(teacher, teacher) / self.temperature).masked_fill(self_pairs, float("-inf"))
        target = F.softmax(teacher_logits, dim=-1)
        log_predicted = F.log_softmax(student_logits, dim=-1).masked_fill(self_pairs, 0.0)
        return -(target * log_predicted).sum(dim=-1).mean()
