"""Host <-> device synchronisations per training step of the kernel, counted on the CPU: what a GPU would wait for.

    .venv/bin/python bench/bench_host_syncs.py [--workers 1 2] [--pairs 2000 4000]

On a GPU, the host waits for the device whenever it reads a value the device computes (``.item()``, ``float(t)``,
``bool(t)``, ``int(t)``, ``.tolist()``, ``.cpu()``, ``.numpy()``), and whenever an operation's output size depends on
the data (a boolean mask, ``nonzero``, ``unique``, coalescing a sparse gradient): each is a point where the device's
queue runs dry. This counts them on a CPU, where they cost nothing, in the real kernel: the GPU job config's model
(``jobs/configs/bilingual_sentences_gpu.yaml``: AVG, J_bi with 5 negatives, row-sparse word table, batch 100) trained
by ``train_loop_per_worker`` under Ray Train on 1 and 2 workers (gloo), on the tests' Tatoeba slice. A recipe of this
file turns the counting on in each worker once its module is built (a torch function mode for the reads,
``.tolist()``/``.cpu()``/``.numpy()``, and a torch dispatch mode for scalar reads and data-dependent shapes) and reports
the running counts of rank 0 with each epoch's dev score (counting paused while it validates). Per step: the counts
of the second epoch of two runs whose epochs differ only in their number of steps (``--pairs``), their difference
divided by the difference in steps, so what each epoch does once (checkpoint, refit) cancels out.

Not counted: reads of the optimisers' step counters (torch keeps them on the host), and host-to-device copies (none
in this step). The counts are exact and the same on every run; they do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from parabit.recipes.pairs.recipe import PairsRecipe

READS = {"tolist", "cpu", "numpy"}  # the host reading a tensor (through the function mode)
SCALAR = "aten._local_scalar_dense"  # .item(), float(), int(), bool() (through the dispatch mode)
SHAPED = {"aten.nonzero", "aten.masked_select", "aten._unique2", "aten.unique_dim", "aten.unique_consecutive",
          "aten._coalesce", "aten.repeat_interleave"}  # outputs whose size depends on the values
MASKED_INDEX = {"aten.index", "aten.index_put", "aten.index_put_"}  # with a boolean mask: a nonzero inside


class SyncCounter(TorchFunctionMode):
    """Counts, by kind, what would make the host wait for a GPU (see the module docstring) while ``on``."""

    def __init__(self):
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.on = True
        counter = self

        class _Dispatch(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if counter.on:
                    counter.dispatched(str(func.overloadpacket), args)
                return func(*args, **(kwargs or {}))

        self.dispatch = _Dispatch()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.on and getattr(func, "__name__", "") in READS:
            self.counts[func.__name__] += 1
        return func(*args, **(kwargs or {}))

    def dispatched(self, op: str, args) -> None:
        if op == SCALAR and not _optimizer_step_counter():
            self.counts["scalar"] += 1
        elif op in SHAPED:
            self.counts[f"shape/{op.removeprefix('aten.').strip('_')}"] += 1
        elif op in MASKED_INDEX and any(_is_mask(arg) for arg in _flat(args)):
            self.counts["shape/boolean_mask"] += 1

    def start(self) -> None:
        """From now on in this thread (Ray Train's training thread), until the process ends."""
        self.__enter__()
        self.dispatch.__enter__()


def _flat(args):
    for arg in args:
        if isinstance(arg, (list, tuple)):
            yield from _flat(arg)
        else:
            yield arg


def _is_mask(value) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype == torch.bool


PLUMBING = (__file__, f"torch{os.sep}utils{os.sep}_python_dispatch", f"torch{os.sep}overrides",
            f"torch{os.sep}_tensor.py")  # frames between a read and the code that asked for it


def _optimizer_step_counter() -> bool:
    """A scalar read made by torch.optim itself: its step counters, which torch keeps on the host."""
    frame = sys._getframe(1)
    while frame is not None and any(part in frame.f_code.co_filename for part in PLUMBING):
        frame = frame.f_back
    return frame is not None and f"torch{os.sep}optim{os.sep}" in frame.f_code.co_filename


COUNTER: SyncCounter | None = None


class CountingRecipe(PairsRecipe):
    """The pairs recipe, counting host syncs in its worker from the module's build on; each epoch's metrics carry
    the counts so far (``syncs/<kind>``), with validation itself not counted."""

    def build_module(self, prepared, *, sparse):
        global COUNTER
        module = super().build_module(prepared, sparse=sparse)
        COUNTER = SyncCounter()
        COUNTER.start()
        return module

    def validate(self, module, prepared):
        COUNTER.on = False
        try:
            metrics = super().validate(module, prepared)
        finally:
            COUNTER.on = True
        return {**metrics, **{f"syncs/{kind}": float(n) for kind, n in COUNTER.counts.items()}}


CountingRecipe.__module__ = "bench_host_syncs"  # what workers import it as (this folder is on their PYTHONPATH)


def count_run(workers: int, pairs: int, scratch: Path) -> tuple[dict[str, float], int]:
    """The second epoch's counts of one run (rank 0), and its steps per epoch."""
    from parabit.config import load_config
    from parabit.evaluation.config import EvaluationConfig
    from parabit.paths import PROJECT_ROOT
    from parabit.recipes.pairs.config import DataConfig, PairsConfig
    from parabit.training import ScalingSettings
    from parabit.training.run import run_training
    from parabit.training.batches import steps_per_epoch
    from tests.conftest import write_tatoeba_slice

    config = load_config(PairsConfig, PROJECT_ROOT / "jobs" / "configs" / "bilingual_sentences_gpu.yaml")
    slice_path = scratch / "slice.parquet"
    if not slice_path.exists():
        write_tatoeba_slice(slice_path)
    config = config.model_copy(update={
        "name": f"host-syncs-{workers}w-{pairs}", "storage_path": str(scratch / "ray_results"),
        "data": DataConfig(condition="pairs_parquet", path=str(slice_path), max_pairs=pairs, max_tokens=40),
        "scaling": ScalingSettings(num_workers=workers, cpus_per_worker=0.45),
        "evaluation": EvaluationConfig(sts_years=(2016,), sick=False, msrp=False),
        "optim": config.optim.model_copy(update={"epochs": 2})})
    config.tracking.register_as = ""
    result = run_training(CountingRecipe(config))
    first, second = ({k: v for k, v in epoch.items() if k.startswith("syncs/")} for epoch in result.history)
    delta = {kind.removeprefix("syncs/"): second[kind] - first.get(kind, 0.0) for kind in second}
    return delta, steps_per_epoch(pairs // workers, config.optim.batch_size)


def describe(kind: str) -> str:
    """A count's name (an MLflow metric name: letters, underscores, slashes) as the results table says it."""
    if kind == "scalar":
        return "scalar read (`.item()`, `float()`, `int()`, `bool()`)"
    if kind.startswith("shape/"):
        return f"data-dependent shape (`{kind.removeprefix('shape/')}`)"
    return f"`.{kind}()`"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--pairs", type=int, nargs=2, default=[2000, 4000])
    parser.add_argument("--label", default="", help="a name for this code version in the printed table")
    args = parser.parse_args()
    from _common import machine_line, table

    from parabit.paths import PROJECT_ROOT
    from parabit.ray_runtime import init_ray

    sys.path.insert(0, str(PROJECT_ROOT))  # the tests' Tatoeba slice, not a copy
    # The workers import this file's recipe by name: this folder on their path (they inherit the environment).
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent),
                                                             os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        # The runs' prepared data and MLflow store are this run's own, thrown away with it (the workers get both).
        os.environ.update(PARABIT_OUTPUT=scratch, MLFLOW_TRACKING_URI=f"sqlite:///{scratch}/mlflow.db")
        init_ray(num_cpus=2)
        for workers in args.workers:
            (small, small_steps), (large, large_steps) = (count_run(workers, n, Path(scratch)) for n in args.pairs)
            for kind in sorted(set(small) | set(large)):
                per_step = (large.get(kind, 0.0) - small.get(kind, 0.0)) / (large_steps - small_steps)
                rows.append([args.label, workers, describe(kind), f"{per_step:g}"])
            total = (sum(large.values()) - sum(small.values())) / (large_steps - small_steps)
            rows.append([args.label, workers, "**all**", f"**{total:g}**"])
    print(table(["code", "workers", "what waits for the device", "per step"], rows))
    print(machine_line())


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
