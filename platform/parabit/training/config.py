"""The configuration every training recipe shares: optimiser, scaling, tracking, and the run's identity.

A recipe's config (``PairsConfig``, ``SiameseConfig``, ``BilDRLConfig``) derives from :class:`TrainingConfig` and adds
its own sections (data, model, objective, ...). Each field's default lives here, once; a recipe may give a section a
different default (Siamese trains 20 epochs at batch 64) by redeclaring the field. (Named apart from Ray Train's
``RunConfig`` and ``ScalingConfig``, which the driver builds from them.)
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, field_validator, \
    model_validator

from parabit.config import Config, to_dict


class OptimConfig(Config):
    """Optimiser, learning rate, batch size (pairs per worker) and epochs.

    Sparse word tables get the sparse-aware variant of ``name``: ``RowSparseAdam`` (SparseAdam's update with less
    memory traffic) for ``adam``, Adagrad and SGD as they are. ``amsgrad``: the AMSGrad variant of dense Adam
    (Chen et al. 2019); only with ``name: adam``. ``clip_norm``: clip the gradient norm of the dense parameters to
    this value each step (null: no clipping).

    ``accumulation_steps``: gradient accumulation, that many batches of ``batch_size`` per optimiser step (their
    gradients averaged, then exchanged once): a step then learns from ``batch_size × accumulation_steps × workers``
    pairs, while in-batch negatives still come from one batch of ``batch_size``. ``pairs_per_epoch``: an epoch
    trains this many pairs per worker (null: one pass over its shard), taken in a seeded order that runs on across
    epochs (each pass over the shard shuffled anew), so a large pair set is trained in slices, each ending with a
    dev score and a checkpoint: the dev curve against pairs seen.
    """

    name: Literal["adam", "adagrad", "sgd"] = "adam"
    lr: PositiveFloat = 0.001
    batch_size: int = Field(100, ge=2, description="at least 2: negatives come from the batch")
    epochs: PositiveInt = 5
    amsgrad: bool = False
    clip_norm: PositiveFloat | None = None
    accumulation_steps: PositiveInt = 1
    pairs_per_epoch: PositiveInt | None = None

    @model_validator(mode="after")
    def _amsgrad_is_adam(self):
        if self.amsgrad and self.name != "adam":
            raise ValueError(f"optim.amsgrad is a variant of Adam: set optim.name to 'adam' (it is {self.name!r})")
        return self


class ScalingSettings(Config):
    """Ray Train workers. On a 2-core machine keep ``cpus_per_worker × num_workers`` below 2 so Ray Data has a CPU.

    ``use_gpu``: one GPU per worker, NCCL between them (fails at start if the cluster has too few GPUs and cannot grow).
    ``mixed_precision``: bfloat16 autocast on GPU (recurrences, and similarities that pick negatives or feed a
    softmax, stay float32). ``resources_per_worker``: extra custom Ray resources each worker
    needs, e.g. ``{"train_slot": 1}`` to place at most one worker on each node that offers one slot.
    ``gradient_exchange`` (several workers): ``sparse_rows`` sends each worker's touched word-table rows to the others
    (all-gather; bytes per step grow with the batch, not the vocabulary; gloo and NCCL alike), ``dense`` all-reduces
    whole tables (what DDP does with dense gradients; only for comparison).

    ``num_workers``: a number, or a range ``[min, max]`` for elastic training: the run starts with as many workers as
    the cluster can place (at least ``min``), goes on with fewer from its last checkpoint when a node is lost, and grows
    again (up to ``max``) when nodes return. ``optim.batch_size`` stays the batch of each worker, so the in-batch
    negatives are the same whatever the number of workers; fewer workers take more steps per epoch, each averaging
    fewer pairs, at the same learning rate. ``placement_timeout_s``: how long a run waits for the cluster to have room
    for its workers (at least ``min`` of them) at the start or after a lost node, before it ends with what is missing
    (resumable: the same command continues from the last checkpoint); on an autoscaling cluster, the time its new
    nodes take to join. A wait for room that other work holds (a sweep's other trials) is not bounded.

    ``torch_threads``: intra-op threads of each worker's torch (null: the whole CPUs of ``cpus_per_worker``, at
    least 1: Ray's choice for a worker process, and parabit's for a worker ``in_process``). A transformer on a 2-core
    machine trains faster on 2 threads while its worker reserves 1 CPU, leaving Ray Data the other.

    ``in_process``: the one worker runs in the calling process (Ray Train's local mode): no worker group to start
    (about 20 s a run), and the process's imports and compiled kernels serve every run it trains, which is how
    ``parabit reproduce`` trains its cells. One CPU worker only; Ray Train restarts nothing (a failure ends the run,
    and the same command resumes it from its last checkpoint, written to the run's folder as Ray Train would).
    """

    num_workers: PositiveInt | tuple[PositiveInt, PositiveInt] = 1
    placement_timeout_s: PositiveFloat = 600.0
    use_gpu: bool = False
    cpus_per_worker: PositiveFloat = 1.0
    mixed_precision: bool = False
    resources_per_worker: dict[str, NonNegativeFloat] = Field(default_factory=dict)
    gradient_exchange: Literal["sparse_rows", "dense"] = "sparse_rows"
    torch_threads: PositiveInt | None = None
    in_process: bool = False

    @property
    def elastic(self) -> bool:
        return isinstance(self.num_workers, tuple)

    @property
    def min_workers(self) -> int:
        return self.num_workers[0] if self.elastic else self.num_workers

    @property
    def max_workers(self) -> int:
        return self.num_workers[1] if self.elastic else self.num_workers

    @property
    def sparse_gradients(self) -> bool:
        """Whether word tables train with row-sparse gradients (what ``gradient_exchange: sparse_rows`` exchanges)."""
        return self.gradient_exchange == "sparse_rows"

    @model_validator(mode="after")
    def _range_in_order(self):
        if self.min_workers > self.max_workers:
            raise ValueError(f"scaling.num_workers is a range [min, max]: {self.min_workers} > {self.max_workers}")
        return self

    @model_validator(mode="after")
    def _in_process_is_one_cpu_worker(self):
        if self.in_process and (self.use_gpu or self.elastic or self.num_workers != 1):
            raise ValueError("scaling.in_process trains one CPU worker in the calling process: it needs num_workers: 1 "
                             "and use_gpu: false")
        return self

    @model_validator(mode="after")
    def _mixed_precision_needs_gpu(self):
        if self.mixed_precision and not self.use_gpu:
            raise ValueError("scaling.mixed_precision needs scaling.use_gpu: true (autocast runs on CUDA only)")
        return self


class TrackingConfig(Config):
    """MLflow experiment, and the registry name of the exported model (empty: do not register)."""

    experiment: str = Field("parabit", min_length=1)
    register_as: str = "parabit-encoder"


class TrainingConfig(Config):
    """What every training run has. ``name`` identifies it: re-running with the same name resumes from its last
    checkpoint (and continues its MLflow run). ``recipe`` names the recipe that trains it (``parabit.recipes``).

    ``selection``: which epoch's model is evaluated and exported: ``last``, or ``best`` (highest ``dev_score``).
    ``max_failures``: how often a killed worker is restarted from the last checkpoint. ``storage_path``: where Ray
    Train keeps checkpoints (default ``<outputs>/ray_results``; shared storage on a multi-node cluster).
    ``checkpoint_every``: a checkpoint every that many epochs, and after the last (a word table and its optimiser
    state are hundreds of MB: about a second each); a resumed run trains the epochs since its last checkpoint again,
    to the same numbers.

    A recipe whose sections default differently declares it once in :attr:`section_defaults` (e.g. Siamese's
    ``{"optim": {"batch_size": 64, ...}}``): a config file that sets some fields of such a section gets the recipe's
    defaults for the others, not the kernel's.
    """

    section_defaults: ClassVar[dict[str, dict[str, Any]]] = {}

    recipe: str
    name: str = Field(pattern=r"^[^/\s]+$", description="a run name without '/' or spaces")
    seed: NonNegativeInt = 1
    optim: OptimConfig = Field(default_factory=OptimConfig)
    scaling: ScalingSettings = Field(default_factory=ScalingSettings)
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    selection: Literal["last", "best"] = "last"
    max_failures: int = Field(2, ge=-1)
    storage_path: str | None = None
    checkpoint_every: PositiveInt = 1

    @model_validator(mode="before")
    @classmethod
    def _recipe_section_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not cls.section_defaults:
            return data
        data = dict(data)
        for section, defaults in cls.section_defaults.items():
            given = data.get(section)
            if given is None:
                data[section] = dict(defaults)
            elif isinstance(given, dict):
                data[section] = {**defaults, **given}
        return data

    @field_validator("name")
    @classmethod
    def _name_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("name must be a non-empty run name")
        return value


# Settings a re-run of the same name may change: where and how it runs and is tracked, and for how many epochs (a
# longer run continues from the last checkpoint), never what it trains.
RESUMABLE_CHANGES = frozenset({"name", "tracking", "scaling", "storage_path", "max_failures", "checkpoint_every"})
RESUMABLE_FIELDS = frozenset({"optim.epochs"})


def trained_settings(config: TrainingConfig) -> dict:
    """What a run of ``config.name`` trains: its config without the settings a re-run may change (what a run name
    stands for, and what a reproduction cell's ledger digest covers)."""
    return {key: value for key, value in to_dict(config).items() if key not in RESUMABLE_CHANGES}
