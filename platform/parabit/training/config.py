"""The training configuration: one dataclass per concern, each the single place of its defaults.

Load with ``load_config(TrainConfig, "jobs/configs/bilingual_sentences.yaml")``; every field is documented here and
checked in ``__post_init__`` with a message that says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from parabit.evaluation.config import EvaluationConfig

CONDITIONS = ("bilingual_sentences", "ppdb", "pairs_parquet", "bilingual_phrases", "pivot_paraphrases")
FILE_CONDITIONS = ("pairs_parquet", "bilingual_phrases", "pivot_paraphrases")  # need data.path
BIGRAM_SOURCES = ("sick",)
BITEXT_SOURCES = ("tatoeba", "europarl")
OBJECTIVES = ("jbi", "jpa")
DISTANCES = ("euclidean", "cosine")
SAMPLING = ("max", "mix", "rand")
OPTIMIZERS = ("adam", "adagrad", "sgd")
REGULARIZATION = ("l2", "l2_to_init")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} is {value!r}; choose one of {list(choices)}")


def _check_positive(name: str, value: float, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value}")


@dataclass
class DataConfig:
    """Which training pairs, and how they become token ids.

    ``condition``: ``bilingual_sentences`` (English–``lang`` bitext from ``sources``), ``ppdb`` (PPDB lexical
    paraphrase pairs, both sides English) or ``pairs_parquet`` (a parquet file from a parabit pipeline with columns
    ``text_a``, ``text_b`` and optional ``lang_a``/``lang_b``), ``bilingual_phrases`` (a phrase table from
    ``jobs/phrases.py``: columns ``en``, ``foreign``, ``lang``) or ``pivot_paraphrases`` (its pivot paraphrases:
    columns ``phrase``, ``paraphrase``); ``path`` is the parquet file or folder.
    ``drop_bigrams_of``: reject every pair whose English side shares a word bigram with these evaluation sets
    (``sick``: the SICK test sentences; Elgohary & Carpuat's memorisation check).
    """

    condition: str = "bilingual_sentences"
    lang: str = "es"
    sources: tuple[str, ...] = BITEXT_SOURCES
    path: str | None = None
    max_pairs: int | None = None
    max_tokens: int = 40
    min_count: int = 1
    max_words_per_language: int | None = None
    tokenizer: str = "regexp"
    lowercase: bool = True
    seed: int = 13
    drop_bigrams_of: tuple[str, ...] = ()

    def __post_init__(self):
        _check_choice("data.condition", self.condition, CONDITIONS)
        for source in self.sources:
            _check_choice("data.sources entry", source, BITEXT_SOURCES)
        if self.condition in FILE_CONDITIONS and not self.path:
            raise ValueError(f"data.condition {self.condition!r} needs data.path: the parquet file of training pairs")
        for source in self.drop_bigrams_of:
            _check_choice("data.drop_bigrams_of entry", source, BIGRAM_SOURCES)
        _check_positive("data.max_tokens", self.max_tokens)
        if self.max_pairs is not None:
            _check_positive("data.max_pairs", self.max_pairs)


@dataclass
class ModelConfig:
    """The encoder: a name from ``parabit.encoders.ENCODERS`` and its options.

    ``init``: ``random`` (normal with standard deviation ``init_std``; 1.0 as in ``nn.Embedding``, which scored
    better than 0.1 here) or ``glove`` (GloVe 6B 50d for English words, ``init_std`` for the rest; needs ``dim: 50``). ``sparse``: sparse word-table gradients (the averaging models; a
    step then touches only the rows in the batch).
    """

    encoder: str = "avg"
    dim: int = 300
    init: str = "random"
    init_std: float = 1.0
    sparse: bool = True
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        from parabit.encoders import ENCODERS

        _check_choice("model.encoder", self.encoder, tuple(ENCODERS))
        _check_choice("model.init", self.init, ("random", "glove"))
        if self.init == "glove" and self.dim != 50:
            raise ValueError(f"model.init 'glove' loads GloVe 6B 50d vectors: set model.dim to 50 (it is {self.dim})")
        _check_positive("model.dim", self.dim)
        _check_positive("model.init_std", self.init_std)


@dataclass
class ObjectiveConfig:
    """J_bi (Elgohary & Carpuat eq. 1) or J_pa (Wieting et al.).

    ``margin`` is δ; ``negatives`` is k (J_bi random negatives per side); ``sampling`` picks J_pa's in-batch negatives;
    ``regularization`` is λ, applied as ``regularization_kind`` (λ/2·‖W‖² or λ·‖W − W_init‖²) to the rows in the batch.
    """

    name: str = "jbi"
    margin: float = 1.0
    distance: str = "euclidean"
    negatives: int = 1
    sampling: str = "max"
    regularization: float = 0.0
    regularization_kind: str = "l2"

    def __post_init__(self):
        _check_choice("objective.name", self.name, OBJECTIVES)
        _check_choice("objective.distance", self.distance, DISTANCES)
        _check_choice("objective.sampling", self.sampling, SAMPLING)
        _check_choice("objective.regularization_kind", self.regularization_kind, REGULARIZATION)
        _check_positive("objective.margin", self.margin)
        _check_positive("objective.negatives", self.negatives)
        _check_positive("objective.regularization", self.regularization, allow_zero=True)


@dataclass
class OptimConfig:
    """Optimiser, learning rate, batch size (pairs per worker) and epochs.

    Sparse word tables get the sparse-aware variant of ``name``: ``RowSparseAdam`` (SparseAdam's update with less memory
    traffic) for ``adam``, Adagrad and SGD as they are.
    ``amsgrad``: the AMSGrad variant of dense Adam (Chen et al. 2019); only with ``name: adam``.
    """

    name: str = "adam"
    lr: float = 0.001
    batch_size: int = 100
    epochs: int = 5
    amsgrad: bool = False

    def __post_init__(self):
        _check_choice("optim.name", self.name, OPTIMIZERS)
        _check_positive("optim.lr", self.lr)
        if self.batch_size < 2:
            raise ValueError(f"optim.batch_size must be at least 2 (negatives come from the batch), got {self.batch_size}")
        _check_positive("optim.epochs", self.epochs)
        if self.amsgrad and self.name != "adam":
            raise ValueError(f"optim.amsgrad is a variant of Adam: set optim.name to 'adam' (it is {self.name!r})")


@dataclass
class ScalingConfig:
    """Ray Train workers. On a 2-core machine keep ``cpus_per_worker × num_workers`` below 2 so Ray Data has a CPU.

    ``use_gpu``: one GPU per worker, NCCL between them (fails at start if the cluster has no GPU).
    ``mixed_precision``: bfloat16 autocast on GPU. ``resources_per_worker``: extra custom Ray resources each worker
    needs, e.g. ``{"train_slot": 1}`` to place at most one worker on each node that offers one slot.
    """

    num_workers: int = 1
    use_gpu: bool = False
    cpus_per_worker: float = 1.0
    mixed_precision: bool = False
    resources_per_worker: dict = field(default_factory=dict)

    def __post_init__(self):
        _check_positive("scaling.num_workers", self.num_workers)
        _check_positive("scaling.cpus_per_worker", self.cpus_per_worker)
        if self.mixed_precision and not self.use_gpu:
            raise ValueError("scaling.mixed_precision needs scaling.use_gpu: true (autocast runs on CUDA only)")


@dataclass
class TrackingConfig:
    """MLflow experiment, and the registry name of the exported model (empty: do not register)."""

    experiment: str = "parabit"
    register_as: str = "parabit-encoder"


@dataclass
class TrainConfig:
    """A whole training run. ``name`` identifies it: re-running with the same name resumes from its last checkpoint.

    ``dev`` is the development set scored after every epoch (``sts2016`` or ``sts2012-train-smteuroparl``); its
    mean Pearson r is reported as ``dev_score``, the metric sweeps optimise.
    """

    name: str = "avg-jbi-bilingual-sentences"
    seed: int = 1
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    objective: ObjectiveConfig = field(default_factory=ObjectiveConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    scaling: ScalingConfig = field(default_factory=ScalingConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    dev: str = "sts2016"
    max_failures: int = 2
    storage_path: str | None = None

    def __post_init__(self):
        from parabit.evaluation.sts import DEV_SETS

        _check_choice("dev", self.dev, tuple(DEV_SETS))
        if not self.name or "/" in self.name:
            raise ValueError(f"name {self.name!r} must be a non-empty run name without '/'")
        if self.model.init == "glove" and self.data.lang and not self.data.lowercase:
            raise ValueError("model.init 'glove' needs data.lowercase: GloVe 6B words are lower-cased")
