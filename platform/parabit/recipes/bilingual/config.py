"""The configuration of recipe ``bilingual``: Spanish word vectors for an English averaging model, so that one model
encodes both languages into one space.

Load with ``load_run_config("jobs/configs/bilingual/bilingual.yaml")``; every field is documented here and checked
when the file is loaded, with a message that names the field.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, field_validator, model_validator

from parabit.config import Config, check_name
from parabit.data.heldout import RETRIEVAL_SETS, HeldoutSetting
from parabit.evaluation.config import EvaluationConfig
from parabit.training import TrainingConfig

BILINGUAL_MODEL = "parabit-encoder-bilingual"


class BilingualDataConfig(Config):
    """The English–``lang`` pairs the Spanish rows learn from: the bitext of ``sources`` (``tatoeba``, ``europarl``:
    the shipped Europarl sample, ``newstest2013``; newstest2012 is a test set here), and with ``dictionary`` the
    MUSE ``lang``-en training dictionary as one-word pairs (its BLI test words left out). ``heldout: exclude`` (the
    default) leaves out every pair sharing a sentence with the held-out evaluation sets (:mod:`parabit.data.heldout`,
    counted among the rejected). ``max_pairs``: a seeded sample of that many pairs (null: all). ``min_count``: a
    Spanish word's occurrences in the training text to get a row of its own (rarer words read as the unknown word)."""

    lang: Literal["es"] = "es"
    """The language the model learns besides English: ``es``, the one with shipped bitext, a MUSE dictionary and
    held-out evaluation sets."""
    sources: tuple[Literal["tatoeba", "europarl", "newstest2013"], ...] = ("tatoeba", "europarl", "newstest2013")
    """The English–``lang`` bitext read, in this order: ``tatoeba``, ``europarl`` (the shipped Europarl sample),
    ``newstest2013``; newstest2012 is never trained on (a test set). Empty: the dictionary's pairs only."""
    dictionary: bool = True
    """Also train on the MUSE ``lang``-en training dictionary as one-word pairs (its BLI test words left out)."""
    heldout: HeldoutSetting = "exclude"
    """``exclude``: leave out every pair sharing a sentence with the held-out evaluation sets (Tatoeba es–en test and
    dev, newstest2012), counted among the rejected; ``keep``: train on them too, so the scores on those sets are no
    longer held out."""
    max_pairs: PositiveInt | None = None
    """Train on a seeded sample of this many distinct pairs (null: every pair kept)."""
    min_count: PositiveInt = 1
    """A Spanish word's occurrences in the kept pairs needed for a row of its own; rarer words read as unknown."""
    seed: int = 13
    """Seeds the ``max_pairs`` sample and the N(0, ``model.init_std``²) draw of the Spanish rows ``model.foreign_init``
    does not place."""


class BilingualModelConfig(Config):
    """The English model the space is built around and where the Spanish rows start.

    ``base``: the English averaging model whose vectors the Spanish sentences learn to match, and whose English rows,
    word weights, common components and tokenizer the bilingual model keeps unchanged: a registered model
    (``models:/parabit-encoder@champion``), an MLflow run's model (``runs:/...``) or a training run's folder
    (``outputs/ray_results/<name>``: its newest checkpoint). ``foreign_init``: each Spanish word starts at the mean
    base-model vector of (up to 3 of) its English translations in the MUSE training dictionary (``muse``), at the
    t-weighted mean of the base-model vectors of its ``aligned_translations`` likeliest English words under IBM
    Model 1 fitted on the training pairs (``aligned``: the project's aligned space, projected onto the base model's
    rows, :mod:`parabit.recipes.bildrl.aligned_space`), or at the base model's own row of that Spanish word where it
    has one (``base``; a model trained on en–es bitext has them). Words the start does not place: N(0,
    ``init_std``²). ``sif_a``: the SIF weight ``a / (a + p(w))`` of Spanish words, ``p`` from the training text
    (English words keep the base model's weights)."""

    base: str = Field(min_length=1)
    """The English averaging model (encoder ``avg``, ``en:`` words) to extend: a registered model
    (``models:/parabit-encoder@champion``), an MLflow run's model (``runs:/...``), or a folder (relative: in the
    project): an embedder, a checkpoint, or a training run's, its newest checkpoint."""
    foreign_init: Literal["muse", "aligned", "base"] = "muse"
    """Where each Spanish row starts: ``muse``, the mean base-model vector of (up to 3 of) its English translations in
    the MUSE training dictionary; ``aligned``, the t-weighted mean of its likeliest English words under IBM Model 1 on
    the training pairs; ``base``, the base model's own row of it."""
    aligned_iterations: PositiveInt = 5
    """EM iterations of IBM Model 1 (``foreign_init: aligned`` only)."""
    aligned_translations: PositiveInt = 10
    """How many of a Spanish word's likeliest English words its start averages (``foreign_init: aligned`` only)."""
    init_std: PositiveFloat = 0.1
    """Standard deviation of the N(0, σ²) start of the Spanish rows ``foreign_init`` does not place (the unknown Spanish
    word's among them)."""
    sif_a: PositiveFloat = 1e-3
    """SIF's ``a`` in a Spanish word's weight ``a / (a + p(w))``, ``p`` its frequency in the training text: the smaller,
    the more frequent words are weighed down. English words keep the base model's weights."""


class BilingualObjectiveConfig(Config):
    """What the Spanish rows are trained by: ``target`` weighs the squared distance between a Spanish sentence's
    vector and the base model's vector of its English translation (multilingual distillation, Reimers & Gurevych
    2020: the base model is the teacher and its English rows stay as they are); ``pair`` adds a pair objective of
    :data:`parabit.objectives.OBJECTIVES` across the languages (``jpa``, ``jbi``; its negatives from the batch),
    weighted ``pair_weight``, with ``pair_options`` its constructor options (e.g. ``{margin: 0.4, strategy: max}``).
    """

    target: NonNegativeFloat = 1.0
    """Weight of the distillation term: the squared L2 distance of a Spanish sentence's vector to the base model's
    vector of its English translation (0: off)."""
    pair: str | None = None
    """A pair objective added across the languages (``jbi``, ``jpa``; negatives from the batch), the English side being
    the base model's fixed vectors; null: none."""
    pair_weight: NonNegativeFloat = 1.0
    """Weight of the ``pair`` term (unused without ``pair``)."""
    pair_options: dict = Field(default_factory=dict)
    """Options of the ``pair`` objective, e.g. ``{margin: 0.4, strategy: max}`` for ``jpa``; empty: its defaults."""

    @field_validator("pair")
    @classmethod
    def _pair_objective(cls, name: str | None) -> str | None:
        from parabit.objectives import objective_names

        return None if name is None else check_name(name, objective_names("pair"), "pair objective")

    @model_validator(mode="after")
    def _something_to_train(self):
        if not self.target and not (self.pair and self.pair_weight):
            raise ValueError("objective.target is 0 and no objective.pair is weighted: nothing would train")
        return self


class BilingualConfig(TrainingConfig):
    """A run of recipe ``bilingual``. ``dev``: the dev set scored after every epoch (``tatoeba-es-dev``: retrieval
    on the 1,000 Tatoeba dev pairs, both directions); ``selection: best`` keeps the best epoch on it. The exported
    model reads English and Spanish (each sentence's language detected, or given) and is registered as
    ``parabit-encoder-bilingual``; its evaluation adds the bilingual sets (``evaluation``) to the English STS and
    SICK."""

    section_defaults = {"tracking": {"experiment": "parabit-bilingual", "register_as": BILINGUAL_MODEL},
                        "evaluation": {"bitext_retrieval": list(RETRIEVAL_SETS), "msrp": False}}

    recipe: Literal["bilingual"] = "bilingual"
    """The recipe that trains this config: ``bilingual``."""
    name: str = Field("bilingual-es", pattern=r"^[^/\s]+$")
    """The run's name (no ``/`` or spaces): re-running with the same name resumes its last checkpoint and MLflow run."""
    data: BilingualDataConfig = Field(default_factory=BilingualDataConfig)
    """The English–Spanish training pairs and which Spanish words get rows."""
    model: BilingualModelConfig
    """The English base model (``model.base``, required) and where the Spanish rows start."""
    objective: BilingualObjectiveConfig = Field(default_factory=BilingualObjectiveConfig)
    """How the Spanish rows are trained: distance to the base model's English vectors, optionally a pair objective."""
    evaluation: EvaluationConfig = Field(default_factory=lambda: EvaluationConfig(bitext_retrieval=RETRIEVAL_SETS,
                                                                                  msrp=False))
    """The final evaluation; by default English STS and SICK plus Tatoeba and newstest2012 es–en retrieval, no MSRP."""
    dev: str = "tatoeba-es-dev"
    """The dev set scored after every epoch, a name of ``parabit.evaluation.dev.DEV_SETS``; registered versions are
    compared on ``tatoeba-es-dev`` whatever it is."""
    selection: Literal["last", "best"] = "best"
    """Which epoch's model is evaluated and exported: ``best`` on ``dev``, or ``last``."""
    # What the registered versions of this model are compared by (``parabit promote``): not a field.
    promotion_dev_set: ClassVar[str] = "tatoeba-es-dev"

    @field_validator("dev")
    @classmethod
    def _known_dev_set(cls, name: str) -> str:
        from parabit.evaluation.dev import DEV_SETS

        return check_name(name, DEV_SETS, "dev set")
