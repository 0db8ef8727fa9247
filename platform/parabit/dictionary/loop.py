"""The per-worker BilDRL training loop run by Ray Train's ``TorchTrainer``.

Definitions and their words come as the training core's pair layout (``ids_a`` definition, ``ids_b`` the word's
row), batched by :func:`parabit.training.loop._batches`. The loss is the dictionary L2 loss onto the (frozen) word
vectors; with joint learning the word table is trained too and each step adds ``skipgram_weight`` × skip-gram on
both sides of a random bitext batch and ``alignment_weight`` × their bag-of-words alignment loss.
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import ray.train
import ray.train.torch
import torch
from torch import nn

from parabit.config import from_dict
from parabit.dictionary.config import DictionaryTrainConfig
from parabit.dictionary.model import DefinitionEncoder
from parabit.dictionary.prepare import load_prepared_space
from parabit.objectives.bow_alignment import BagOfWordsAlignmentLoss
from parabit.objectives.dictionary_l2 import DictionaryL2Loss
from parabit.objectives.skipgram import SkipGramLoss
from parabit.training.checkpointing import report_with_checkpoint, restore, training_state
from parabit.training.data import arrow_to_tensors
from parabit.training.loop import _batches, _epoch_generator
from parabit.training.model import build_optimizers


class DictionaryObjective(nn.Module):
    """The whole BilDRL loss in one forward call (as DDP wants): dictionary L2, plus the joint terms if any."""

    def __init__(self, model: DefinitionEncoder, config: DictionaryTrainConfig, language_ranges: dict):
        super().__init__()
        self.model = model
        self.config = config
        self.dictionary = DictionaryL2Loss()
        self.ranges = language_ranges
        if config.joint.enabled:
            vocab_size, dim = model.word_vectors().shape
            self.skipgram = SkipGramLoss(vocab_size, dim, config.joint.window, config.joint.negatives)
            self.alignment = BagOfWordsAlignmentLoss()

    def forward(self, batch: dict, bitext: dict | None, generator: torch.Generator) -> tuple[torch.Tensor, dict]:
        table = self.model.word_vectors()
        encoded = self.model(batch["ids_a"], batch["len_a"])
        loss = self.dictionary(encoded, table[batch["ids_b"][:, 0]])
        parts = {"dictionary_loss": float(loss.detach())}
        if bitext is not None:
            joint = self.config.joint
            skipgram = (self.skipgram(table, bitext["ids_a"], bitext["len_a"], *self.ranges["en"], generator)
                        + self.skipgram(table, bitext["ids_b"], bitext["len_b"], *self.ranges["foreign"], generator))
            alignment = self.alignment(table, bitext["ids_a"], bitext["len_a"], bitext["ids_b"], bitext["len_b"])
            loss = loss + joint.skipgram_weight * skipgram + joint.alignment_weight * alignment
            parts.update(skipgram_loss=float(skipgram.detach()), alignment_loss=float(alignment.detach()))
        return loss, parts


def _shard(name: str) -> dict[str, torch.Tensor]:
    tables = list(ray.train.get_dataset_shard(name).iter_batches(batch_size=65_536, batch_format="pyarrow"))
    return {k: torch.from_numpy(v) for k, v in arrow_to_tensors(pa.concat_tables(tables)).items()}


def _bitext_batch(bitext: dict, size: int, generator: torch.Generator) -> dict:
    rows = torch.randint(len(bitext["len_a"]), (size,), generator=generator, device=generator.device)
    batch = {name: tensor[rows] for name, tensor in bitext.items()}
    for side in ("a", "b"):
        batch[f"ids_{side}"] = batch[f"ids_{side}"][:, :int(batch[f"len_{side}"].max())]
    return batch


def dictionary_loop_per_worker(loop_config: dict) -> None:
    """Ray Train entry point; ``loop_config``: ``config`` (a DictionaryTrainConfig as a dict), ``prepared_dir``."""
    config = from_dict(DictionaryTrainConfig, loop_config["config"])
    space = load_prepared_space(Path(loop_config["prepared_dir"]))
    rank = ray.train.get_context().get_world_rank()
    device = ray.train.torch.get_device()
    torch.manual_seed(config.seed)
    model = DefinitionEncoder(config.model, torch.from_numpy(space.vectors), train_words=config.joint.enabled)
    ranges = {"en": space.language_range("en"), "foreign": space.language_range(config.language)}
    # Checkpointed whole (not just ``model``): with joint learning the skip-gram context table trains too.
    whole = DictionaryObjective(model, config, ranges)
    objective = ray.train.torch.prepare_model(whole)
    optimizers = build_optimizers(objective, config.optim)

    start_epoch, history = 0, []
    state = restore(whole, optimizers, loop_config)
    if state is not None:
        start_epoch, history = state["epoch"], list(state["history"])

    data = {k: v.to(device) for k, v in _shard("train").items()}
    bitext = {k: v.to(device) for k, v in _shard("bitext").items()} if config.joint.enabled else None
    for epoch in range(start_epoch, config.optim.epochs):
        objective.train()
        generator = _epoch_generator(config.seed, epoch, rank, device)
        started, seen, totals = time.perf_counter(), 0, {}
        for batch in _batches(data, config.optim.batch_size, generator):
            joint_batch = _bitext_batch(bitext, config.optim.batch_size, generator) if bitext is not None else None
            loss, parts = objective(batch, joint_batch, generator)
            for optimizer in optimizers:
                optimizer.zero_grad(set_to_none=True)
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
            size = len(batch["len_a"])
            seen += size
            for key, value in {"loss": float(loss.detach()), **parts}.items():
                totals[key] = totals.get(key, 0.0) + value * size
        metrics = {"epoch": epoch + 1, **{k: v / max(seen, 1) for k, v in totals.items()},
                   "epoch_seconds": time.perf_counter() - started}
        history.append(metrics)
        if rank == 0:
            print(f"[{config.name}] epoch {epoch + 1}/{config.optim.epochs} loss {metrics['loss']:.4f} "
                  f"({metrics['epoch_seconds']:.1f} s)", flush=True)
            report_with_checkpoint(metrics, training_state(whole, optimizers, epoch=epoch + 1, history=history))
        else:
            ray.train.report(metrics)
