"""Length-bucketed batches (``optim.length_buckets``): on real Tatoeba sentence lengths an epoch still trains every pair
exactly once, with less padding than the shuffled order's batches, in an order its seed decides; off, an epoch's
batches are the shuffled order's, as before."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import torch

from parabit.training.batches import BUCKET_BATCHES, epoch_batches, shuffled_batches

BATCH = 16


@pytest.fixture(scope="module")
def tatoeba_lengths(tatoeba_slice) -> dict[str, torch.Tensor]:
    """The 4,000 Tatoeba pairs of the slice as a shard: their word counts per side, ids padded to the longest, each
    pair's position as its ids' first column (so a batch says which pairs it holds)."""
    table = pq.read_table(tatoeba_slice)
    shard = {f"len_{side}": torch.tensor([len(text.split()) for text in table[f"text_{side}"].to_pylist()])
             for side in ("a", "b")}
    rows, width = len(shard["len_a"]), int(max(shard["len_a"].max(), shard["len_b"].max()))
    for side in ("a", "b"):
        shard[f"ids_{side}"] = torch.arange(rows).unsqueeze(1).expand(rows, width).clone()
    return shard


def _epoch(shard, length_buckets: bool, seed: int = 0, **options) -> list[dict]:
    return list(epoch_batches(shard, BATCH, torch.Generator().manual_seed(seed), seed=1, epoch=0, rank=0,
                              length_buckets=length_buckets, **options))


def _rows(batches: list[dict]) -> list[int]:
    return [row for batch in batches for row in batch["ids_a"][:, 0].tolist()]


def _padding(batches: list[dict]) -> float:
    """Mean padded positions per pair: each side's batch width times its pairs, less their words."""
    padded = sum(batch[f"ids_{side}"].shape[1] * len(batch["len_a"]) - int(batch[f"len_{side}"].sum())
                 for batch in batches for side in ("a", "b"))
    return padded / sum(len(batch["len_a"]) for batch in batches)


def test_every_pair_is_trained_once_an_epoch_in_full_batches(tatoeba_lengths):
    rows = len(tatoeba_lengths["len_a"])
    assert rows % BATCH == 0 and rows > 2 * BATCH * BUCKET_BATCHES  # several chunks
    batches = _epoch(tatoeba_lengths, length_buckets=True)
    assert sorted(_rows(batches)) == list(range(rows))
    assert {len(batch["len_a"]) for batch in batches} == {BATCH}


def test_a_part_batch_stays_last_and_a_streamed_slice_is_bucketed_too(tatoeba_lengths):
    batches = _epoch(tatoeba_lengths, length_buckets=True, pairs_per_epoch=BATCH * 70 + 5)
    assert [len(batch["len_a"]) for batch in batches] == [BATCH] * 70 + [5]
    assert len(set(_rows(batches))) == BATCH * 70 + 5
    assert _padding(batches) < _padding(_epoch(tatoeba_lengths, length_buckets=False, pairs_per_epoch=BATCH * 70 + 5))


def test_bucketed_batches_pad_less_than_shuffled_ones(tatoeba_lengths):
    bucketed, shuffled = _padding(_epoch(tatoeba_lengths, True)), _padding(_epoch(tatoeba_lengths, False))
    assert bucketed < shuffled / 3, (bucketed, shuffled)


def test_the_bucketed_order_is_seeded_and_its_batches_are_shuffled(tatoeba_lengths):
    first = _rows(_epoch(tatoeba_lengths, True, seed=0))
    assert first == _rows(_epoch(tatoeba_lengths, True, seed=0))  # a resumed epoch: the same batches
    assert first != _rows(_epoch(tatoeba_lengths, True, seed=1))
    # Within a chunk the batches are not in length order: the widths of its first batches go up and down.
    widths = [max(batch["ids_a"].shape[1], batch["ids_b"].shape[1])
              for batch in _epoch(tatoeba_lengths, True)[:BUCKET_BATCHES]]
    assert widths != sorted(widths)


def test_off_the_epoch_is_the_shuffled_order_as_before(tatoeba_lengths):
    ours, theirs = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    off = list(epoch_batches(tatoeba_lengths, BATCH, ours, seed=1, epoch=0, rank=0))
    before = list(shuffled_batches(tatoeba_lengths, BATCH, theirs))  # what an epoch was before length buckets
    assert len(off) == len(before)
    for mine, old in zip(off, before):
        assert all(torch.equal(mine[name], old[name]) for name in old)
    assert torch.equal(ours.get_state(), theirs.get_state())  # the steps' own draws (negatives) unchanged too
