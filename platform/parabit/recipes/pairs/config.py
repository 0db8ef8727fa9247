"""The configuration of pair training (recipe ``pairs``): J_bi / J_pa on bilingual or paraphrase pairs.

Load with ``load_config(PairsConfig, "jobs/configs/bilingual_sentences.yaml")``; every field is documented here and
checked when the file is loaded, with a message that names the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, field_validator, \
    model_validator

from parabit.config import Config, check_name
from parabit.data.heldout import HeldoutSetting
from parabit.evaluation.config import EvaluationConfig
from parabit.teacher.model import TEACHER_DIM, require_teacher
from parabit.text.tokenize import TokenizerName
from parabit.training import TrainingConfig

FILE_CONDITIONS = ("pairs_parquet", "bilingual_phrases", "pivot_paraphrases")  # need data.path
BITEXT_SOURCES = ("tatoeba", "europarl")  # the default; "newstest" is asked for by name


class PairSource(Config):
    """One set of training pairs.

    ``condition``: ``bilingual_sentences`` (English–``lang`` bitext from ``sources``: ``tatoeba``, ``europarl``,
    ``newstest``, the WMT 2012 and 2013 test sets shipped beside Europarl, or ``newstest2013`` alone: newstest2012 is
    the held-out retrieval set of the bilingual evaluation), ``ppdb`` (PPDB lexical paraphrase pairs,
    both sides English), ``pairs_parquet`` (a parquet file from a parabit pipeline with columns ``text_a``,
    ``text_b`` and optional ``lang_a``/``lang_b``), ``bilingual_phrases`` (a phrase table from ``parabit phrases``:
    columns ``en``, ``foreign``, ``lang``) or ``pivot_paraphrases`` (its pivot paraphrases: columns ``phrase``,
    ``paraphrase``). ``path`` is the parquet file or folder, or a list of them (read in order, as one set of pairs);
    ``pipeline:<name>`` names the selected pairs of the back-translation pipeline ``<name>`` (run it first:
    ``parabit backtranslate --config ...``). ``min_pair_count``: a phrase table's pairs extracted fewer times than
    this are left out (its ``count`` column; 1: every pair, as Moses keeps them).
    """

    condition: Literal["bilingual_sentences", "ppdb", "pairs_parquet", "bilingual_phrases",
                       "pivot_paraphrases"] = "bilingual_sentences"
    """Where the pairs come from: `bilingual_sentences` (the shipped English–`lang` bitext of `sources`), `ppdb`
    (PPDB lexical paraphrases, both sides English), or the parquet `path` of a file condition: `pairs_parquet`,
    `bilingual_phrases` (a `parabit phrases` phrase table) or `pivot_paraphrases` (its pivot paraphrases)."""
    lang: str = "es"
    """The foreign language of `bilingual_sentences` (`es` or `fr`, the shipped bitext); the other conditions ignore
    it and take each pair's language from the file (English where it names none)."""
    sources: tuple[Literal["tatoeba", "europarl", "newstest", "newstest2013"], ...] = BITEXT_SOURCES
    """The bitext `bilingual_sentences` reads, one after another: `tatoeba`, `europarl` (the Europarl v7 excerpt),
    `newstest` (newstest2012 and 2013) or `newstest2013` alone, which keeps the held-out newstest2012 unseen."""
    path: str | list[str] | None = None
    """A file condition's pairs: a parquet file or folder, `pipeline:<name>` (a back-translation pipeline's selected
    pairs) or `pipeline:<name>/<stage>`, or a list of them read in order as one set (relative paths: from the project
    folder). Required by the file conditions; must be left unset for `bilingual_sentences` and `ppdb`."""
    min_pair_count: PositiveInt = 1
    """`bilingual_phrases` only: phrase pairs extracted fewer times than this (the table's `count` column) are left
    out; 1 keeps every pair, as Moses does."""

    @model_validator(mode="after")
    def _path_for_files(self):
        if self.condition in FILE_CONDITIONS and not self.path:
            raise ValueError(f"data.condition {self.condition!r} needs data.path: the parquet file of training pairs")
        if self.condition not in FILE_CONDITIONS and self.path:
            raise ValueError(f"data.path is only read by the file conditions {list(FILE_CONDITIONS)}; "
                             f"data.condition is {self.condition!r}")
        if self.min_pair_count > 1 and self.condition != "bilingual_phrases":
            raise ValueError("data.min_pair_count filters a phrase table by its count column: set data.condition to "
                             f"'bilingual_phrases' (it is {self.condition!r}) or remove it")
        return self

    @property
    def paths(self) -> list[Path]:
        """``path`` as a list of files (``pipeline:<name>`` resolved to that pipeline's output)."""
        from parabit.backtranslation.select import resolve_pairs_path

        raw = [] if self.path is None else [self.path] if isinstance(self.path, str) else list(self.path)
        return [resolve_pairs_path(entry) for entry in raw]

    @property
    def label(self) -> str:
        """A short name of the source, e.g. ``bilingual_sentences-es`` (an MLflow dataset's name)."""
        return f"{self.condition}-{self.lang}" if self.condition == "bilingual_sentences" else self.condition


class DataConfig(PairSource):
    """Which training pairs, and how they become token ids: the pairs of the source described by this section's
    own :class:`PairSource` fields, plus those of every source in ``more`` (e.g. en-fr bitext beside en-es, or
    bilingual sentences beside back-translated English pairs), as one set.

    ``max_pairs``: a seeded sample of that many pairs (null: all). ``max_tokens``: tokens kept per sentence.
    ``min_count`` / ``max_words_per_language``: vocabulary limits. ``glove_words``: also give the vocabulary the
    that many most frequent GloVe words, so a word the pairs lack still has its pre-trained vector at test time
    (with ``model.init: glove``). ``drop_bigrams_of``: reject every pair whose English side shares a word bigram with
    these evaluation sets (``sick``: the SICK test sentences; Elgohary & Carpuat's memorisation check).
    ``component_sentences``: how many distinct English training sentences (a seeded sample) the model's common
    components are fitted on (``model.components``).
    ``teacher_sentences``: how many distinct English training sentences (a seeded sample) the teacher encodes for the
    distillation objective (``objective.distillation``; needs the extra ``parabit[teacher]``); 0: none.
    ``teacher_contextual``: the same teacher pass also keeps each word's contextual vectors (the teacher's states at
    the word in those sentences, :mod:`parabit.teacher.contextual`), for ``model.contextual``.
    ``heldout``: ``exclude`` leaves out every pair of every source that shares a sentence with the held-out
    evaluation sets (:mod:`parabit.data.heldout`: the Tatoeba es–en test and dev pairs, newstest2012), counted
    among the rejected pairs; ``keep`` (the default) reads every pair, as before those sets existed.
    """

    more: list[PairSource] = Field(default_factory=list)
    """Further pair sources (each with the fields `condition`, `lang`, `sources`, `path`, `min_pair_count`) whose
    pairs join this section's own source as one training set; empty: this section's source alone."""
    max_pairs: PositiveInt | None = None
    """Train on a sample of this many pairs (seeded by `seed`), drawn after duplicates and rejected pairs are
    removed; null: every pair."""
    max_tokens: PositiveInt = 40
    """Tokens kept per sentence, on either side: longer sentences are cut, in training and in the exported model."""
    min_count: PositiveInt = 1
    """Words that occur fewer times than this in their language's training text are left out of the vocabulary
    (read as the unknown word); 1 keeps every word."""
    max_words_per_language: PositiveInt | None = None
    """At most this many words per language in the vocabulary, the most frequent (ties alphabetically); null: no
    limit."""
    tokenizer: TokenizerName = "regexp"
    """How text is split into words: `regexp` (Penn-Treebank-like splits at regular-expression speed), or nltk's
    `toktok`, `treebank` or `wordpunct`. The exported model tokenises the same way."""
    lowercase: bool = True
    """Lower-case text before tokenising (the exported model does too); `model.init: glove` needs it."""
    seed: int = 13
    """Seeds the data's samples: `max_pairs`, `component_sentences` and `teacher_sentences` (the model's
    initialisation follows the run's own `seed`)."""
    drop_bigrams_of: tuple[Literal["sick"], ...] = ()
    """Evaluation sets no training pair may share a word bigram with (on its English sides): `sick`, the SICK test
    sentences (Elgohary & Carpuat's memorisation check); empty: no pair is dropped for this."""
    glove_words: NonNegativeInt = 0
    """Also add to the English vocabulary the words among this many most frequent GloVe words that it lacks, so a
    test word the pairs lack still starts from its GloVe vector (with `model.init: glove`); 0: none."""
    component_sentences: PositiveInt = 50_000
    """How many distinct English training sentences (a seeded sample) `model.components` is fitted on."""
    teacher_sentences: NonNegativeInt = 0
    """How many distinct English training sentences (a seeded sample) the teacher encodes for
    `objective.distillation` (needs the extra `parabit[teacher]`); 0: no teacher pass."""
    teacher_contextual: bool = False
    """The teacher's pass over the `teacher_sentences` (so set them too) also keeps each word's contextual vectors,
    which `model.contextual` blends into the distilled word vectors."""
    heldout: HeldoutSetting = "keep"
    """`exclude` leaves out (as rejected) every pair that shares a sentence with the held-out evaluation sets
    (Tatoeba es–en test and dev, newstest2012); `keep` reads every pair, as before those sets existed."""

    @field_validator("teacher_sentences")
    @classmethod
    def _teacher_installed(cls, count: int) -> int:
        if count:
            require_teacher("data.teacher_sentences")
        return count

    @property
    def all_sources(self) -> list[PairSource]:
        """This section's own source, then those of ``more``."""
        return [PairSource(condition=self.condition, lang=self.lang, sources=self.sources, path=self.path,
                           min_pair_count=self.min_pair_count), *self.more]

    @property
    def all_paths(self) -> list[Path]:
        """The files every source reads."""
        return [path for source in self.all_sources for path in source.paths]


class ModelConfig(Config):
    """The encoder: a name from ``parabit.encoders.ENCODERS`` and its options.

    ``init``: ``random`` (normal with standard deviation ``init_std``; 1.0 as in ``nn.Embedding``, which scored
    better than 0.1 here), ``glove`` (GloVe 6B 50d for English words, ``init_std`` for the rest; needs ``dim: 50``)
    or ``distilled`` (every English word of the vocabulary encoded alone by the teacher all-MiniLM-L6-v2, reduced to
    ``dim`` ≤ 384 dimensions by PCA; needs the extra ``parabit[teacher]``; built by ``teacher_actors`` Ray actors
    and cached, see :mod:`parabit.teacher.vectors`).
    ``foreign_init``: with ``init: glove`` or ``distilled``, ``muse`` starts each foreign word at the mean English
    vector of (up to 3 of) its English translations in the MUSE training dictionary (test words excluded), ``random``
    as the rest.
    ``sparse``: sparse word-table gradients (the averaging models; a step then touches only the rows in the batch).
    ``options``: further keyword options of the encoder class (e.g. ``pooling: sum`` for Hermann & Blunsom's
    additive composition, which Elgohary & Carpuat's eq. 1 writes).
    ``contextual``: with ``init: distilled``, a word seen in at least ``contextual_min_count`` of the teacher's
    sentences (``data.teacher_contextual``) starts at ``(1 − contextual)·`` its vector encoded alone ``+ contextual·``
    the mean of its contextual vectors, before the PCA (Wada et al. 2025 take the contextual mean alone); 0: alone.
    ``unknown_words``: how the exported model encodes a word its vocabulary lacks: ``shared``, the language's one
    unknown-word row; ``own``, a row of its own drawn from N(0, ``init_std``²) (seeded by the run's seed and the
    word), what the word's never-trained row would be in a randomly initialised table that held every word
    (averaging encoder only; :class:`parabit.embedder.UnknownWords`).

    Averaging only (``encoder: avg``; SIF, Arora et al. 2017): ``weighting: sif`` scales each word by
    ``sif_a / (sif_a + p(w))`` (``p`` from GloVe's frequency rank, or the training text for words GloVe lacks), in
    training and in the exported model; ``learn_weights`` trains those weights with the words. ``components``: that
    many common directions are removed from every sentence vector, refitted at the start of every epoch on
    ``data.component_sentences`` training sentences (never on evaluation data).
    """

    encoder: str = "avg"
    """The sentence encoder, a name of `parabit.encoders.ENCODERS`: `avg` (word averaging), `gran`, `lstm`,
    `bilstm`, `attentive_lstm`, `gru`, `attentive_gru`, `cnn` or `linear_bow` (`transformer` has its own recipe)."""
    dim: PositiveInt = 300
    """Dimension of the word vectors: 50 with `init: glove`, at most 384 with `init: distilled`."""
    init: Literal["random", "glove", "distilled"] = "random"
    """How the word table starts: `random` (N(0, `init_std`²)), `glove` (GloVe 6B 50d for English words) or
    `distilled` (each English word encoded alone by the teacher, reduced to `dim` by PCA)."""
    foreign_init: Literal["random", "muse"] = "random"
    """With `init: glove` or `distilled`: `muse` starts each foreign word at the mean English vector of up to 3 of
    its MUSE translations (test words excluded); `random` draws it from N(0, `init_std`²)."""
    teacher_actors: PositiveInt = 2
    """`init: distilled` only: how many Ray actors (one CPU each) encode the words the teacher's word cache lacks."""
    init_std: PositiveFloat = 1.0
    """Standard deviation of the randomly drawn rows (all with `init: random`; words without a pre-trained vector
    otherwise) and of `unknown_words: own` rows; 1.0, as in `nn.Embedding`, scored better than 0.1 here."""
    sparse: bool = True
    """Row-sparse word-table gradients, a step touching only the batch's rows (for the averaging models); only
    with `scaling.gradient_exchange: sparse_rows`, the default."""
    weighting: Literal["none", "sif"] = "none"
    """`avg` only: `sif` scales each word's vector by `sif_a / (sif_a + p(w))` before pooling, in training and in
    the exported model; `none`: every word counts alike."""
    sif_a: PositiveFloat = 1e-3
    """SIF's `a` (`weighting: sif`): a smaller `a` down-weights frequent words more; `p(w)` comes from GloVe's
    frequency rank, or from the training text for words GloVe lacks."""
    learn_weights: bool = False
    """With `weighting: sif`: train the word weights along with the word vectors, starting from SIF's; false keeps
    them fixed."""
    components: NonNegativeInt = 0
    """`avg` only: how many common directions are removed from every sentence vector (fitted on
    `data.component_sentences` before training and after every epoch); 0: none. Fewer than `dim`."""
    options: dict = Field(default_factory=dict)
    """Further keyword options of the encoder class, e.g. `pooling: sum` for Hermann & Blunsom's additive
    composition; empty: the class's defaults."""
    contextual: float = Field(0.0, ge=0.0, le=1.0)
    """With `init: distilled`: the weight of a word's mean contextual vector against its vector encoded alone, before
    the PCA; 0: encoded alone, 1: the contextual mean alone (Wada et al. 2025)."""
    contextual_min_count: PositiveInt = 1
    """A word takes its contextual vector (`contextual`) only if it occurs at least this many times in the teacher's
    sentences; rarer words keep their vector encoded alone."""
    unknown_words: Literal["shared", "own"] = "shared"
    """How the exported model encodes a word its vocabulary lacks: `shared`, the language's one unknown-word row;
    `own` (`avg` only), a row of its own from N(0, `init_std`²), seeded by the run's seed and the word."""

    @field_validator("encoder")
    @classmethod
    def _known_encoder(cls, name: str) -> str:
        from parabit.encoders import ENCODERS

        check_name(name, ENCODERS, "encoder")
        if ENCODERS[name].reads_checkpoint:
            raise ValueError(f"the {name} encoder reads a Hugging Face checkpoint folder, not this recipe's word "
                             "vocabulary: train it with recipe `transformer` (jobs/configs/bilingual/transformer.yaml)")
        return name

    @model_validator(mode="after")
    def _consistent(self):
        if self.foreign_init == "muse" and self.init == "random":
            raise ValueError("model.foreign_init 'muse' places foreign words by their English translations' "
                             "pre-trained vectors: set model.init to 'glove' or 'distilled'")
        if self.init == "glove" and self.dim != 50:
            raise ValueError(f"model.init 'glove' loads GloVe 6B 50d vectors: set model.dim to 50 (it is {self.dim})")
        if self.init == "distilled":
            if self.dim > TEACHER_DIM:
                raise ValueError(f"model.init 'distilled' reduces the teacher's {TEACHER_DIM}-d vectors: set "
                                 f"model.dim to at most {TEACHER_DIM} (it is {self.dim})")
            require_teacher("model.init: distilled")
        if self.encoder != "avg" and (self.weighting != "none" or self.components):
            raise ValueError("model.weighting and model.components are for the averaging encoder: set model.encoder "
                             f"to 'avg' (it is {self.encoder!r}) or remove them")
        if self.learn_weights and self.weighting == "none":
            raise ValueError("model.learn_weights needs initial weights: set model.weighting: sif")
        if self.components >= self.dim:
            raise ValueError(f"model.components must be fewer than model.dim ({self.dim})")
        if self.unknown_words == "own" and self.encoder != "avg":
            raise ValueError("model.unknown_words 'own' gives unknown words rows beyond the word table, which only "
                             f"the averaging encoder reads: set model.encoder to 'avg' (it is {self.encoder!r})")
        return self

    def encoder_options(self) -> dict:
        """The encoder class's keyword options this section sets (what the exported spec records)."""
        options = dict(self.options)
        if self.weighting != "none" or self.components:
            options.update(weighted=self.weighting != "none", learn_weights=self.learn_weights,
                           components=self.components)
        return options


class ObjectiveConfig(Config):
    """A pair objective from ``parabit.objectives`` (role ``pair``): ``jbi`` (Elgohary & Carpuat eq. 1) or ``jpa``
    (Wieting et al.).

    ``margin`` is δ; ``negatives`` is k (J_bi random negatives per side) and ``distance`` J_bi's distance; ``sampling``
    picks J_pa's in-batch negatives (``max``, ``mix``, ``rand``); ``regularization`` is λ, applied as
    ``regularization_kind`` (λ/2·‖W‖² or λ·‖W − W_init‖²) to the word-table rows in the batch.
    ``distillation``: the weight of a second loss that fits the student's cosine similarities to the teacher's, over
    every pair of ``distillation_batch`` sentences drawn from the ``data.teacher_sentences`` sample at each step;
    0: J_bi / J_pa alone. ``distillation_loss``: how the similarities are compared, a ``distillation`` objective of
    :data:`parabit.objectives.OBJECTIVES`: ``similarity_distillation`` (mean squared difference of the two cosine
    matrices) or ``similarity_kl`` (each sentence's softmax over its similarities to the others at
    ``distillation_temperature``, the student's fitted to the teacher's: Wada et al. 2025).
    """

    name: str = "jbi"
    """The pair objective: `jbi` (J_bi, a hinge against random in-batch negatives) or `jpa` (J_pa, a cosine margin
    against in-batch negatives chosen by `sampling`)."""
    margin: PositiveFloat = 1.0
    """δ, by which a pair must be closer than its negatives (in `distance` for J_bi, in cosine for J_pa): the default is
    for J_bi; Wieting et al. take 0.4 for J_pa."""
    distance: Literal["euclidean", "cosine"] = "euclidean"
    """J_bi only: `euclidean` (squared, ‖a − b‖²) or `cosine` (1 − cos)."""
    negatives: PositiveInt = 1
    """J_bi only: k, random negatives per pair and side, drawn from the batch's other pairs (with replacement)."""
    sampling: Literal["max", "mix", "rand"] = "max"
    """J_pa only: each sentence's negative among the batch's other sentences: `max` the most cosine-similar (the
    hardest), `rand` a random one, `mix` either with probability ½."""
    regularization: NonNegativeFloat = 0.0
    """λ, the weight of the word-table regulariser on the rows a batch uses; 0: none."""
    regularization_kind: Literal["l2", "l2_to_init"] = "l2"
    """`l2`: λ/2·‖W‖² (Elgohary & Carpuat); `l2_to_init`: λ·‖W − W_init‖², which keeps a copy of the initial table
    in memory (Wieting et al.)."""
    distillation: NonNegativeFloat = 0.0
    """The weight of the distillation loss added to J_bi / J_pa (needs `data.teacher_sentences`); 0: none."""
    distillation_batch: PositiveInt = 100
    """How many of the teacher's sentences each step draws (without replacement) for the distillation loss."""
    distillation_loss: str = "similarity_distillation"
    """`similarity_distillation`: the mean squared difference of the student's and teacher's cosine matrices;
    `similarity_kl`: each sentence's softmax over its similarities, the student's fitted to the teacher's."""
    distillation_temperature: PositiveFloat = 0.05
    """`similarity_kl` only: the softmax temperature of the similarities; lower sharpens the distributions."""

    @field_validator("name")
    @classmethod
    def _pair_objective(cls, name: str) -> str:
        from parabit.objectives import objective_names

        return check_name(name, objective_names("pair"), "pair objective")

    @field_validator("distillation_loss")
    @classmethod
    def _distillation_objective(cls, name: str) -> str:
        from parabit.objectives import objective_names

        return check_name(name, objective_names("distillation"), "distillation objective")

    def distillation_options(self) -> dict:
        """The constructor options of the named distillation objective."""
        return {"temperature": self.distillation_temperature} if self.distillation_loss == "similarity_kl" else {}

    def loss_options(self) -> dict:
        """The constructor options of the named objective."""
        if self.name == "jbi":
            return {"margin": self.margin, "distance": self.distance, "negatives": self.negatives}
        return {"margin": self.margin, "strategy": self.sampling}


class PairsConfig(TrainingConfig):
    """A pair-training run (recipe ``pairs``). ``dev`` is the development set scored after every epoch (a name from
    :data:`parabit.evaluation.dev.DEV_SETS`, e.g. ``sts2016``, ``sts2012-train-smteuroparl`` or
    ``sts2012-train+sick-trial``); its score is reported as ``dev_score``, the metric sweeps optimise and
    ``selection: best`` picks the epoch by."""

    recipe: Literal["pairs"] = "pairs"
    """The recipe that trains this config: always `pairs`."""
    name: str = Field("avg-jbi-bilingual-sentences", pattern=r"^[^/\s]+$")
    """The run's name, without `/` or spaces: a run of the same name resumes from its last checkpoint."""
    data: DataConfig = Field(default_factory=DataConfig)
    """The training pairs and how they become token ids."""
    model: ModelConfig = Field(default_factory=ModelConfig)
    """The encoder and how its word table starts."""
    objective: ObjectiveConfig = Field(default_factory=ObjectiveConfig)
    """The pair objective, its regulariser and any distillation loss."""
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    """The benchmarks the selected model is scored on after training."""
    dev: str = "sts2016"
    """The development set scored after every epoch, a name of `parabit.evaluation.dev.DEV_SETS`; its score is
    `dev_score`, which sweeps optimise and `selection: best` picks the epoch by."""

    @field_validator("dev")
    @classmethod
    def _known_dev_set(cls, name: str) -> str:
        from parabit.evaluation.dev import DEV_SETS

        return check_name(name, DEV_SETS, "dev set")

    @model_validator(mode="after")
    def _consistent(self):
        if self.model.init == "glove" and not self.data.lowercase:
            raise ValueError("model.init 'glove' needs data.lowercase: GloVe 6B words are lower-cased")
        if self.model.contextual and not (self.model.init == "distilled" and self.data.teacher_contextual):
            raise ValueError("model.contextual blends distilled vectors with the teacher's contextual ones: set "
                             "model.init: distilled and data.teacher_contextual: true (with data.teacher_sentences)")
        if self.objective.distillation and not self.data.teacher_sentences:
            raise ValueError("objective.distillation fits the teacher's similarities of data.teacher_sentences "
                             "sentences: set data.teacher_sentences (e.g. 50000)")
        return self
