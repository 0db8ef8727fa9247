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
    sources: tuple[Literal["tatoeba", "europarl", "newstest2013"], ...] = ("tatoeba", "europarl", "newstest2013")
    dictionary: bool = True
    heldout: HeldoutSetting = "exclude"
    max_pairs: PositiveInt | None = None
    min_count: PositiveInt = 1
    seed: int = 13


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
    foreign_init: Literal["muse", "aligned", "base"] = "muse"
    aligned_iterations: PositiveInt = 5
    aligned_translations: PositiveInt = 10
    init_std: PositiveFloat = 0.1
    sif_a: PositiveFloat = 1e-3


class BilingualObjectiveConfig(Config):
    """What the Spanish rows are trained by: ``target`` weighs the squared distance between a Spanish sentence's
    vector and the base model's vector of its English translation (multilingual distillation, Reimers & Gurevych
    2020: the base model is the teacher and its English rows stay as they are); ``pair`` adds a pair objective of
    :data:`parabit.objectives.OBJECTIVES` across the languages (``jpa``, ``jbi``; its negatives from the batch),
    weighted ``pair_weight``, with ``pair_options`` its constructor options (e.g. ``{margin: 0.4, strategy: max}``).
    """

    target: NonNegativeFloat = 1.0
    pair: str | None = None
    pair_weight: NonNegativeFloat = 1.0
    pair_options: dict = Field(default_factory=dict)

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
    name: str = Field("bilingual-es", pattern=r"^[^/\s]+$")
    data: BilingualDataConfig = Field(default_factory=BilingualDataConfig)
    model: BilingualModelConfig
    objective: BilingualObjectiveConfig = Field(default_factory=BilingualObjectiveConfig)
    evaluation: EvaluationConfig = Field(default_factory=lambda: EvaluationConfig(bitext_retrieval=RETRIEVAL_SETS,
                                                                                  msrp=False))
    dev: str = "tatoeba-es-dev"
    selection: Literal["last", "best"] = "best"
    # What the registered versions of this model are compared by (``parabit promote``): not a field.
    promotion_dev_set: ClassVar[str] = "tatoeba-es-dev"

    @field_validator("dev")
    @classmethod
    def _known_dev_set(cls, name: str) -> str:
        from parabit.evaluation.dev import DEV_SETS

        return check_name(name, DEV_SETS, "dev set")
