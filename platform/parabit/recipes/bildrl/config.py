"""BilDRL configuration: the data build (:class:`DictionaryBuildConfig`) and a training run (:class:`BilDRLConfig`,
recipe ``bildrl``).

Load with ``load_config(BilDRLConfig, "jobs/configs/bildrl/att_mtl_es.yaml")``; every field is checked when it is
loaded, with a message that says what to do. Optimiser, scaling and tracking sections are the training kernel's
(:mod:`parabit.training.config`), with the paper's defaults (AMSGrad, lr 5e-4, batch 64).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt, field_validator, model_validator

from parabit.config import Config
from parabit.paths import output_root
from parabit.training import TrainingConfig

DIRECTIONS = ("fr-en", "en-es", "es-en")
"""``<word language>-<definition language>``: fr-en = French words defined in English (the issue's fr→en)."""

Direction = Literal["fr-en", "en-es", "es-en", "en-en"]
"""A run's directions: the bilingual ones, or ``en-en`` (English words defined in English, the monolingual
dictionary of Chen et al.'s mono baselines; built by :mod:`parabit.papers.bildrl.mono`, not by ``build-dictionaries``)."""

MODELS = {"bow": "linear_bow", "cnn": "cnn", "gru": "gru", "att": "attentive_gru"}
"""The paper's model names (Table 3's rows) → the registered encoders (:data:`parabit.encoders.ENCODERS`)."""


def foreign_language(direction: str) -> str:
    """The non-English language of a direction ("fr-en" → "fr")."""
    word, definition = direction.split("-")
    return word if word != "en" else definition


class DictionaryBuildConfig(Config):
    """How the dictionaries and the paraphrase set are built (``jobs/build_dictionaries.py``).

    ``spaces``: foreign language → the bilingual space (a training run folder, see :mod:`parabit.recipes.bildrl.space`);
    a defined word must be one row of it. ``test_words``: held-out words per direction. ``paraphrase_concepts``:
    WordNet synsets giving one positive and one negative pair each; ``neighbours``: how many nearest neighbours a
    negative is drawn from; ``paraphrase_split``: train/dev/test fractions. ``translation_batch``: glosses per
    Apertium call. ``output_dir``: default ``outputs/bildrl/data``. The es-en dictionary reads WordNet 3.0's own
    database for its morphology (Debian ``wordnet-base``, :mod:`parabit.data.wordnet_database`).

    ``split``: how test words are held out. ``strict`` (the paper's text: "randomly select 500 defined words ... and
    exclude all the definitions of these words from the rest training data"): a seeded random draw, no test word
    or test definition in training. ``authors``: as the authors' code builds it (``preprocess/sort_freq.py`` of
    muhaochen/bilingual_dictionaries): the most frequent defined words (frequency in the shipped bitext) are the
    test words, each test definition is the word's first or second (a seeded coin), and every other line of a test
    word goes to training — the test pair itself n − 1 times and each other definition n times for a word with n
    definitions, as every line of a word with n lines is written n times (``copies``). Both draw test words from
    the held-out pool only, so no map of the space is fitted on them.
    """

    spaces: dict[Literal["es", "fr"], str] = Field(default_factory=lambda: {
        "es": str(output_root() / "ray_results" / "bildrl-embeddings-en-es"),
        "fr": str(output_root() / "ray_results" / "bildrl-embeddings-en-fr"),
    })
    test_words: PositiveInt = 500
    seed: int = 7
    split: Literal["strict", "authors"] = "strict"
    paraphrase_concepts: PositiveInt = 3000
    neighbours: PositiveInt = 15
    paraphrase_split: tuple[PositiveFloat, PositiveFloat, PositiveFloat] = (0.70, 0.05, 0.25)
    translation_batch: PositiveInt = 2000
    output_dir: str | None = None

    @field_validator("paraphrase_split")
    @classmethod
    def _fractions(cls, split: tuple[float, float, float]) -> tuple[float, float, float]:
        if abs(sum(split) - 1.0) > 1e-6:
            raise ValueError(f"must be three positive fractions summing to 1 (train, dev, test); got {split}")
        return split

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir).expanduser() if self.output_dir else output_root() / "bildrl" / "data"


class DictionaryModelConfig(Config):
    """The definition encoder: ``encoder`` (the paper's bow, cnn, gru, att: :data:`MODELS`), ``hidden`` units,
    ``layers`` stacked recurrent layers, then two affine layers (hidden → hidden → word-vector size).
    ``max_tokens``: definition length."""

    encoder: Literal["bow", "cnn", "gru", "att"] = "att"
    hidden: PositiveInt = 200
    layers: PositiveInt = 1
    max_tokens: PositiveInt = 15


class JointConfig(Config):
    """Joint learning (Chen et al. §3.3): the word table is trained too, with ``skipgram_weight`` × skip-gram
    (negative sampling, ``window``, ``negatives``) on each language of ``bitext_pairs`` Tatoeba pairs and
    ``alignment_weight`` × the bag-of-words alignment loss on the same pairs. Off unless ``enabled``."""

    enabled: bool = False
    skipgram_weight: PositiveFloat = 0.1
    alignment_weight: PositiveFloat = 0.1
    window: PositiveInt = 3
    negatives: PositiveInt = 5
    bitext_pairs: PositiveInt = 20000


class BilDRLConfig(TrainingConfig):
    """One BilDRL run (recipe ``bildrl``): ``directions`` (one = single direction, two = multi-task with shared
    parameters; all of one space), the built ``data_dir`` (default ``outputs/bildrl/data``), the ``space`` of those
    directions (default: the build config's), ``max_train_rows`` per direction (a seeded sample; None = all), and the
    paper's AMSGrad, lr 5e-4, batch 64. ``paraphrase``: also score bilingual paraphrase identification (en-es).
    ``evaluate_on``: further directions whose held-out words are retrieved at the end, with no training on them
    (a mono baseline trained on ``en-en`` retrieves the ``es-en`` test words among the Spanish rows). ``loss``:
    the paper's ``l2`` onto the word's vector, or ``softmax`` over the words of the word's language by cosine at
    ``temperature`` (:class:`~parabit.objectives.dictionary_softmax.DictionarySoftmaxLoss`). ``evaluate_seen``: also
    retrieve the words of that many of the run's own training rows (a seeded sample), as ``<direction>/seen/*``: how
    well the model fits what it saw, beside how well it finds the held-out words.

    ``balance``: how a multi-task run weighs its directions in an epoch. ``none``: each direction with its own
    training rows, so the larger dictionary decides most of the shared encoder's updates. ``equal`` (the shipped
    MTL and joint configs): every direction brought to as many rows as the largest, the smaller ones repeated
    (:func:`parabit.recipes.bildrl.prepare.balanced`). Why equal: the paper's finding "MTL > the single-direction
    model" is read per direction, and here the directions' sizes are set by what the shipped data covers and by the
    split's copies, not by the paper's dictionaries, so neither direction's result should be decided by the
    other's size; and why by repeating the smaller rather than sampling the larger down: each direction keeps
    exactly the rows its single-direction run trains on (the authors' split's repeated test pairs included, which
    are what that split measures), so the MTL cell differs from the single-direction cells only in sharing the
    encoder."""

    section_defaults = {"optim": {"name": "adam", "lr": 5e-4, "batch_size": 64, "epochs": 5, "amsgrad": True},
                        "tracking": {"experiment": "parabit-bildrl", "register_as": ""}}

    recipe: Literal["bildrl"] = "bildrl"
    name: str = Field("bildrl-att-fr-en", pattern=r"^[^/\s]+$")
    directions: tuple[Direction, ...] = ("fr-en",)
    data_dir: str | None = None
    space: str | None = None
    max_train_rows: PositiveInt | None = None
    model: DictionaryModelConfig = Field(default_factory=DictionaryModelConfig)
    joint: JointConfig = Field(default_factory=JointConfig)
    paraphrase: bool = True
    evaluate_on: tuple[Direction, ...] = ()
    loss: Literal["l2", "softmax"] = "l2"
    temperature: PositiveFloat = 0.05
    evaluate_seen: NonNegativeInt = 0
    balance: Literal["none", "equal"] = "none"

    @model_validator(mode="after")
    def _one_space(self):
        if not self.directions:
            raise ValueError(f"directions is empty; choose one or two of {list(DIRECTIONS)}")
        languages = {foreign_language(d) for d in self.directions}
        if len(languages) > 1:
            raise ValueError(f"directions {list(self.directions)} use different spaces ({sorted(languages)}); "
                             "a multi-task run trains directions of one language pair")
        return self

    @property
    def language(self) -> str:
        return foreign_language(self.directions[0])

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser() if self.data_dir else DictionaryBuildConfig().output_path

    @property
    def space_path(self) -> Path:
        return Path(self.space).expanduser() if self.space else Path(DictionaryBuildConfig().spaces[self.language])
