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
    """Foreign language → its bilingual space (a training run folder or an embedder folder); a defined word must be one
    of its rows. Default: the J_bi spaces of `jobs/configs/bildrl/embeddings_*.yaml` under `<outputs>/ray_results`."""
    test_words: PositiveInt = 500
    """Defined words held out per direction (each with one test definition), drawn from the held-out pool as `split`
    says; the build fails if the pool has too few."""
    seed: int = 7
    """Seeds the `strict` draw of test words, the `authors` split's first-or-second coin, and the paraphrase set's
    sample of synsets and choice of negatives."""
    split: Literal["strict", "authors"] = "strict"
    """`strict` (the paper's text): a seeded draw, no test word or test definition in training. `authors` (the
    authors' code): the most frequent words, test pairs kept in training and each word's lines repeated."""
    paraphrase_concepts: PositiveInt = 3000
    """WordNet synsets sampled for the en-es paraphrase set, each giving one positive and one negative pair (a synset
    whose neighbours all share it gives neither)."""
    neighbours: PositiveInt = 15
    """A negative pair's Spanish definition belongs to one of this many nearest English words (in the space, among the
    en-es dictionary's words) of the synset's lemma; neighbours that share the synset are skipped."""
    paraphrase_split: tuple[PositiveFloat, PositiveFloat, PositiveFloat] = (0.70, 0.05, 0.25)
    """Train, dev and test fractions of the paraphrase set, split by synset; they must sum to 1."""
    translation_batch: PositiveInt = 2000
    """English definitions per Apertium call when translating them into Spanish for en-es."""
    output_dir: str | None = None
    """Where the stages are written; null: `<outputs>/bildrl/data` (`$PARABIT_OUTPUT`, else the project's `outputs`)."""

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
    """The definition encoder: bag-of-words, convolutional, GRU, or GRU with attention (the paper's four)."""
    hidden: PositiveInt = 200
    """Units of the encoder's output and of the head's first affine layer."""
    layers: PositiveInt = 1
    """Stacked recurrent layers of the `gru` and `att` encoders; `bow` and `cnn` ignore it."""
    max_tokens: PositiveInt = 15
    """Tokens of a definition the encoder reads, in training and at evaluation; the rest is cut."""


class JointConfig(Config):
    """Joint learning (Chen et al. §3.3): the word table is trained too, with ``skipgram_weight`` × skip-gram
    (negative sampling, ``window``, ``negatives``) on each language of ``bitext_pairs`` Tatoeba pairs and
    ``alignment_weight`` × the bag-of-words alignment loss on the same pairs. Off unless ``enabled``."""

    enabled: bool = False
    """Joint learning: train the word table with the encoder, adding the skip-gram and alignment losses; off, the table
    stays frozen and the other fields of this section do nothing."""
    skipgram_weight: PositiveFloat = 0.1
    """Weight of the skip-gram loss (of both sides of a bitext batch) added to each step's dictionary loss."""
    alignment_weight: PositiveFloat = 0.1
    """Weight of the bag-of-words alignment loss (squared distance between a pair's mean word vectors) added to each
    step's dictionary loss."""
    window: PositiveInt = 3
    """Skip-gram context: a word predicts the words up to this many positions away on either side."""
    negatives: PositiveInt = 5
    """Skip-gram noise words per (word, context) pair, drawn uniformly from the words of the sentence's language."""
    bitext_pairs: PositiveInt = 20000
    """Tatoeba pairs of the run's language (a seeded sample) the joint losses train on; each step draws a batch of
    `optim.batch_size` of them."""


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
    """The recipe, `bildrl` for this config."""
    name: str = Field("bildrl-att-fr-en", pattern=r"^[^/\s]+$")
    """The run's name, without `/` or spaces: a re-run of the same name resumes it."""
    directions: tuple[Direction, ...] = ("fr-en",)
    """`<word language>-<definition language>`: one direction, or two of one space (`en-es` and `es-en`) trained as one
    multi-task model with shared parameters; `en-en` is the monolingual baseline."""
    data_dir: str | None = None
    """Folder of the built dictionaries (the build config's `output_dir`); null: `<outputs>/bildrl/data`."""
    space: str | None = None
    """The bilingual space the definitions map onto (a run or embedder folder), the one the dictionaries were built on;
    null: the build config's default space of the run's language (an `en-en` run must set it)."""
    max_train_rows: PositiveInt | None = None
    """Training rows per direction: a seeded sample of the rows of words that are not test words (the rows of test
    words that the `authors` split puts in training are kept as well); null: all."""
    model: DictionaryModelConfig = Field(default_factory=DictionaryModelConfig)
    """The definition encoder and its two affine layers onto the word vectors."""
    joint: JointConfig = Field(default_factory=JointConfig)
    """Joint learning of the word table with skip-gram and bag-of-words alignment (Chen et al. §3.3); off by default."""
    paraphrase: bool = True
    """Also score en-es bilingual paraphrase identification at the end; only for runs on the Spanish space (en-es,
    es-en), ignored by the others."""
    evaluate_on: tuple[Direction, ...] = ()
    """Further directions whose held-out words are retrieved at the end, untrained (an `en-en` mono baseline on the
    `es-en` test words); their dictionaries must be in `data_dir`. Empty: the trained directions only."""
    loss: Literal["l2", "softmax"] = "l2"
    """`l2`: the paper's squared distance to the word's vector. `softmax`: cross-entropy over the words of the word's
    language by cosine at `temperature`, offered because L2 leaves held-out words near chance here."""
    temperature: PositiveFloat = 0.05
    """What the cosines are divided by in `loss: softmax` (ignored with `l2`): lower sharpens the softmax."""
    evaluate_seen: NonNegativeInt = 0
    """Also retrieve the words of this many training rows per direction (a seeded sample), as `<direction>/seen/*`:
    fitting beside generalising; 0: off."""
    balance: Literal["none", "equal"] = "none"
    """How a multi-task run weighs its directions: `none`, each with its own rows (the larger decides most updates);
    `equal`, each brought to the largest's size by repeating its rows, so neither result hangs on the other's size."""

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
