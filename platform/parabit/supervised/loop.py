"""The per-worker loop of supervised Siamese training, run by Ray Train's ``TorchTrainer``.

Like :mod:`parabit.training.loop`: each worker pulls its shard of the training split once, walks it in an order
seeded by (seed, epoch, rank), and rank 0 scores the dev split after every epoch, logs to MLflow and checkpoints.
Here the checkpoint also carries the best-on-dev encoder so far (``embedder/``), which is the model the driver tests,
and for MSRP the decision threshold chosen on dev.
"""

from __future__ import annotations

import copy
import time
from functools import partial
from pathlib import Path

import pyarrow as pa
import ray.train
import ray.train.torch
import torch

from parabit.config import from_dict
from parabit.embedder import SentenceEmbedder
from parabit.supervised.config import SiameseConfig
from parabit.supervised.data import labelled_tensors, read_split
from parabit.supervised.metrics import best_threshold, dev_score, task_scores
from parabit.supervised.model import build_head, build_siamese_encoder, predict_pairs
from parabit.tracking.run_tracker import RunTracker
from parabit.training.data import _load_prepared
from parabit.training.checkpointing import EMBEDDER_DIR, report_with_checkpoint, restore, training_state
from parabit.training.loop import _batches, _epoch_generator
from parabit.training.model import PairModel, build_optimizers


def _load_shard() -> dict[str, torch.Tensor]:
    shard = ray.train.get_dataset_shard("train")
    table = pa.concat_tables(list(shard.iter_batches(batch_size=65_536, batch_format="pyarrow")))
    return {name: torch.from_numpy(array) for name, array in labelled_tensors(table).items()}


def _save_embedder(folder: Path, encoder_state: dict, spec, prepared) -> None:
    """The best-on-dev encoder as an embedder: the model the driver tests and registers."""
    encoder = SentenceEmbedder.build_encoder(spec)
    encoder.load_state_dict(encoder_state)
    SentenceEmbedder(encoder, spec, prepared.vocab, prepared.tokenizer, prepared.lang_a,
                     prepared.max_tokens).save(folder / EMBEDDER_DIR)


def siamese_loop_per_worker(loop_config: dict) -> None:
    """Ray Train entry point; ``loop_config`` as for :func:`parabit.training.loop.train_loop_per_worker`."""
    config = from_dict(SiameseConfig, loop_config["config"])
    task = config.data.task
    prepared = _load_prepared(Path(loop_config["prepared_dir"]))
    context = ray.train.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    device = ray.train.torch.get_device()

    torch.manual_seed(config.seed)
    encoder, spec, found = build_siamese_encoder(config, prepared.vocab)
    model = ray.train.torch.prepare_model(PairModel(encoder))
    head = build_head(config).to(device)
    optimizers = build_optimizers(model, config.optim)
    parameters = [p for p in model.parameters() if p.requires_grad]

    start_epoch, history, resumes = 0, [], 0
    best = {"dev_score": float("-inf"), "epoch": 0, "state": None, "threshold": None}
    state = restore(encoder, optimizers, loop_config)
    if state is not None:
        start_epoch, history, resumes, best = state["epoch"], list(state["history"]), state["resumes"] + 1, state["best"]

    data = {name: tensor.to(device) for name, tensor in _load_shard().items()}
    dev = {k: torch.from_numpy(v).to(device) for k, v in read_split(prepared, "dev").items()} if rank == 0 else None
    tracker = None
    if rank == 0 and loop_config.get("mlflow_run_id"):
        tracker = RunTracker(config.tracking.experiment, config.name, run_id=loop_config["mlflow_run_id"],
                             uri=loop_config.get("tracking_uri"))
        tracker.log_metrics({f"init/words_covered_{lang}": count for lang, count in found.items()})

    for epoch in range(start_epoch, config.optim.epochs):
        model.train()
        generator = _epoch_generator(config.seed, epoch, rank, device)
        started = time.perf_counter()
        total_loss, seen = 0.0, 0
        for batch in _batches(data, config.optim.batch_size, generator):
            h_a, h_b = model(batch["ids_a"], batch["len_a"], batch["ids_b"], batch["len_b"])
            loss = head(h_a, h_b, batch["label"])
            for optimizer in optimizers:
                optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, config.clip_norm)
            for optimizer in optimizers:
                optimizer.step()
            total_loss += float(loss.detach()) * len(batch["len_a"])
            seen += len(batch["len_a"])
        seconds = time.perf_counter() - started
        metrics = {"epoch": epoch + 1, "loss": total_loss / max(seen, 1), "epoch_seconds": seconds,
                   "pairs_per_second": seen * world / max(seconds, 1e-9), "workers": world, "resumes": resumes}
        if rank != 0:
            ray.train.report(metrics)
            continue
        predicted = predict_pairs(encoder, head, dev)
        gold = dev["label"].cpu().numpy()
        scores = task_scores(task, predicted, gold)
        metrics.update({f"dev/{k}": v for k, v in scores.items()})
        metrics["dev_score"] = dev_score(task, scores)
        if metrics["dev_score"] > best["dev_score"]:
            best = {"dev_score": metrics["dev_score"], "epoch": epoch + 1,
                    "state": copy.deepcopy({k: v.detach().cpu() for k, v in encoder.state_dict().items()}),
                    "threshold": best_threshold(predicted, gold) if task == "msrp" else None}
        metrics["best_epoch"], metrics["best_dev_score"] = best["epoch"], best["dev_score"]
        history.append(metrics)
        if tracker is not None:
            tracker.log_metrics(metrics, step=epoch + 1)
            tracker.flush()
        print(f"[{config.name}] epoch {epoch + 1}/{config.optim.epochs} loss {metrics['loss']:.4f} "
              f"dev {metrics['dev_score']:.4f} (best {best['dev_score']:.4f} @ {best['epoch']}; {seconds:.1f} s)",
              flush=True)
        report_with_checkpoint(metrics, training_state(encoder, optimizers, epoch=epoch + 1, history=history,
                                                       resumes=resumes, best=best),
                               partial(_save_embedder, encoder_state=best["state"], spec=spec, prepared=prepared))
