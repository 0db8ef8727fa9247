"""Multilingual distillation: the sum of both sides' mean squared errors to the teacher, computed in float32; on real
Tatoeba pairs with the packaged all-MiniLM-L6-v2 as both student and teacher, the English term starts at zero and a
few steps bring the Spanish sentences towards the teacher's English vectors, on pairs the steps never saw."""

from __future__ import annotations

import pytest
import torch

from parabit.objectives import MultilingualDistillationLoss, build_objective

from .transformer_support import encode, packaged_student, tatoeba_pairs, teacher_vectors


def test_the_loss_is_both_sides_mean_squared_error_to_the_teacher():
    generator = torch.Generator().manual_seed(0)
    source, target, teacher = (torch.randn(5, 7, generator=generator) for _ in range(3))
    expected = ((source - teacher) ** 2).mean() + ((target - teacher) ** 2).mean()
    loss = build_objective("multilingual_distillation")(source, target, teacher)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    assert MultilingualDistillationLoss()(teacher, teacher, teacher).item() == 0.0
    half = MultilingualDistillationLoss()(source.bfloat16(), target.bfloat16(), teacher)
    assert half.dtype == torch.float32


def test_the_teacher_is_a_constant():
    source = torch.randn(3, 4, requires_grad=True)
    teacher = torch.randn(3, 4, requires_grad=True)
    MultilingualDistillationLoss()(source, source, teacher).backward()
    assert source.grad is not None and teacher.grad is None


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="one shape"):
        MultilingualDistillationLoss()(torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 5))


# Slow (~30 s on 2 cores): loads the packaged model twice (student and teacher) and trains a few steps.
@pytest.mark.slow
def test_on_real_pairs_the_english_term_starts_at_zero_and_training_moves_spanish_to_the_teacher():
    english, spanish = tatoeba_pairs(48)
    student = packaged_student()
    loss_fn = MultilingualDistillationLoss()
    teacher = teacher_vectors(english)
    with torch.no_grad():
        start_english = torch.nn.functional.mse_loss(encode(student, english), teacher).item()
        held_out = torch.nn.functional.mse_loss(encode(student, spanish[32:]), teacher[32:]).item()
    assert start_english < 1e-9  # the student is the teacher, to float rounding
    optimizer = torch.optim.Adam([p for p in student.parameters() if p.requires_grad], lr=5e-5)
    for step in range(6):
        rows = slice(16 * (step % 2), 16 * (step % 2) + 16)
        loss = loss_fn(encode(student, english[rows]), encode(student, spanish[rows]), teacher[rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        after = torch.nn.functional.mse_loss(encode(student, spanish[32:]), teacher[32:]).item()
    assert after < held_out, (held_out, after)  # on the 16 pairs no step saw
