"""A worker's data: its shard of each Ray Dataset, held in memory, walked in a seeded order every epoch.

The order of an epoch is drawn from a generator seeded by (seed, epoch, rank), or, when an epoch is a slice of a
stream (``optim.pairs_per_epoch``), from one seeded per pass over the shard: either way a resumed run sees exactly
the batches an uninterrupted one would. Batches are trimmed to their longest sentence; an epoch's widths are read in one
go when it starts (a width is a shape: the host must know it, and on a GPU each read waits for the device).
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import ray.train
import torch

from parabit.training.prepared import arrow_to_tensors

LENGTH_COLUMNS = ("len_a", "len_b")
BUCKET_BATCHES = 50  # batches per chunk that optim.length_buckets sorts by length


def load_shard(name: str, device: torch.device, batch_size: int = 65_536) -> dict[str, torch.Tensor]:
    """This worker's shard of dataset ``name`` as tensors on ``device`` (ids, lengths and any label column)."""
    shard = ray.train.get_dataset_shard(name)
    tables = list(shard.iter_batches(batch_size=batch_size, batch_format="pyarrow"))
    arrays = arrow_to_tensors(pa.concat_tables(tables)) if tables else {}
    return {column: torch.from_numpy(array).to(device) for column, array in arrays.items()}


def epoch_generator(seed: int, epoch: int, rank: int, device: torch.device) -> torch.Generator:
    """Shuffling and negative sampling draw from this; on the data's device, so draws need no host round trip."""
    return torch.Generator(device=device).manual_seed(seed * 1_000_003 + epoch * 1_009 + rank)


def _sides(data: dict[str, torch.Tensor]) -> list[str]:
    return [side for side in ("a", "b") if f"ids_{side}" in data]


def trim(batch: dict[str, torch.Tensor], widths: list[int] | None = None) -> dict[str, torch.Tensor]:
    """Cut each side's ids to the batch's longest sentence on that side (``widths``: those lengths, per side, when
    already read)."""
    sides = _sides(batch)
    if widths is None:
        widths = torch.stack([batch[f"len_{side}"].max() for side in sides]).tolist() if sides else []
    for side, width in zip(sides, widths):
        batch[f"ids_{side}"] = batch[f"ids_{side}"][:, :width]
    return batch


def shuffled_batches(data: dict[str, torch.Tensor], batch_size: int,
                     generator: torch.Generator) -> Iterator[dict[str, torch.Tensor]]:
    """Shuffled batches; a last batch of one row is dropped (in-batch negatives need two)."""
    return batches_in_order(data, shuffled_order(data, generator), batch_size)


def shuffled_order(data: dict[str, torch.Tensor], generator: torch.Generator) -> torch.Tensor:
    """Every row of ``data`` once, in an order drawn from ``generator``."""
    return torch.randperm(len(data["len_a"]), generator=generator, device=generator.device)


def epoch_batches(data: dict[str, torch.Tensor], batch_size: int, generator: torch.Generator, *, seed: int,
                  epoch: int, rank: int, pairs_per_epoch: int | None = None,
                  length_buckets: bool = False) -> Iterator[dict[str, torch.Tensor]]:
    """The batches of (0-based) ``epoch``: those of :func:`shuffled_batches` of the whole shard, or with
    ``pairs_per_epoch`` the epoch's slice of :func:`stream_order` (``generator`` then draws no order); with
    ``length_buckets`` that order regrouped by :func:`length_bucketed` (which draws from ``generator``)."""
    if pairs_per_epoch is None:
        order = shuffled_order(data, generator)
    else:
        order = stream_order(len(data["len_a"]), epoch * pairs_per_epoch, pairs_per_epoch, seed, rank,
                             generator.device)
    if length_buckets:
        order = length_bucketed(data, order, batch_size, generator)
    return batches_in_order(data, order, batch_size)


def length_bucketed(data: dict[str, torch.Tensor], order: torch.Tensor, batch_size: int,
                    generator: torch.Generator) -> torch.Tensor:
    """``order`` regrouped into batches of pairs of similar length: cut into chunks of :data:`BUCKET_BATCHES`
    batches, each chunk sorted by its pairs' longer side and cut into batches, the chunk's whole batches shuffled
    with ``generator`` (so the order stays seeded); the last chunk's part batch stays at the end, where
    :func:`batches_in_order` expects it.

    Why: a batch is trimmed to its longest sentence, and a transformer's cost grows with that width, so batches of
    similar lengths waste less on padding. Why chunks: sorting the whole epoch would make each batch's in-batch
    negatives the pairs of one narrow length band, in an order fixed by length; within a chunk the band spans the
    chunk's lengths and the batch order stays random."""
    lengths = torch.stack([data[column][order] for column in LENGTH_COLUMNS if column in data]).amax(dim=0)
    chunk = batch_size * BUCKET_BATCHES
    parts = []
    for start in range(0, len(order), chunk):
        by_length = order[start:start + chunk][torch.argsort(lengths[start:start + chunk], stable=True)]
        whole = len(by_length) // batch_size * batch_size
        batches = by_length[:whole].view(-1, batch_size)
        shuffled = batches[torch.randperm(len(batches), generator=generator, device=generator.device)]
        parts += [shuffled.flatten(), by_length[whole:]]
    return torch.cat(parts) if parts else order


def stream_order(rows: int, start: int, count: int, seed: int, rank: int, device: torch.device) -> torch.Tensor:
    """Positions ``start .. start + count`` of a worker's endless stream over its ``rows``: pass ``k`` over the shard
    is a permutation seeded by (seed, k, rank), so any epoch's slice is known without replaying the ones before it
    (a resumed run trains exactly the pairs an uninterrupted one would)."""
    if rows == 0:
        return torch.zeros(0, dtype=torch.int64, device=device)
    first, last = start // rows, (start + count - 1) // rows
    passes = [torch.randperm(rows, device=device, generator=torch.Generator(device=device).manual_seed(
        seed * 1_000_003 + 7_919 * (k + 1) + rank * 104_729 + 1)) for k in range(first, last + 1)]
    offset = start - first * rows
    return torch.cat(passes)[offset:offset + count]


def batches_in_order(data: dict[str, torch.Tensor], order: torch.Tensor,
                     batch_size: int) -> Iterator[dict[str, torch.Tensor]]:
    """The rows of ``data`` at ``order``, ``batch_size`` at a time, each batch trimmed to its longest sentences; a last
    batch of one row is dropped (in-batch negatives need two)."""
    rows = len(order)
    batches = steps_per_epoch(rows, batch_size)
    sides = _sides(data)
    widths = [[] for _ in range(batches)]
    if sides and batches:  # every batch's longest sentence per side, in one read: [batches][sides]
        lengths = torch.stack([data[f"len_{side}"][order] for side in sides], dim=1)  # [rows, sides]
        padded = torch.nn.functional.pad(lengths, (0, 0, 0, -rows % batch_size))
        widths = padded.view(-1, batch_size, len(sides)).amax(dim=1)[:batches].tolist()
    # The epoch's rows in order, gathered once: each batch is then a slice (a view), not a gather per tensor per step.
    ordered = {name: tensor[order] for name, tensor in data.items()}
    for index, start in enumerate(range(0, rows, batch_size)[:batches]):
        yield trim({name: tensor[start:start + batch_size] for name, tensor in ordered.items()}, widths[index])


def random_batch(data: dict[str, torch.Tensor], size: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """``size`` rows drawn with replacement (e.g. a bitext batch beside each dictionary batch)."""
    picked = torch.randint(len(data["len_a"]), (size,), generator=generator, device=generator.device)
    return trim({name: tensor[picked] for name, tensor in data.items()})


def steps_per_epoch(rows: int, batch_size: int) -> int:
    full, rest = divmod(rows, batch_size)
    return full + (1 if rest >= 2 else 0)
