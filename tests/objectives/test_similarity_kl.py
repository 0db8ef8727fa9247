"""The relational KL distillation loss: each sentence's softmax over its similarities to the others, the student's
fitted to the teacher's; its minimum is where the student's similarities are the teacher's, whatever the spaces."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from parabit.objectives import OBJECTIVES, SimilarityKLLoss, build_objective


def _manual(student: torch.Tensor, teacher: torch.Tensor, temperature: float) -> torch.Tensor:
    s, t = F.normalize(student, dim=-1), F.normalize(teacher, dim=-1)
    total = 0.0
    for i in range(len(s)):
        others = [j for j in range(len(s)) if j != i]
        target = F.softmax(torch.stack([t[i] @ t[j] for j in others]) / temperature, dim=0)
        predicted = F.log_softmax(torch.stack([s[i] @ s[j] for j in others]) / temperature, dim=0)
        total = total - (target * predicted).sum()
    return total / len(s)


def test_the_loss_is_the_mean_cross_entropy_of_in_batch_similarity_distributions():
    torch.manual_seed(0)
    student, teacher = torch.randn(7, 5), torch.randn(7, 9)
    loss = SimilarityKLLoss(temperature=0.1)(student, teacher)
    assert torch.allclose(loss, _manual(student, teacher, 0.1), atol=1e-5)
    assert OBJECTIVES["similarity_kl"] is SimilarityKLLoss and SimilarityKLLoss.role == "distillation"


def test_it_is_least_when_the_students_similarities_are_the_teachers_and_trains_towards_them():
    torch.manual_seed(1)
    teacher = torch.randn(16, 12)
    rotation, _ = torch.linalg.qr(torch.randn(12, 12))
    loss = build_objective("similarity_kl", temperature=0.05)
    same = loss(teacher @ rotation, teacher)  # another space, the same similarities
    assert same < loss(torch.randn(16, 12), teacher)
    student = torch.randn(16, 12, requires_grad=True)
    optimiser = torch.optim.Adam([student], lr=0.05)
    first = loss(student, teacher).item()
    for _ in range(200):
        optimiser.zero_grad()
        loss(student, teacher).backward()
        optimiser.step()
    assert loss(student, teacher).item() < first and loss(student, teacher).item() - float(same) < 0.1 * (first - float(same))


def test_under_bfloat16_autocast_it_is_computed_in_float32():
    torch.manual_seed(2)
    student, teacher = torch.randn(32, 8), torch.randn(32, 8)
    exact = SimilarityKLLoss()(student, teacher)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = SimilarityKLLoss()(student, teacher)
    assert mixed.dtype == torch.float32 and torch.allclose(mixed, exact, rtol=1e-6)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="temperature must be positive"):
        SimilarityKLLoss(temperature=0.0)
    with pytest.raises(ValueError, match="same number"):
        SimilarityKLLoss()(torch.randn(3, 2), torch.randn(4, 2))
