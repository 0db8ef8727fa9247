"""Choosing negatives from within a batch of encoded pairs ``(g1[i], g2[i])``.

* :func:`select_negatives` for J_pa (Wieting et al. 2016): one negative per sentence, chosen among the
  batch's encodings of both sides.
* :func:`sample_random_negatives` for J_bi: k random other pairs of the batch per pair. Drawing from the
  batch is the cheap option; a trainer that wants negatives from a larger pool can encode sentences from
  that pool instead and pass them to :class:`~parabit.objectives.bilingual_hinge.BilingualHingeLoss`
  directly, which only sees encodings ``[B, k, D]``.

Indices are drawn with the given ``torch.Generator`` (on whatever device it lives), so runs reproduce.
"""

from __future__ import annotations

import torch

from parabit.objectives.cosine import cosine_matrix

STRATEGIES = ("max", "mix", "rand")


def _random_below(high: int, shape: tuple[int, ...], generator: torch.Generator | None, device) -> torch.Tensor:
    """Uniform integers in ``[0, high)`` drawn on the generator's device, returned on ``device``."""
    draw_device = generator.device if generator is not None else device
    return torch.randint(high, shape, generator=generator, device=draw_device).to(device)


def _skip_excluded(draws: torch.Tensor, excluded: torch.Tensor) -> torch.Tensor:
    """Map draws from ``[0, n - m)`` onto ``[0, n)`` minus ``m`` excluded values, keeping uniformity.

    ``draws [N, ...]``; ``excluded [N, m]``, each row sorted ascending and distinct. Stepping over each
    excluded value in increasing order is a bijection onto the allowed values.
    """
    for column in range(excluded.size(1)):
        value = excluded[:, column].view(-1, *([1] * (draws.dim() - 1)))
        draws = draws + (draws >= value).long()
    return draws


def select_negatives(
    g1: torch.Tensor,
    g2: torch.Tensor,
    strategy: str = "max",
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Indices of one negative per sentence, ``(t1_index [B], t2_index [B])``, into ``torch.cat([g1, g2])``.

    ``g1, g2``: FloatTensor[B, D], ``B >= 2``, where ``(g1[i], g2[i])`` are paraphrases. The candidates
    of ``g1[i]`` are all 2B encodings of the batch except ``g1[i]`` itself (pool index ``i``) and its
    partner ``g2[i]`` (index ``B + i``); the same two are excluded for ``g2[i]``.

    * ``"max"``: the candidate most cosine-similar to the sentence (the hardest negative; similarities in float32
      under autocast, :func:`~parabit.objectives.cosine.cosine_matrix`).
    * ``"rand"``: a uniformly random candidate.
    * ``"mix"``: for each of the 2B sentences independently, "max" with probability 0.5, else "rand".

    Selection is not differentiable and runs under ``no_grad``; use :func:`gather_negatives` to get the
    negatives' encodings, through which gradients do flow.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    if g1.shape != g2.shape or g1.dim() != 2:
        raise ValueError(f"g1 and g2 must both be [B, D]; got {tuple(g1.shape)} and {tuple(g2.shape)}")
    batch_size = g1.size(0)
    if batch_size < 2:
        raise ValueError("in-batch negatives need a batch of at least 2 pairs")
    size, device = 2 * batch_size, g1.device
    with torch.no_grad():
        rows = torch.arange(size, device=device)
        partner = (rows + batch_size) % size
        excluded = torch.stack([torch.minimum(rows, partner), torch.maximum(rows, partner)], dim=1)
        if strategy != "rand":
            pool = torch.cat([g1, g2])
            similarity = cosine_matrix(pool, pool)  # float32 under autocast: near-ties stay apart
            similarity[rows, rows] = float("-inf")
            similarity[rows, partner] = float("-inf")
            hardest = similarity.argmax(dim=1)
        if strategy != "max":
            random = _skip_excluded(_random_below(size - 2, (size,), generator, device), excluded)
        if strategy == "max":
            chosen = hardest
        elif strategy == "rand":
            chosen = random
        else:
            coin = _random_below(2, (size,), generator, device).bool()
            chosen = torch.where(coin, hardest, random)
    return chosen[:batch_size], chosen[batch_size:]


def gather_negatives(
    g1: torch.Tensor, g2: torch.Tensor, t1_index: torch.Tensor, t2_index: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The encodings ``(t1 [B, D], t2 [B, D])`` that :func:`select_negatives`' indices point to."""
    pool = torch.cat([g1, g2])
    return pool[t1_index], pool[t2_index]


def sample_random_negatives(
    batch_size: int,
    k: int,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """LongTensor[batch_size, k]: for each pair, k indices of other pairs of the batch (never its own).

    Uniform over the ``batch_size - 1`` others, with replacement (so ``k`` may exceed ``batch_size - 1``).
    For J_bi take ``n1 = g1[index]`` and ``n2 = g2[index]`` (both ``[B, k, D]``).
    """
    if batch_size < 2:
        raise ValueError("in-batch negatives need a batch of at least 2 pairs")
    device = torch.device(device) if device is not None else torch.device("cpu")
    draws = _random_below(batch_size - 1, (batch_size, k), generator, device)
    # Pair b's draws from [0, B - 1) step over b itself (what _skip_excluded does for one excluded value per row).
    return draws + (draws >= torch.arange(batch_size, device=device).unsqueeze(1))
