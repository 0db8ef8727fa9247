"""In-batch negative selection: MAX finds the hardest non-partner; nothing ever picks self or partner."""

from __future__ import annotations

import math

import pytest
import torch

from parabit.objectives import gather_negatives, sample_random_negatives, select_negatives


def at(degrees: float) -> list[float]:
    """A unit 2-d vector at the given angle: cosine similarity is then cos(angle difference)."""
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees))]


# Pool = cat([g1, g2]), indices:  0: g1[0]=0deg  1: g1[1]=90deg  2: g1[2]=180deg
#                                  3: g2[0]=5deg  4: g2[1]=20deg  5: g2[2]=100deg
G1 = torch.tensor([at(0), at(90), at(180)])
G2 = torch.tensor([at(5), at(20), at(100)])


def test_max_picks_the_hardest_non_partner():
    t1_index, t2_index = select_negatives(G1, G2, "max")
    # g1[0] (0deg):   partner 5deg excluded (it is the closest); next closest 20deg -> 4
    # g1[1] (90deg):  self and partner 20deg excluded; closest 100deg -> 5
    # g1[2] (180deg): partner 100deg excluded; closest 90deg -> 1
    assert t1_index.tolist() == [4, 5, 1]
    # g2[0] (5deg):   self and partner 0deg excluded; closest 20deg -> 4
    # g2[1] (20deg):  partner 90deg excluded; closest 5deg -> 3
    # g2[2] (100deg): partner 180deg excluded; closest 90deg -> 1
    assert t2_index.tolist() == [4, 3, 1]
    t1, t2 = gather_negatives(G1, G2, t1_index, t2_index)
    assert torch.equal(t1, torch.stack([G2[1], G2[2], G1[1]]))
    assert torch.equal(t2, torch.stack([G2[1], G2[0], G1[1]]))


def test_max_never_picks_self():
    # Pool: 0: g1[0]=0deg  1: g1[1]=60deg  2: g2[0]=180deg  3: g2[1]=240deg. Partners are antipodal and
    # each sentence is most similar to itself (cos 1); the pick is the other sentence 60deg away.
    g1 = torch.tensor([at(0), at(60)])
    g2 = torch.tensor([at(180), at(240)])
    t1_index, t2_index = select_negatives(g1, g2, "max")
    assert t1_index.tolist() == [1, 0]
    assert t2_index.tolist() == [3, 2]


@pytest.mark.parametrize("strategy", ["mix", "rand"])
def test_mix_and_rand_never_pick_self_or_partner(strategy):
    batch_size = 5
    generator = torch.Generator().manual_seed(0)
    g1, g2 = torch.randn(batch_size, 3, generator=generator), torch.randn(batch_size, 3, generator=generator)
    seen = torch.zeros(2 * batch_size, 2 * batch_size, dtype=torch.bool)  # [anchor, candidate]
    for _ in range(200):
        t1_index, t2_index = select_negatives(g1, g2, strategy, generator)
        chosen = torch.cat([t1_index, t2_index])
        seen[torch.arange(2 * batch_size), chosen] = True
    rows = torch.arange(2 * batch_size)
    assert not seen[rows, rows].any()  # self
    assert not seen[rows, (rows + batch_size) % (2 * batch_size)].any()  # partner
    # Every one of the 2B - 2 candidates turns up for every anchor: the draw covers all of them.
    assert seen.sum().item() == 2 * batch_size * (2 * batch_size - 2)


def test_mix_is_max_about_half_the_time():
    generator = torch.Generator().manual_seed(0)
    g1, g2 = torch.randn(50, 4, generator=generator), torch.randn(50, 4, generator=generator)
    hardest = torch.cat(select_negatives(g1, g2, "max"))
    mixed = torch.cat([torch.cat(select_negatives(g1, g2, "mix", generator)) for _ in range(20)])
    share = (mixed == hardest.repeat(20)).float().mean().item()
    # P(max) = 0.5 + 0.5 / 98 (a random pick can hit the hardest too); 2000 draws -> sd ~ 0.011.
    assert 0.45 < share < 0.56


def test_same_generator_seed_same_negatives():
    g1, g2 = torch.randn(6, 3), torch.randn(6, 3)
    first = select_negatives(g1, g2, "mix", torch.Generator().manual_seed(7))
    second = select_negatives(g1, g2, "mix", torch.Generator().manual_seed(7))
    assert all(torch.equal(a, b) for a, b in zip(first, second))


def test_selection_errors():
    with pytest.raises(ValueError, match="max, mix, rand"):
        select_negatives(G1, G2, "hardest")
    with pytest.raises(ValueError, match="at least 2"):
        select_negatives(G1[:1], G2[:1])


def test_random_negatives_never_pick_self_and_cover_all_others():
    generator = torch.Generator().manual_seed(0)
    index = sample_random_negatives(4, 50, generator)  # k > B - 1: drawn with replacement
    assert index.shape == (4, 50) and index.dtype == torch.long
    for row in range(4):
        assert set(index[row].tolist()) == {0, 1, 2, 3} - {row}


def test_random_negatives_need_two_pairs():
    with pytest.raises(ValueError, match="at least 2"):
        sample_random_negatives(1, 3)


def test_max_under_bfloat16_autocast_picks_the_float32_hardest_negative_among_near_ties():
    # Pool: 0: g1[0]=0deg  1: g1[1]=5.6deg  2: g1[2]=4.4deg  3: g2[0]=0.3deg  4: g2[1]=90deg  5: g2[2]=180deg.
    # For g1[0] (its partner 0.3deg excluded) candidates 1 and 2 have cosines 0.9952 and 0.9971: in bfloat16 (steps of
    # 2^-8 below 1) both are 0.9961, and argmax would take the lower index, 1, not the hardest, 2.
    g1, g2 = torch.tensor([at(0), at(5.6), at(4.4)]), torch.tensor([at(0.3), at(90), at(180)])
    exact = select_negatives(g1, g2, "max")
    assert exact[0][0] == 2
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = select_negatives(g1, g2, "max")
    assert [index.tolist() for index in mixed] == [index.tolist() for index in exact]
