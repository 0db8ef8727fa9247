"""The GPU config's training step on a CUDA device (jobs/configs/bilingual_sentences_gpu.yaml: AVG 300-d over a
row-sparse word table, J_bi with 5 random negatives, RowSparseAdam, batch 100), float32 against bfloat16 autocast:
steps per second, the host<->device synchronisations each step makes (CUDA's sync debug mode counts them), and the
mixed-precision guarantees the CPU tests check under CPU autocast, here on CUDA (hardest negatives chosen as in
float32 on near-tied similarities, the dictionary softmax loss at its float32 value, recurrent encoders whose cuDNN
recurrence stays float32).

It uses parabit's own encoder, objectives and optimiser, on token ids prepared here from a real Tatoeba slice
(``--prepare``), and needs no Ray or MLflow (the lent GPU machine's image has neither; the Ray Train path with NCCL
needs a cluster of such machines). Usage:

    .venv/bin/python bench/bench_gpu_step.py --prepare .gpu/pairs.npz            # here, once: the ids to carry
    python3 bench/bench_gpu_step.py --data .gpu/pairs.npz --out result.json      # on the GPU machine
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "platform"))

from parabit.encoders import build_encoder  # noqa: E402
from parabit.objectives import BilingualHingeLoss, DictionarySoftmaxLoss, select_negatives  # noqa: E402


def _row_sparse_adam():
    """parabit.training.row_sparse_adam without parabit.training's package (which imports Ray and MLflow)."""
    path = ROOT / "platform" / "parabit" / "training" / "row_sparse_adam.py"
    spec = importlib.util.spec_from_file_location("row_sparse_adam", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RowSparseAdam


def prepare(path: Path, pairs: int) -> None:
    """Token ids of ``pairs`` Tatoeba en-es pairs, as the pairs recipe prepares them (its vocabulary, 40 tokens)."""
    from parabit.recipes.pairs.config import DataConfig
    from parabit.recipes.pairs.data import prepare_pairs

    prepared = prepare_pairs(DataConfig(sources=("tatoeba",), max_pairs=pairs))
    import pyarrow.parquet as pq

    table = pq.read_table(prepared.pairs_path)
    arrays = {name: np.asarray(table[name].combine_chunks().flatten().to_numpy(zero_copy_only=False)).reshape(
        len(table), -1).astype(np.int32) for name in ("ids_a", "ids_b")}
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays, len_a=np.asarray(table["len_a"]), len_b=np.asarray(table["len_b"]),
                        vocab=np.asarray([len(prepared.vocab)]))
    print(f"{path}: {len(table):,} pairs, vocabulary {len(prepared.vocab):,}")


def steps(data: dict, device: str, precision: str, count: int, warmup: int = 20, sync_steps: int = 30) -> dict:
    """Train ``count`` steps; returns steps per second (after ``warmup``) and host syncs per step."""
    torch.manual_seed(1)
    vocab = int(data["vocab"][0])
    encoder = build_encoder("avg", vocab, 300, sparse=True).to(device)
    loss_fn = BilingualHingeLoss(margin=1.0, distance="euclidean", negatives=5)
    optimiser = _row_sparse_adam()([encoder.embedding.weight], lr=1e-3)
    generator = torch.Generator(device=device).manual_seed(1)
    tensors = {k: torch.from_numpy(np.asarray(data[k], dtype=np.int64)).to(device)
               for k in ("ids_a", "ids_b", "len_a", "len_b")}
    n, batch = len(tensors["len_a"]), 100
    order = torch.randperm(n, device=device)

    def step(i: int) -> torch.Tensor:
        rows = order[(i * batch) % (n - batch):(i * batch) % (n - batch) + batch]
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=precision == "bf16"):
            g1 = encoder(tensors["ids_a"][rows], tensors["len_a"][rows])
            g2 = encoder(tensors["ids_b"][rows], tensors["len_b"][rows])
            loss = loss_fn.in_batch(g1, g2, generator)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        return loss.detach()

    for i in range(warmup):
        step(i)
    synchronize(device)
    started = time.perf_counter()
    for i in range(warmup, warmup + count):
        last = step(i)
    synchronize(device)
    seconds = time.perf_counter() - started
    syncs = None
    if device.startswith("cuda"):
        torch.cuda.set_sync_debug_mode("warn")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(sync_steps):
                step(warmup + count + i)
        torch.cuda.set_sync_debug_mode("default")
        syncs = sum("synchroniz" in str(w.message) for w in caught) / sync_steps
    return {"precision": precision, "steps": count, "seconds": round(seconds, 3),
            "steps_per_s": round(count / seconds, 1), "pairs_per_s": round(count * batch / seconds),
            "host_syncs_per_step": syncs, "final_loss": float(last)}


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def precision_checks(device: str) -> dict:
    """The mixed-precision guarantees, on ``device`` under bfloat16 autocast, against float32."""
    kind = device.split(":")[0]
    torch.manual_seed(0)
    base = torch.nn.functional.normalize(torch.randn(64, 300, device=device), dim=-1)
    # Near ties: sentences that differ from a shared direction by less than bfloat16 resolves near a cosine of 1.
    g1 = base[:1] + 1e-3 * torch.randn(64, 300, device=device)
    g2 = base[:1] + 1e-3 * torch.randn(64, 300, device=device)
    plain = select_negatives(g1, g2, "max")
    with torch.autocast(kind, dtype=torch.bfloat16):
        mixed = select_negatives(g1, g2, "max")
    table = torch.randn(5000, 50, device=device)
    encoded = table[:256] + 0.5 * torch.randn(256, 50, device=device)
    words = torch.arange(256, device=device)
    softmax = DictionarySoftmaxLoss(temperature=0.05)
    exact = float(softmax(encoded, table, words, [(0, 5000)]))
    with torch.autocast(kind, dtype=torch.bfloat16):
        under = float(softmax(encoded, table, words, [(0, 5000)]))
    recurrent = {}
    ids = torch.randint(1, 1000, (32, 20), device=device)
    lengths = torch.randint(1, 21, (32,), device=device)
    for name in ("lstm", "gru", "attentive_gru"):
        encoder = build_encoder(name, 1000, 64, hidden_size=32).to(device).eval()
        with torch.no_grad():
            reference = encoder(ids, lengths)
            with torch.autocast(kind, dtype=torch.bfloat16):
                autocast = encoder(ids, lengths)
        recurrent[name] = {"dtype": str(autocast.dtype),
                           "max_abs_difference": float((autocast.float() - reference).abs().max())}
    return {"hardest_negatives_equal": bool(all(torch.equal(p, m) for p, m in zip(plain, mixed))),
            "dictionary_softmax": {"float32": exact, "bf16_autocast": under,
                                   "relative_difference": abs(under - exact) / abs(exact)},
            "recurrent_under_autocast": recurrent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prepare", type=Path, help="write the token ids of a Tatoeba slice here and stop")
    parser.add_argument("--pairs", type=int, default=20000)
    parser.add_argument("--data", type=Path, default=ROOT / ".gpu" / "pairs.npz")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.prepare:
        prepare(args.prepare, args.pairs)
        return
    data = dict(np.load(args.data))
    result = {"device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu",
              "torch": torch.__version__, "runs": [steps(data, args.device, precision, args.steps)
                                                   for _ in range(args.repeats) for precision in ("fp32", "bf16")],
              "checks": precision_checks(args.device)}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
