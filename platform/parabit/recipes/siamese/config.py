"""The supervised Siamese training configuration (Bao et al. 2018; Mueller & Thyagarajan 2016).

Recipe ``siamese``. Load with ``load_config(SiameseConfig, "jobs/configs/siamese/sick_en.yaml")``. The sections every
run has (``optim``, ``scaling``, ``tracking``) are the training kernel's (:mod:`parabit.training.config`); the
defaults differ (20 epochs, batch 64, gradients clipped at 1, the best-on-dev epoch tested).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt, model_validator

from parabit.config import Config
from parabit.text.tokenize import TokenizerName
from parabit.training import TrainingConfig

# Bao et al.'s four models: the Siamese encoder each one shares between its two sentences.
VARIANTS: dict[str, tuple[str, dict]] = {
    "sialstm": ("lstm", {"pooling": "last"}),
    "siabilstm": ("bilstm", {"pooling": "last"}),
    "attsialstm": ("attentive_lstm", {}),
    "attsiabilstm": ("attentive_lstm", {"bidirectional": True}),
}


class SiameseDataConfig(Config):
    """Which labelled pairs, in which languages, cut to how many tokens.

    ``task``: ``sick`` (relatedness 1–5: train → trial as dev → test) or ``msrp`` (paraphrase 0/1: train minus a
    seeded ``dev_fraction`` held out as dev → test). ``language`` (SICK only): ``en`` (the original), ``es`` (both
    sentences from the translated SICK at ``translated_path``) or ``en-es`` (cross-lingual: sentence A English,
    sentence B Spanish). ``translated_path``: the stage ``jobs/translate_sick.py`` writes, by default
    ``pipeline:sick-es/translate`` (under ``$PARABIT_OUTPUT``, where that job writes it), or a folder (relative to
    the project). ``max_length``: tokens kept per sentence (Bao et al.'s
    Table II tunes it over 15/20/25). ``max_pairs_per_split``: the first pairs of each split only (quick runs, tests).
    """

    task: Literal["sick", "msrp"] = "sick"
    """``sick``: relatedness 1–5 (train, trial as dev, test); ``msrp``: paraphrase 0/1 (train minus a held-out dev
    split, test)."""
    language: Literal["en", "es", "en-es"] = "en"
    """SICK only: ``en`` (the original), ``es`` (both sentences from the translated SICK) or ``en-es`` (cross-lingual:
    sentence A English, B Spanish). MSRP is ``en``."""
    translated_path: str = "pipeline:sick-es/translate"
    """The translated SICK, read for ``language`` ``es`` and ``en-es``: a ``pipeline:`` stage under ``$PARABIT_OUTPUT``
    (by default where ``jobs/translate_sick.py`` writes it) or a folder relative to the project."""
    max_length: PositiveInt = 25
    """Tokens kept per sentence, the rest cut (Bao et al. tune it over 15, 20 and 25)."""
    dev_fraction: float = Field(0.1, gt=0.0, lt=1.0)
    """MSRP only: the share of the training pairs held out (seeded) as the dev set."""
    max_pairs_per_split: PositiveInt | None = None
    """Only the first this many pairs of each split, dev and test included (quick runs, tests); null: all."""
    tokenizer: TokenizerName = "regexp"
    """The word tokenizer: ``regexp`` (Penn-Treebank-like splits) or nltk's ``toktok``, ``treebank``, ``wordpunct``."""
    lowercase: bool = True
    """Lower-case the text before tokenising; ``model.init: glove`` needs it (GloVe 6B words are lower-cased)."""
    seed: int = 13
    """Seeds the MSRP dev split (unused for SICK)."""

    @model_validator(mode="after")
    def _msrp_is_english(self):
        if self.task == "msrp" and self.language != "en":
            raise ValueError("data.language: MSRP is English only; set data.language: en (or data.task: sick)")
        return self

    @property
    def languages(self) -> tuple[str, str]:
        """The vocabulary namespace of sentence A and of sentence B."""
        return {"en": ("en", "en"), "es": ("es", "es"), "en-es": ("en", "es")}[self.language]


class SiameseModelConfig(Config):
    """The shared encoder: one of Bao et al.'s four ``variant``s, ``hidden_size`` units per direction (50 in the
    paper), over ``dim``-d word vectors.

    ``init``: ``glove`` (GloVe 6B 50d for English words; the paper used 300-d fastText), ``space`` (the word table of
    a parabit embedder at ``space``, an embedder folder or a ``models:/`` URI, e.g. the bilingual en/es space of
    ``jobs/configs/siamese/bilingual_space.yaml``; its ``en:``/``es:`` rows) or ``random``. Words the vectors lack
    start as N(0, ``init_std``²). ``train_embeddings``: fine-tune the word table (off: fixed vectors, as MaLSTM).
    """

    variant: Literal["sialstm", "siabilstm", "attsialstm", "attsiabilstm"] = "attsialstm"
    """The shared encoder: ``sialstm`` (LSTM, last state), ``siabilstm`` (BiLSTM, last states), ``attsialstm`` /
    ``attsiabilstm`` (LSTM / BiLSTM with attention pooling)."""
    hidden_size: PositiveInt = 50
    """LSTM units per direction (a bidirectional variant's sentence vector has twice as many); 50 in the paper."""
    dim: PositiveInt = 50
    """Dimension of the word vectors: 50 with ``init: glove`` (GloVe 6B 50d), the space's own with ``init: space``."""
    init: Literal["glove", "space", "random"] = "glove"
    """Where the word table starts: ``glove`` (GloVe 6B 50d, English words only), ``space`` (the rows of the embedder at
    ``space``) or ``random``."""
    space: str | None = None
    """With ``init: space``: the parabit embedder whose ``en:``/``es:`` rows start the table, a ``models:/`` or
    ``runs:/`` URI or a folder (an embedder, or a run's: its newest checkpoint)."""
    init_std: PositiveFloat = 0.5
    """Standard deviation of the N(0, σ²) start of words the initial vectors lack (every word with ``init: random``)."""
    train_embeddings: bool = False
    """Fine-tune the word table with the encoder; off keeps the initial vectors fixed, as MaLSTM does."""

    @model_validator(mode="after")
    def _init_needs(self):
        if self.init == "glove" and self.dim != 50:
            raise ValueError(f"model.init 'glove' loads GloVe 6B 50d vectors: set model.dim to 50 (it is {self.dim})")
        if self.init == "space" and not self.space:
            raise ValueError("model.init 'space' needs model.space: an embedder folder or a models:/ URI")
        return self

    @property
    def encoder(self) -> tuple[str, dict]:
        """``(encoder name in parabit.encoders.ENCODERS, its options)`` for this variant."""
        name, options = VARIANTS[self.variant]
        return name, {**options, "hidden_size": self.hidden_size}


class SiameseConfig(TrainingConfig):
    """A supervised run (recipe ``siamese``). ``name`` identifies it: re-running with the same name resumes.

    The objective follows the task (:attr:`objective`): MaLSTM regression (MSE of ``1 + 4·exp(−‖h_a − h_b‖₁)`` against
    the 1–5 gold) for SICK, binary cross-entropy of ``exp(−‖h_a − h_b‖₁)`` against the paraphrase label for MSRP,
    whose decision threshold is then chosen on dev. After every epoch the dev set is scored (``dev_score``: Pearson r
    on SICK trial, accuracy on the MSRP dev split); the epoch with the best ``dev_score`` is the model tested.
    """

    section_defaults = {"optim": {"lr": 0.001, "batch_size": 64, "epochs": 20, "clip_norm": 1.0},
                        "tracking": {"experiment": "parabit-siamese", "register_as": ""}}

    recipe: Literal["siamese"] = "siamese"
    """The recipe that trains this config: ``siamese``."""
    name: str = Field("siamese-sick-en-attsialstm", pattern=r"^[^/\s]+$")
    """The run's name (no ``/`` or spaces): re-running with the same name resumes its last checkpoint and MLflow run."""
    data: SiameseDataConfig = Field(default_factory=SiameseDataConfig)
    """The labelled pairs: task, language, tokenisation and length cut."""
    model: SiameseModelConfig = Field(default_factory=SiameseModelConfig)
    """The shared Siamese encoder and its initial word vectors."""
    selection: Literal["last", "best"] = "best"
    """Which epoch's model is tested: ``best`` on ``dev_score`` (Pearson r on SICK trial, accuracy on the MSRP dev
    split), or ``last``."""

    @model_validator(mode="after")
    def _glove_is_english(self):
        if self.model.init == "glove" and "en" not in self.data.languages:
            raise ValueError("model.init 'glove' has English vectors only; for data.language 'es' use "
                             "model.init: space with the bilingual space (jobs/configs/siamese/bilingual_space.yaml)")
        if self.model.init == "glove" and not self.data.lowercase:
            raise ValueError("model.init 'glove' needs data.lowercase: GloVe 6B words are lower-cased")
        return self

    @property
    def objective(self) -> str:
        """The registered objective of the task (``parabit.objectives``)."""
        return "malstm" if self.data.task == "sick" else "malstm_classification"
