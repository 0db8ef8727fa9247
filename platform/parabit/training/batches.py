"""A worker's data: its shard of each Ray Dataset, held in memory, walked in a seeded order every epoch.

The order of an epoch is drawn from a generator seeded by (seed, epoch, rank): a resumed run sees exactly the
batches an uninterrupted one would. Batches are trimmed to their longest sentence.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import ray.train
import torch

from parabit.training.prepared import arrow_to_tensors

LENGTH_COLUMNS = ("len_a", "len_b")


def load_shard(name: str, device: torch.device, batch_size: int = 65_536) -> dict[str, torch.Tensor]:
    """This worker's shard of dataset ``name`` as tensors on ``device`` (ids, lengths and any label column)."""
    shard = ray.train.get_dataset_shard(name)
    tables = list(shard.iter_batches(batch_size=batch_size, batch_format="pyarrow"))
    arrays = arrow_to_tensors(pa.concat_tables(tables)) if tables else {}
    return {column: torch.from_numpy(array).to(device) for column, array in arrays.items()}


def epoch_generator(seed: int, epoch: int, rank: int, device: torch.device) -> torch.Generator:
    """Shuffling and negative sampling draw from this; on the data's device, so draws need no host round trip."""
    return torch.Generator(device=device).manual_seed(seed * 1_000_003 + epoch * 1_009 + rank)


def trim(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Cut each side's ids to the batch's longest sentence on that side."""
    for side in ("a", "b"):
        if f"ids_{side}" in batch:
            batch[f"ids_{side}"] = batch[f"ids_{side}"][:, :int(batch[f"len_{side}"].max())]
    return batch


def shuffled_batches(data: dict[str, torch.Tensor], batch_size: int,
                     generator: torch.Generator) -> Iterator[dict[str, torch.Tensor]]:
    """Shuffled batches; a last batch of one row is dropped (in-batch negatives need two)."""
    rows = len(data["len_a"])
    order = torch.randperm(rows, generator=generator, device=generator.device)
    for start in range(0, rows, batch_size):
        picked = order[start:start + batch_size]
        if len(picked) < 2:
            break
        yield trim({name: tensor[picked] for name, tensor in data.items()})


def random_batch(data: dict[str, torch.Tensor], size: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """``size`` rows drawn with replacement (e.g. a bitext batch beside each dictionary batch)."""
    picked = torch.randint(len(data["len_a"]), (size,), generator=generator, device=generator.device)
    return trim({name: tensor[picked] for name, tensor in data.items()})


def steps_per_epoch(rows: int, batch_size: int) -> int:
    full, rest = divmod(rows, batch_size)
    return full + (1 if rest >= 2 else 0)
