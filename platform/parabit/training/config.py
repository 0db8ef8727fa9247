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
    memory traffic) for ``adam`` and ``adamw``, Adagrad and SGD as they are; ``weight_decay`` reaches the dense
    parameters only. ``amsgrad``: the AMSGrad variant of dense Adam (Chen et al. 2019); only with ``name: adam`` or
    ``adamw``. ``clip_norm``: clip the gradient norm of the dense parameters to this value each step (null: no
    clipping).

    ``warmup_steps`` and ``schedule``: the learning rate of each optimiser step is ``lr`` times a factor of the run's
    global step alone (:mod:`parabit.training.schedule`), so a resumed run steps at the rates an uninterrupted one
    would. ``length_buckets``: batches of pairs of similar length (:func:`~parabit.training.batches.length_bucketed`).
    The transformer fine-tuning recipe of sentence-transformers is ``name: adamw``, ``lr: 2e-5``, ``weight_decay:
    0.01``, ``warmup_steps`` about a tenth of the run's steps, ``schedule: linear``, ``length_buckets: true``.

    ``accumulation_steps``: gradient accumulation, that many batches of ``batch_size`` per optimiser step (their
    gradients averaged, then exchanged once): a step then learns from ``batch_size × accumulation_steps × workers``
    pairs, while in-batch negatives still come from one batch of ``batch_size``. ``pairs_per_epoch``: an epoch
    trains this many pairs per worker (null: one pass over its shard), taken in a seeded order that runs on across
    epochs (each pass over the shard shuffled anew), so a large pair set is trained in slices, each ending with a
    dev score and a checkpoint: the dev curve against pairs seen.
    """

    name: Literal["adam", "adamw", "adagrad", "sgd"] = "adam"
    """The optimiser: Adam, AdamW (Adam with decoupled weight decay, Loshchilov & Hutter 2019), Adagrad or plain SGD.
    Row-sparse word tables get its sparse-aware variant (`RowSparseAdam` for `adam` and `adamw`: its rows get no
    decoupled weight decay), the other parameters the dense one."""
    lr: PositiveFloat = 0.001
    """Learning rate of every optimiser of the run (word tables and dense parameters alike): the peak of the
    schedule (`warmup_steps`, `schedule`), constant without one."""
    weight_decay: NonNegativeFloat = 0.0
    """Weight decay of the dense parameters: decoupled with `adamw` (sentence-transformers uses 0.01), an L2 term in
    the gradient with `adam`, `adagrad` and `sgd`. Row-sparse word tables get none; with `adagrad` or `sgd` such
    tables, or a model without dense parameters, refuse it rather than leave it unapplied."""
    warmup_steps: NonNegativeInt = 0
    """Optimiser steps over which the learning rate rises linearly from 0 to `lr`, from the run's first step; 0:
    none."""
    schedule: Literal["constant", "linear"] = "constant"
    """The learning rate after the warm-up: `constant` (`lr`), or `linear`: decays from `lr` to 0 at the run's end
    (`epochs` × optimiser steps per epoch), as Hugging Face's linear schedule with warm-up does. A re-run with more
    `epochs` decays over the longer run from its resumed step on."""
    length_buckets: bool = False
    """Batch pairs of similar length: each epoch's order is cut into chunks of 50 batches, each chunk sorted by
    length and cut into batches, the chunk's batches shuffled (seeded). Less padding for a model whose cost grows with
    a batch's longest sentence (a transformer); off: batches of the shuffled order as it is."""
    batch_size: int = Field(100, ge=2, description="at least 2: negatives come from the batch")
    epochs: PositiveInt = 5
    """Epochs to train: passes over each worker's shard, or slices of `pairs_per_epoch` pairs. A re-run of the same
    `name` with more epochs continues from its last checkpoint."""
    amsgrad: bool = False
    """The AMSGrad variant of Adam (Chen et al. 2019) for the dense parameters (not the row-sparse word tables); only
    with `name: adam` or `adamw`."""
    clip_norm: PositiveFloat | None = None
    """Clip the total gradient norm of the dense parameters to this value each step (row-sparse word tables are not
    clipped); null: no clipping."""
    accumulation_steps: PositiveInt = 1
    """Batches per optimiser step, their gradients averaged: a step learns from `batch_size × accumulation_steps ×
    workers` pairs, while the in-batch negatives still come from one batch of `batch_size`."""
    pairs_per_epoch: PositiveInt | None = None
    """Pairs per worker in an epoch, in a seeded order that runs on across epochs, so a large pair set trains in
    slices, each ending with a dev score and a checkpoint; null: an epoch is one pass over the worker's shard."""

    @model_validator(mode="after")
    def _amsgrad_is_adam(self):
        if self.amsgrad and self.name not in ("adam", "adamw"):
            raise ValueError(f"optim.amsgrad is a variant of Adam: set optim.name to 'adam' or 'adamw' (it is "
                             f"{self.name!r})")
        return self


class ScalingSettings(Config):
    """Ray Train workers. The workers leave a whole CPU of the cluster to Ray Data: on a 2-core machine
    ``cpus_per_worker × num_workers`` is at most 1 (a run asking more is refused before it starts).

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
    """Ray Train workers: a number, or `[min, max]` for elastic training (starts with as many as fit, at least `min`;
    goes on with fewer when a node is lost, grows back up to `max`). `optim.batch_size` is per worker."""
    placement_timeout_s: PositiveFloat = 600.0
    """Seconds the run waits for room for its workers (at least `min`) at the start or after a lost node before it
    ends (resumable); on an autoscaling cluster, the time new nodes take to join. A wait for room that other work
    holds is not bounded."""
    use_gpu: bool = False
    """One GPU per worker, NCCL between workers; the run fails at start if the cluster has too few GPUs and cannot
    grow."""
    cpus_per_worker: PositiveFloat = 1.0
    """CPUs Ray reserves for each worker (fractions allowed). The workers must leave a whole CPU of the cluster to
    Ray Data: on 2 cores, `cpus_per_worker × num_workers` at most 1."""
    mixed_precision: bool = False
    """bfloat16 autocast of the forward passes (recurrences, and similarities that pick negatives or feed a softmax,
    stay float32); needs `use_gpu: true`."""
    resources_per_worker: dict[str, NonNegativeFloat] = Field(default_factory=dict)
    """Custom Ray resources each worker needs besides its CPUs (and GPU), e.g. `{train_slot: 1}` to place at most one
    worker on each node that offers one slot; empty: none."""
    gradient_exchange: Literal["sparse_rows", "dense"] = "sparse_rows"
    """`sparse_rows`: word tables get row-sparse gradients, and workers all-gather the rows each touched (bytes grow
    with the batch, not the vocabulary). `dense`: dense table gradients (the dense optimiser, even with one
    worker), whole tables all-reduced as DDP does; only for comparison."""
    torch_threads: PositiveInt | None = None
    """Intra-op threads of each worker's torch; null: the whole CPUs of `cpus_per_worker`, at least 1. More threads
    than reserved CPUs can pay off: a transformer on 2 cores trains faster on 2 threads while its worker reserves 1."""
    in_process: bool = False
    """Train the one worker in the calling process (Ray Train's local mode): no worker group to start (about 20 s a
    run; how `parabit reproduce` trains its cells). One CPU worker only, never restarted: a failure ends the run, and
    the same command resumes it."""

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
    """The MLflow experiment the run is logged in (recipes other than `pairs` default to their own, e.g.
    `parabit-bildrl`)."""
    register_as: str = "parabit-encoder"
    """The model-registry name the run's exported encoder is registered under; empty: not registered."""


class TrainingConfig(Config):
    """What every training run has. ``name`` identifies it: re-running with the same name resumes from its last
    checkpoint (and continues its MLflow run). ``recipe`` names the recipe that trains it (``parabit.recipes``).

    ``selection``: which epoch's model is evaluated and exported: ``last``, or ``best`` (highest ``dev_score``;
    with ``selection_includes_start`` the untrained model, epoch 0, is a candidate too).
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
    """The recipe that trains the run: `pairs`, `siamese`, `bildrl`, `bilingual` or `transformer`
    (`parabit.recipes.RECIPES`); a config file without it is a `pairs` run."""
    name: str = Field(pattern=r"^[^/\s]+$", description="a run name without '/' or spaces")
    seed: NonNegativeInt = 1
    """Seeds the model's initialisation, each epoch's batch order (per worker) and the recipe's sampling (negatives,
    row samples)."""
    optim: OptimConfig = Field(default_factory=OptimConfig)
    """Optimiser, learning rate, batch size per worker, epochs, clipping and gradient accumulation."""
    scaling: ScalingSettings = Field(default_factory=ScalingSettings)
    """Where the run trains: Ray Train workers and their CPUs, GPUs and threads (a re-run may change it)."""
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    """The MLflow experiment and the model-registry name (a re-run may change them)."""
    selection: Literal["last", "best"] = "last"
    """Which epoch's model is evaluated and exported: `last`, or `best` (highest `dev_score`; with a recipe that
    reports no dev score, the last)."""
    selection_includes_start: bool = False
    """With `selection: best`, the untrained model (epoch 0, scored before training) is a candidate too: a run that
    no epoch improves strictly exports the model it started from. Off: the best trained epoch, even one worse than
    the start (how the recorded reproduction cells were selected)."""
    max_failures: int = Field(2, ge=-1)
    """How often Ray Train restarts killed workers from the last checkpoint before the run fails; `-1`: without limit,
    `0`: never (a run `in_process` is never restarted)."""
    storage_path: str | None = None
    """Folder of the run's checkpoints (`<storage_path>/<name>`) and run record (relative: from the current folder);
    null: `<outputs>/ray_results`. On a multi-node cluster, shared storage."""
    checkpoint_every: PositiveInt = 1
    """A checkpoint every that many epochs, and after the last (a word table and its optimiser state: hundreds of MB,
    about a second); a resumed run trains the epochs since its last checkpoint again, to the same numbers."""

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

    @model_validator(mode="after")
    def _start_is_a_best_candidate(self):
        if self.selection_includes_start and self.selection != "best":
            raise ValueError("selection_includes_start makes the untrained model a candidate of selection: best; "
                             f"set selection to 'best' (it is {self.selection!r})")
        return self

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
