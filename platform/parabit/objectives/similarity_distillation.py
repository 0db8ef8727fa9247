"""Similarity distillation: the student's cosine similarities fitted to a teacher's (relational knowledge
distillation). Only similarities are compared, so student and teacher may have any dimensions and spaces."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SimilarityDistillationLoss(nn.Module):
    """``forward(student [B, d], teacher [B, D])``: the mean squared difference between the two ``B × B`` cosine
    matrices, over the ``B(B−1)`` pairs of distinct sentences (a sentence's similarity to itself is 1 in both)."""

    role = "distillation"

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        if len(student) != len(teacher) or len(student) < 2:
            raise ValueError(f"need the same number (≥ 2) of student and teacher vectors, got {len(student)} and "
                             f"{len(teacher)}")
        student, teacher = F.normalize(student, dim=-1), F.normalize(teacher, dim=-1)
        difference = student @ student.T - teacher @ teacher.T
        off_diagonal = ~torch.eye(len(student), dtype=torch.bool, device=student.device)
        return difference[off_diagonal].pow(2).mean()
