"""What one kind of training is: a :class:`Recipe`. The kernel (:mod:`parabit.training.loop`,
:mod:`parabit.training.driver`) runs any recipe the same way.

A recipe says *what* is trained, the kernel says *how* training runs (as a LightningModule and its Trainer):

=======================  ==============================================================  ============
step                     the recipe                                                      where
=======================  ==============================================================  ============
check inputs             :meth:`Recipe.check_inputs` (files exist, before Ray starts)    driver
prepare data             :meth:`Recipe.prepare` → :class:`Prepared` (token ids, cached)  driver
datasets                 :meth:`Recipe.datasets` (Ray Datasets; ``train`` is batched)    driver
build the model          :meth:`Recipe.build_module` → a :class:`TrainingModule`         each worker
loss of a batch          ``TrainingModule.forward(batch, step) -> loss | (loss, parts)``  each worker
untrained parts          :meth:`Recipe.refit` (before training, after every epoch)         each worker
dev score after an epoch :meth:`Recipe.validate` → metrics with ``dev_score``             rank 0
export                   :meth:`Recipe.export` → the :class:`SentenceEmbedder` to save     rank 0
final evaluation         :meth:`Recipe.evaluate` → report (+ the embedder to register)    driver
final score              :meth:`Recipe.final_score` → the report's headline number        driver
=======================  ==============================================================  ============

The kernel owns everything else, once for every recipe: Ray Train workers, data sharding, seeded epoch order,
optimisers (sparse-aware), gradient exchange between workers, clipping, the divergence guard, per-epoch
checkpoints and resume, best-epoch selection, MLflow logging, pyfunc export and registration.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import pyarrow.parquet as pq
import ray.data
import torch
from torch import nn

from parabit.config import from_dict
from parabit.embedder import SentenceEmbedder
from parabit.evaluation.report import EvaluationReport
from parabit.training.config import TrainingConfig
from parabit.training.prepared import PreparedData

if TYPE_CHECKING:  # numba's import (half a second) only where the fused step runs
    from parabit.encoders.row_bags import RowBags

ConfigT = TypeVar("ConfigT", bound=TrainingConfig)

EMBEDDER_DIR = "embedder"
"""The folder of a checkpoint that holds the embedder :meth:`Recipe.export` returned (what :meth:`Recipe.evaluate`
reads and the run registers)."""


@dataclass
class Step:
    """What a training step may use besides its batch: the seeded ``generator`` (negatives, sampling), every
    dataset shard of this worker by name (``shards["train"]`` holds the batches; other datasets, e.g. BilDRL's bitext,
    are there to draw from), and where training is."""

    generator: torch.Generator
    shards: Mapping[str, dict[str, torch.Tensor]]
    epoch: int
    step: int


@dataclass
class RowGradient:
    """What the kernel's fused step (:class:`parabit.training.step.RowStep`) needs of a batch to train the one word
    table a module trains, from :meth:`TrainingModule.row_gradient`: the objective's ``loss``; the batch's ``bags``
    (which rows each sentence vector sums, with which factors) and ``sentence_gradient [S, D]``, the loss's gradient
    with respect to those sums; and a row penalty ``penalty_scale · ‖table[rows] − centre[rows]‖²`` over the rows
    the batch touched (``centre`` None: zero; ``penalty_scale`` 0: none), added to the loss by the kernel."""

    loss: float
    table: nn.Parameter
    bags: RowBags
    sentence_gradient: torch.Tensor
    penalty_scale: float = 0.0
    centre: torch.Tensor | None = None


class TrainingModule(nn.Module):
    """Everything a recipe trains, in one module: ``forward(batch, step)`` returns the loss of the batch (or
    ``(loss, {"part": value})`` to report its parts per epoch). One forward call per step, as DDP needs.

    A module whose only trainable part is a row-sparse word table may also give the loss and the table's gradient in
    closed form (:meth:`row_gradient`, with :meth:`closed_form_table` saying when it can): the kernel then trains it
    without autograd, touching each of the batch's rows once (the same maths as forward + backward).

    The whole module is what checkpoints hold and what the optimisers update; a recipe that exports a sentence
    encoder keeps it as a submodule (e.g. ``self.encoder``). ``start_metrics`` are logged once when training starts
    (e.g. how many words pre-trained vectors covered)."""

    start_metrics: dict[str, float]

    def __init__(self):
        super().__init__()
        self.start_metrics = {}

    def closed_form_table(self) -> nn.Parameter | None:
        """The word table :meth:`row_gradient` trains, when it can stand in for ``forward`` and backward (the module
        as configured has no other trainable part and a loss with a closed-form gradient); None: autograd."""
        return None

    def row_gradient(self, batch: dict, step: Step) -> RowGradient:
        """``forward(batch, step)``'s loss as a :class:`RowGradient` (the same draws from ``step.generator``): what
        the kernel needs to differentiate it with respect to :meth:`closed_form_table`'s rows without autograd."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form gradient")


@dataclass
class InitialInput:
    """A file a model is initialised from, as its run's lineage names it."""

    name: str
    digest: str
    source: str
    profile: dict = field(default_factory=dict)


@dataclass
class Evaluation:
    """A finished run's final evaluation: the ``report`` logged to MLflow, and the ``embedder`` to register
    (None when the recipe exports no sentence encoder); ``variants``: reports of variants of the model (e.g. its
    untrained start), each logged with its name as a prefix of its metrics."""

    report: EvaluationReport
    embedder: SentenceEmbedder | None = None
    artifacts: dict[str, Any] = field(default_factory=dict)
    variants: dict[str, EvaluationReport] = field(default_factory=dict)


class Recipe(ABC, Generic[ConfigT]):
    """One kind of training (see the module docstring). Subclasses set ``name`` and ``config_class`` and register
    in :data:`parabit.recipes.RECIPES`; an instance holds one run's config."""

    name: ClassVar[str]
    config_class: ClassVar[type[TrainingConfig]]
    experiment_tags: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: ConfigT):
        self.config = config

    @classmethod
    def path(cls) -> str:
        """Where this class is, as ``module:ClassName`` (:func:`recipe_at` imports it)."""
        return f"{cls.__module__}:{cls.__qualname__}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Recipe":
        """The recipe of a config given as plain values (how Ray workers receive it)."""
        return cls(from_dict(cls.config_class, data, where=f"{cls.name} config"))

    # -- driver side -------------------------------------------------------------------------------------------
    def check_inputs(self) -> None:
        """Fail fast, before Ray starts, on inputs that are not there (a missing file, an unbuilt dataset)."""

    @abstractmethod
    def prepare(self) -> PreparedData:
        """The run's token ids and vocabulary, prepared once and cached (later runs with the same data reuse them)."""

    def load_prepared(self, directory: Path) -> PreparedData:
        """What :meth:`prepare` made, read back on a worker."""
        return PreparedData.load(directory)

    def datasets(self, prepared: PreparedData) -> dict[str, ray.data.Dataset]:
        """The Ray Datasets the workers read: ``train`` (split across workers and batched by the kernel), plus any
        others the training step draws from. Default: the prepared pairs.

        Built from the Arrow table rather than ``read_parquet``: the ids are compact, and parquet reading schedules
        read tasks that each want a whole CPU, which starve concurrent runs (two Tune trials) on a small machine."""
        return {"train": ray.data.from_arrow(pq.read_table(prepared.pairs_path))}

    def describe(self, prepared: PreparedData) -> str:
        """One line about the prepared data, printed before training."""
        stats = prepared.stats
        return (f"{stats.get('pairs_kept', '?')} training pairs, vocabulary {prepared.vocabulary_size}, "
                f"rejected {stats.get('rejected', {})}")

    def tags(self) -> dict[str, str]:
        """Extra MLflow tags of the run (for filtering in the UI)."""
        return {}

    def inputs(self) -> tuple[str, list[str]]:
        """The name of the data this run reads and the files it comes from (the run's MLflow dataset input)."""
        return self.name, []

    def initial_inputs(self, prepared: PreparedData) -> list[InitialInput]:
        """What the model starts from besides the data (e.g. distilled word vectors), each logged as an MLflow
        dataset input of context ``initialisation``. Default: none."""
        return []

    @abstractmethod
    def evaluate(self, checkpoint_dir: Path, prepared: PreparedData, selected: dict) -> Evaluation:
        """The final evaluation of a finished run from its checkpoint folder (``state.pt`` and the exported
        ``embedder/``, :data:`EMBEDDER_DIR`); ``selected`` is the history entry of the epoch the checkpoint's model comes from."""

    @abstractmethod
    def final_score(self, report: EvaluationReport) -> float:
        """The one number of :meth:`evaluate`'s report that sums up the run (higher is better): what every run logs
        as its final score (:data:`parabit.tracking.tags.FINAL_SCORE`) and a sweep shows per trial and for its best.
        NaN when the report lacks it. Held-out data: a sweep selects on the dev score, never on this."""

    def untrained_embedder(self) -> SentenceEmbedder | None:
        """The model before any training, exactly as its run starts (the run's seed, data and refit), as an
        embedder: what the trained model is measured against. None if the recipe exports no sentence encoder."""
        prepared = self.prepare()
        torch.manual_seed(self.config.seed)
        module = self.build_module(prepared, sparse=False)
        self.refit(module, prepared)
        return self.export(module.eval(), prepared)

    # -- worker side -------------------------------------------------------------------------------------------
    @abstractmethod
    def build_module(self, prepared: PreparedData, *, sparse: bool) -> TrainingModule:
        """The model and its loss as one :class:`TrainingModule`, initialised from the torch seed the kernel set.
        ``sparse``: whether word tables may take row-sparse gradients."""

    def refit(self, module: TrainingModule, prepared: PreparedData) -> None:
        """Refit what the optimiser does not train (e.g. common components), on every worker: before training
        starts (ahead of the untrained model's dev score) and after every epoch (ahead of its dev score and export).
        Default: nothing."""

    def validate(self, module: TrainingModule, prepared: PreparedData) -> dict[str, float]:
        """Dev metrics after an epoch (rank 0): ``dev_score`` (what selection and sweeps maximise) and any
        ``dev/...`` details. Default: none (the run is then selected by its last epoch)."""
        return {}

    def export(self, module: TrainingModule, prepared: PreparedData) -> SentenceEmbedder | None:
        """The sentence embedder saved with each checkpoint (and registered at the end); None if there is none."""
        return None


class ScoredOnDevSet:
    """A :class:`Recipe` mixin: :meth:`validate` scores the exported embedder on the config's ``dev`` set (a
    :class:`~parabit.evaluation.dev.DevSet` name), loaded once per worker."""

    def validate(self, module: TrainingModule, prepared: PreparedData) -> dict[str, float]:
        from parabit.evaluation.dev import DevSet

        if not hasattr(self, "_dev"):
            self._dev = DevSet(self.config.dev)
        score, details = self._dev(self.export(module, prepared).encode)
        return {"dev_score": score, **details}


def recipe_at(path: str) -> type[Recipe]:
    """The recipe class at ``path`` (``module:ClassName``, :meth:`Recipe.path`), imported now."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
