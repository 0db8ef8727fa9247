"""Multilingual knowledge distillation (Reimers & Gurevych 2020): a student learns to put a sentence and its
translation where the teacher puts the (English) sentence."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MultilingualDistillationLoss(nn.Module):
    """``forward(source [B, D], target [B, D], teacher [B, D]) -> scalar``: ``MSE(source, teacher) + MSE(target,
    teacher)``, each the mean squared difference over the batch and the dimensions (as ``nn.MSELoss`` and
    sentence-transformers' ``MSELoss``), where ``source[b]`` is the student's vector of an English sentence,
    ``target[b]`` the student's vector of its translation and ``teacher[b]`` the teacher's vector of the English
    sentence (a constant: the teacher is not trained). The student and the teacher must share one space (the same
    dimension; a student started from the teacher's checkpoint starts with the first term at zero). Computed in
    float32."""

    role = "teacher_target"

    def forward(self, source: torch.Tensor, target: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        if not source.shape == target.shape == teacher.shape:
            raise ValueError(f"student and teacher vectors must have one shape; got {tuple(source.shape)}, "
                             f"{tuple(target.shape)} and teacher {tuple(teacher.shape)}")
        teacher = teacher.detach().float()
        return F.mse_loss(source.float(), teacher) + F.mse_loss(target.float(), teacher)
