"""BilDRL configuration: the data build (:class:`DictionaryBuildConfig`) and a training run (:class:`DictionaryTrainConfig`).

Load with ``load_config(DictionaryTrainConfig, "jobs/configs/bildrl/att_mtl.yaml")``; every field is checked in
``__post_init__`` with a message that says what to do. Optimiser, scaling and tracking sections are the training
core's own (:mod:`parabit.training.config`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from parabit.paths import output_root
from parabit.training.config import OptimConfig, ScalingConfig, TrackingConfig

DIRECTIONS = ("fr-en", "en-es", "es-en")
"""``<word language>-<definition language>``: fr-en = French words defined in English (the issue's fr→en)."""

ENCODERS = {"bow": "linear_bow", "cnn": "cnn", "gru": "gru", "att": "attentive_gru"}
"""BilDRL model names → parabit encoder names."""


def foreign_language(direction: str) -> str:
    """The non-English language of a direction ("fr-en" → "fr")."""
    word, definition = direction.split("-")
    return word if word != "en" else definition


def _positive(name: str, value: float) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


@dataclass
class DictionaryBuildConfig:
    """How the dictionaries and the paraphrase set are built (``jobs/build_dictionaries.py``).

    ``spaces``: foreign language → the bilingual space (a training run folder, see :mod:`parabit.dictionary.space`);
    a defined word must be one row of it. ``test_words``: held-out words per direction. ``paraphrase_concepts``:
    WordNet synsets giving one positive and one negative pair each; ``neighbours``: how many nearest neighbours a
    negative is drawn from; ``paraphrase_split``: train/dev/test fractions. ``translation_batch``: glosses per
    Apertium call. ``output_dir``: default ``outputs/bildrl/data``.
    """

    spaces: dict = field(default_factory=lambda: {
        "es": str(output_root() / "ray_results" / "bildrl-embeddings-en-es"),
        "fr": str(output_root() / "ray_results" / "bildrl-embeddings-en-fr"),
    })
    test_words: int = 500
    seed: int = 7
    paraphrase_concepts: int = 3000
    neighbours: int = 15
    paraphrase_split: tuple[float, float, float] = (0.70, 0.05, 0.25)
    translation_batch: int = 2000
    output_dir: str | None = None

    def __post_init__(self):
        unknown = set(self.spaces) - {"es", "fr"}
        if unknown:
            raise ValueError(f"spaces has languages {sorted(unknown)}; only 'es' and 'fr' are built")
        _positive("test_words", self.test_words)
        _positive("paraphrase_concepts", self.paraphrase_concepts)
        _positive("neighbours", self.neighbours)
        _positive("translation_batch", self.translation_batch)
        if len(self.paraphrase_split) != 3 or abs(sum(self.paraphrase_split) - 1.0) > 1e-6 \
                or min(self.paraphrase_split) <= 0:
            raise ValueError(f"paraphrase_split must be three positive fractions summing to 1 (train, dev, test); "
                             f"got {self.paraphrase_split}")

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "bildrl" / "data"


@dataclass
class DictionaryModelConfig:
    """The definition encoder: ``encoder`` (bow, cnn, gru, att), ``hidden`` units, ``layers`` stacked recurrent
    layers, then two affine layers (hidden → hidden → word-vector size). ``max_tokens``: definition length."""

    encoder: str = "att"
    hidden: int = 200
    layers: int = 1
    max_tokens: int = 15

    def __post_init__(self):
        if self.encoder not in ENCODERS:
            raise ValueError(f"model.encoder is {self.encoder!r}; choose one of {list(ENCODERS)}")
        _positive("model.hidden", self.hidden)
        _positive("model.layers", self.layers)
        _positive("model.max_tokens", self.max_tokens)


@dataclass
class JointConfig:
    """Joint learning (Chen et al. §3.3): the word table is trained too, with ``skipgram_weight`` × skip-gram
    (negative sampling, ``window``, ``negatives``) on each language of ``bitext_pairs`` Tatoeba pairs and
    ``alignment_weight`` × the bag-of-words alignment loss on the same pairs. Off unless ``enabled``."""

    enabled: bool = False
    skipgram_weight: float = 0.1
    alignment_weight: float = 0.1
    window: int = 3
    negatives: int = 5
    bitext_pairs: int = 20000

    def __post_init__(self):
        _positive("joint.skipgram_weight", self.skipgram_weight)
        _positive("joint.alignment_weight", self.alignment_weight)
        _positive("joint.window", self.window)
        _positive("joint.negatives", self.negatives)
        _positive("joint.bitext_pairs", self.bitext_pairs)


@dataclass
class DictionaryTrainConfig:
    """One BilDRL run: ``directions`` (one = single direction, two = multi-task with shared parameters; all of one
    space), the built ``data_dir`` (default ``outputs/bildrl/data``), the ``space`` of those directions (default:
    the build config's), ``max_train_rows`` per direction (a seeded sample; None = all), and the paper's
    AMSGrad, lr 5e-4, batch 64."""

    name: str = "bildrl-att-fr-en"
    seed: int = 1
    directions: tuple[str, ...] = ("fr-en",)
    data_dir: str | None = None
    space: str | None = None
    max_train_rows: int | None = None
    model: DictionaryModelConfig = field(default_factory=DictionaryModelConfig)
    joint: JointConfig = field(default_factory=JointConfig)
    optim: OptimConfig = field(default_factory=lambda: OptimConfig(name="adam", lr=5e-4, batch_size=64, epochs=5,
                                                                   amsgrad=True))
    scaling: ScalingConfig = field(default_factory=ScalingConfig)
    tracking: TrackingConfig = field(default_factory=lambda: TrackingConfig(experiment="parabit-bildrl",
                                                                            register_as=""))
    paraphrase: bool = True
    storage_path: str | None = None
    max_failures: int = 2

    def __post_init__(self):
        if not self.name or "/" in self.name:
            raise ValueError(f"name {self.name!r} must be a non-empty run name without '/'")
        if not self.directions:
            raise ValueError(f"directions is empty; choose one or two of {list(DIRECTIONS)}")
        for direction in self.directions:
            if direction not in DIRECTIONS:
                raise ValueError(f"direction {direction!r} is unknown; choose from {list(DIRECTIONS)}")
        languages = {foreign_language(d) for d in self.directions}
        if len(languages) > 1:
            raise ValueError(f"directions {list(self.directions)} use different spaces ({sorted(languages)}); "
                             "a multi-task run trains directions of one language pair")
        if self.max_train_rows is not None:
            _positive("max_train_rows", self.max_train_rows)

    @property
    def language(self) -> str:
        return foreign_language(self.directions[0])

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser() if self.data_dir else DictionaryBuildConfig().output_path

    @property
    def space_path(self) -> Path:
        return Path(self.space).expanduser() if self.space else Path(DictionaryBuildConfig().spaces[self.language])
