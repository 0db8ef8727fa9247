"""Similarity distillation: zero exactly when the student's cosines equal the teacher's, whatever the spaces."""

from __future__ import annotations

import pytest
import torch

from parabit.objectives import SimilarityDistillationLoss, build_objective


def test_the_loss_is_zero_for_a_student_with_the_teachers_similarities_in_another_space():
    teacher = torch.randn(12, 384, generator=torch.Generator().manual_seed(0))
    rotation, _ = torch.linalg.qr(torch.randn(384, 384, generator=torch.Generator().manual_seed(1)))
    student = 3.0 * teacher @ rotation  # another basis and scale: the same cosines
    assert float(SimilarityDistillationLoss()(student, teacher)) == pytest.approx(0.0, abs=1e-10)


def test_the_loss_is_the_mean_squared_cosine_difference_over_distinct_pairs_and_its_gradient_closes_it():
    teacher = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    student = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], requires_grad=True)
    # cosines: teacher (0,1)=0, (0,2)=.7071, (1,2)=.7071; student (0,1)=1, (0,2)=0, (1,2)=0.
    expected = (1.0 ** 2 + 0.7071068 ** 2 + 0.7071068 ** 2) * 2 / 6
    loss = build_objective("similarity_distillation")(student, teacher)
    assert float(loss.detach()) == pytest.approx(expected, rel=1e-5)
    loss.backward()
    with torch.no_grad():
        stepped = student - 0.1 * student.grad
    assert float(SimilarityDistillationLoss()(stepped, teacher)) < loss.item()


def test_the_loss_needs_matching_batches_of_two_or_more():
    with pytest.raises(ValueError, match="same number"):
        SimilarityDistillationLoss()(torch.randn(3, 4), torch.randn(2, 4))
