"""The supervised Siamese training configuration (Bao et al. 2018; Mueller & Thyagarajan 2016).

Load with ``load_config(SiameseConfig, "jobs/configs/siamese/sick_en_attsialstm.yaml")``. Sections that mean the
same as in unsupervised training (``optim``, ``scaling``, ``tracking``) reuse :mod:`parabit.training.config`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from parabit.training.config import OptimConfig, ScalingConfig, TrackingConfig, _check_choice, _check_positive

TASKS = ("sick", "msrp")
LANGUAGES = ("en", "es", "en-es")
INITS = ("glove", "space", "random")

# Bao et al.'s four models: the Siamese encoder each one shares between its two sentences.
VARIANTS: dict[str, tuple[str, dict]] = {
    "sialstm": ("lstm", {"pooling": "last"}),
    "siabilstm": ("bilstm", {"pooling": "last"}),
    "attsialstm": ("attentive_lstm", {}),
    "attsiabilstm": ("attentive_lstm", {"bidirectional": True}),
}


@dataclass
class SiameseDataConfig:
    """Which labelled pairs, in which languages, cut to how many tokens.

    ``task``: ``sick`` (relatedness 1–5: train → trial as dev → test) or ``msrp`` (paraphrase 0/1: train minus a
    seeded ``dev_fraction`` held out as dev → test). ``language`` (SICK only): ``en`` (the original), ``es`` (both
    sentences from the translated SICK at ``translated_path``, made by ``jobs/translate_sick.py``) or ``en-es``
    (cross-lingual: sentence A English, sentence B Spanish). ``max_length``: tokens kept per sentence (Bao et al.'s
    Table II tunes it over 15/20/25). ``max_pairs_per_split``: the first pairs of each split only (quick runs, tests).
    """

    task: str = "sick"
    language: str = "en"
    translated_path: str = "outputs/pipelines/sick-es/translate"
    max_length: int = 25
    dev_fraction: float = 0.1
    max_pairs_per_split: int | None = None
    tokenizer: str = "regexp"
    lowercase: bool = True
    seed: int = 13

    def __post_init__(self):
        _check_choice("data.task", self.task, TASKS)
        _check_choice("data.language", self.language, LANGUAGES)
        if self.task == "msrp" and self.language != "en":
            raise ValueError("data.language: MSRP is English only; set data.language: en (or data.task: sick)")
        _check_positive("data.max_length", self.max_length)
        if not 0.0 < self.dev_fraction < 1.0:
            raise ValueError(f"data.dev_fraction must be in (0, 1), got {self.dev_fraction}")
        if self.max_pairs_per_split is not None:
            _check_positive("data.max_pairs_per_split", self.max_pairs_per_split)

    @property
    def languages(self) -> tuple[str, str]:
        """The vocabulary namespace of sentence A and of sentence B."""
        return {"en": ("en", "en"), "es": ("es", "es"), "en-es": ("en", "es")}[self.language]


@dataclass
class SiameseModelConfig:
    """The shared encoder: one of Bao et al.'s four ``variant``s, ``hidden_size`` units per direction (50 in the
    paper), over ``dim``-d word vectors.

    ``init``: ``glove`` (GloVe 6B 50d for English words; the paper used 300-d fastText), ``space`` (the word table of
    a parabit embedder at ``space``, an embedder folder or a ``models:/`` URI, e.g. the bilingual en/es space of
    ``jobs/configs/siamese/bilingual_space.yaml``; its ``en:``/``es:`` rows) or ``random``. Words the vectors lack
    start as N(0, ``init_std``²). ``train_embeddings``: fine-tune the word table (off: fixed vectors, as MaLSTM).
    """

    variant: str = "attsialstm"
    hidden_size: int = 50
    dim: int = 50
    init: str = "glove"
    space: str | None = None
    init_std: float = 0.5
    train_embeddings: bool = False

    def __post_init__(self):
        _check_choice("model.variant", self.variant, tuple(VARIANTS))
        _check_choice("model.init", self.init, INITS)
        _check_positive("model.hidden_size", self.hidden_size)
        _check_positive("model.dim", self.dim)
        _check_positive("model.init_std", self.init_std)
        if self.init == "glove" and self.dim != 50:
            raise ValueError(f"model.init 'glove' loads GloVe 6B 50d vectors: set model.dim to 50 (it is {self.dim})")
        if self.init == "space" and not self.space:
            raise ValueError("model.init 'space' needs model.space: an embedder folder or a models:/ URI")

    @property
    def encoder(self) -> tuple[str, dict]:
        """``(encoder name in parabit.encoders.ENCODERS, its options)`` for this variant."""
        name, options = VARIANTS[self.variant]
        return name, {**options, "hidden_size": self.hidden_size}


@dataclass
class SiameseConfig:
    """A whole supervised run. ``name`` identifies it: re-running with the same name resumes from its last checkpoint.

    The objective follows the task: MaLSTM regression (MSE of ``1 + 4·exp(−‖h_a − h_b‖₁)`` against the 1–5 gold) for
    SICK, binary cross-entropy of ``exp(−‖h_a − h_b‖₁)`` against the paraphrase label for MSRP, whose decision
    threshold is then chosen on dev. After every epoch the dev set is scored (``dev_score``: Pearson r on SICK
    trial, accuracy on the MSRP dev split); the epoch with the best ``dev_score`` is the model tested.
    """

    name: str = "siamese-sick-en-attsialstm"
    seed: int = 1
    data: SiameseDataConfig = field(default_factory=SiameseDataConfig)
    model: SiameseModelConfig = field(default_factory=SiameseModelConfig)
    optim: OptimConfig = field(default_factory=lambda: OptimConfig(lr=0.001, batch_size=64, epochs=20))
    scaling: ScalingConfig = field(default_factory=ScalingConfig)
    tracking: TrackingConfig = field(
        default_factory=lambda: TrackingConfig(experiment="parabit-siamese", register_as=""))
    clip_norm: float = 1.0
    max_failures: int = 2
    storage_path: str | None = None

    def __post_init__(self):
        if not self.name or "/" in self.name:
            raise ValueError(f"name {self.name!r} must be a non-empty run name without '/'")
        _check_positive("clip_norm", self.clip_norm)
        if self.model.init == "glove" and "en" not in self.data.languages:
            raise ValueError("model.init 'glove' has English vectors only; for data.language 'es' use "
                             "model.init: space with the bilingual space (jobs/configs/siamese/bilingual_space.yaml)")
        if self.model.init == "glove" and not self.data.lowercase:
            raise ValueError("model.init 'glove' needs data.lowercase: GloVe 6B words are lower-cased")

    @property
    def objective(self) -> str:
        return "malstm" if self.data.task == "sick" else "malstm_classification"
