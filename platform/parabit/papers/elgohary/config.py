"""What the Elgohary & Carpuat (2017) reproduction trains: :class:`ReproductionConfig`, and the training config of
each cell (:func:`train_config`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from parabit.config import Config, ConfigFile, load_config
from parabit.papers.wieting import paper as wieting
from parabit.paths import project_path
from parabit.recipes.pairs.config import PairsConfig
from parabit.phrases import PhrasesConfig

Condition = Literal["bilingual_sentences", "bilingual_phrases", "pivot_paraphrases", "ppdb"]
Objective = Literal["jbi", "jpa"]
Ablation = Literal["composition", "unknown_words", "pruning", "optimiser", "data", "tuning", "budget", "reading"]
MONO = ("ppdb", "pivot_paraphrases")  # the two conditions that stand for the paper's monolingual phrases (MonoPh)
MAIN = ("bilingual_sentences", "bilingual_phrases")  # the paper's central comparison, which every ablation repeats


class ReproductionConfig(Config):
    """What to train. ``phrases_config``: the ``phrases`` pipeline's config (a ``PhrasesConfig`` YAML), whose phrase
    table and pivot paraphrases the phrase conditions train on; ``base_config``: the training YAML (recipe ``pairs``)
    every run starts from. Both have no default: the file names them (relative paths are read from the project
    folder, like every config path). ``common``, ``jbi`` and ``jpa``: dotted overrides (as ``--set``) for every run,
    J_bi runs and J_pa runs. The J_bi defaults (batch 25, Euclidean δ = 1, λ = 1e-3, k = 15) are what every J_bi
    cell trains with when no sweep tunes it (and the ``tuning`` ablation's "earlier single setting"); J_pa uses
    Wieting et al.'s cosine margin 0.4 with MAX negatives, batch 100.
    ``stated``: the J_bi choices the paper states, per condition (dotted overrides, e.g. its §3.2 "increasing k
    consistently helps the bilingual models"): every J_bi cell of the condition trains with them and its sweep does
    not search them (pinned; a value the sweep space does not offer fails). ``contested``: for a condition whose
    stated choice the paper contradicts elsewhere, the other reading (overrides replacing stated ones): swept and
    re-scored the same way, and trained as the ``reading`` ablation. ``max_pairs`` caps every condition at the same
    number of training pairs (a seeded sample; null: every pair of every condition), ``condition_pairs`` one
    condition (e.g. the bilingual phrases at the paper's 1M of a larger table).
    ``analyses``: ``undertrained`` (Table 4), ``memorisation`` (Table 5: J_bi retrained without pairs that share a
    bigram with SICK test), ``sizes`` (Table 6: bilingual phrases, J_bi, at each of ``size_pairs`` pairs the table
    holds — the paper's 0.5M, 1M, 1.9M and 3M — and at the number of bilingual sentence pairs, the paper's
    equal-size comparison with sentences).
    ``ablations``: the departures from the paper measured by training (or evaluating) the other choice for the
    J_bi bilingual sentences and phrases: ``composition`` (mean instead of eq. 1's sum), ``unknown_words`` (one
    shared unknown-word row instead of a random row each: read from the same cells, evaluated both ways),
    ``pruning`` (the phrase table without pairs seen fewer than ``pruned_min_count`` times), ``optimiser`` (the
    best point of the other optimiser in each condition's sweep), ``data`` (Europarl only: the sentences of the
    Europarl sample and the phrases of ``europarl_phrases_config``), ``tuning`` (the ``jbi`` settings instead of
    each condition's own sweep), ``budget`` (the proxy sweep's own best point instead of the best of its points
    re-scored at the cells' scale; see :class:`~parabit.papers.elgohary.plan.ElgoharySettings`' ``rescore``),
    ``reading`` (the ``contested`` reading). Each cell's run name, seed and MLflow experiment are set by the
    reproduction (:mod:`parabit.papers.elgohary.plan`)."""

    name: str = Field("elgohary", pattern=r"^[^/\s]+$")
    """Prefix of the run names :func:`train_config` gives (`<name>-<condition>-<objective>`); a reproduction renames
    every cell (`<prefix>-elgohary-<group>-s<seed>`). No slash or whitespace."""
    phrases_config: ConfigFile
    """The `phrases` pipeline's config (a `PhrasesConfig` YAML) whose phrase table and pivot paraphrases the
    `bilingual_phrases` and `pivot_paraphrases` conditions train on; the pipeline runs first when one of them is on."""
    base_config: ConfigFile
    """The training YAML (recipe `pairs`) every cell starts from, before `common`, `jbi` / `jpa` and the condition's
    own settings are applied."""
    europarl_phrases_config: ConfigFile | None = None
    """A `phrases` pipeline config whose only source is the Europarl sample: the `data` ablation's bilingual phrases.
    Needed only with that ablation; None: no such pipeline."""
    conditions: tuple[Condition, ...] = ("bilingual_sentences", "bilingual_phrases", "pivot_paraphrases", "ppdb")
    """Table 3's training data, a column per objective each: `bilingual_sentences` (bitext sentence pairs),
    `bilingual_phrases` (the phrase table of `phrases_config`), `pivot_paraphrases` (its English paraphrases by
    pivoting) and `ppdb` (PPDB lexical paraphrase pairs)."""
    objectives: tuple[Objective, ...] = ("jbi", "jpa")
    """Table 3's objectives: `jbi` (the paper's eq. 1: a margin over k random negatives) and `jpa` (Wieting et al.'s
    margin over in-batch negatives). Table 5, the ablations and the J_bi sweeps need `jbi`."""
    max_pairs: PositiveInt | None = 20_000
    """Training pairs of every condition, a seeded sample of the same size for each, so conditions compare at equal
    data (a condition with fewer keeps all). None: every pair of every condition."""
    condition_pairs: dict[Condition, PositiveInt] = Field(default_factory=dict)
    """Per-condition sample sizes that replace `max_pairs` for those conditions (e.g. `bilingual_phrases: 1000000`,
    the paper's 1M of a larger table); empty: `max_pairs` for all."""
    epochs: PositiveInt = 10
    """Training epochs of every cell (the base config's `optim.epochs` is replaced)."""
    common: dict = Field(default_factory=lambda: {
        "evaluation.msrp": False, "dev": "sts2012-train-smteuroparl", "tracking.register_as": "",
        "data.sources": ["tatoeba", "europarl"]})
    """Dotted overrides (as `--set`) of every cell, J_bi and J_pa, applied over `base_config`: the default turns MSRP
    evaluation off, scores the paper's dev set (STS 2012 SMT-europarl train) each epoch, registers no model and
    reads Tatoeba and Europarl bitext."""
    jbi: dict = Field(default_factory=lambda: {
        "objective.distance": "euclidean", "objective.margin": 1.0, "objective.regularization": 1.0e-3,
        "objective.negatives": 15, "optim.batch_size": 25})
    """Dotted overrides of every J_bi cell, after `common`: the default is Euclidean δ = 1, λ = 1e-3, k = 15,
    batch 25. A condition tuned by the plan's `jbi_sweep` takes the sweep's choice over these (the `tuning`
    ablation keeps them)."""
    jpa: dict = Field(default_factory=lambda: {
        "objective.distance": "cosine", "objective.margin": wieting.MARGIN, "objective.sampling": wieting.SAMPLING,
        "objective.regularization": wieting.REGULARIZATION, "optim.batch_size": wieting.BATCH_SIZE})
    """Dotted overrides of every J_pa cell, after `common`: the default is Wieting et al.'s cosine margin 0.4 with
    MAX in-batch negatives, no regularisation, batch 100."""
    analyses: tuple[Literal["undertrained", "memorisation", "sizes"], ...] = ("undertrained", "memorisation", "sizes")
    """The paper's analyses: `undertrained` (Table 4: test tokens each condition's pairs leave undertrained, no
    training), `memorisation` (Table 5: J_bi retrained without pairs sharing a bigram with SICK test), `sizes`
    (Table 6: bilingual phrases, J_bi, at each of `size_pairs`). Empty: Table 3 alone."""
    size_pairs: tuple[PositiveInt, ...] = (500_000, 1_000_000, 1_900_000, 3_000_000)
    """Table 6's numbers of bilingual phrase pairs, paired in order with the paper's 0.5M, 1M, 1.9M and 3M columns
    (a fifth and later are not used); a size beyond the table trains on all of it. With `bilingual_sentences` on,
    the number of its pairs is a further column (the paper's equal-size comparison)."""
    ablations: tuple[Ablation, ...] = ()
    """Departures from the paper measured on the J_bi bilingual sentences and phrases by training (for
    `unknown_words`, evaluating) the other choice; the class text says what each switches. Empty: none. `data`
    needs `europarl_phrases_config`."""
    pruned_min_count: PositiveInt = 2
    """The `pruning` ablation's phrase table leaves out pairs extracted fewer than this many times (1 would prune
    nothing; the paper's table is unpruned)."""
    stated: dict[Condition, dict] = Field(default_factory=dict)
    """Per condition, the J_bi choices the paper states, as dotted overrides (e.g. `objective.negatives` at the top
    of the grid): every J_bi cell of the condition trains with them and its sweep keeps them pinned."""
    contested: dict[Condition, dict] = Field(default_factory=dict)
    """Per condition, the paper's other reading of a stated choice it contradicts elsewhere (overrides of keys in
    `stated` only): swept and re-scored the same way, and trained as the `reading` ablation."""

    @model_validator(mode="after")
    def _contested_only_where_stated(self):
        for condition, reading in self.contested.items():
            if not set(reading) <= set(self.stated.get(condition, {})):
                unstated = sorted(set(reading) - set(self.stated.get(condition, {})))
                raise ValueError(f"contested.{condition} names {unstated}, which stated.{condition} does not state: a "
                                 "contested reading replaces a stated choice")
        return self

    @model_validator(mode="after")
    def _europarl_phrases_for_data(self):
        if "data" in self.ablations and self.europarl_phrases_config is None:
            raise ValueError("the data ablation trains bilingual phrases of Europarl alone: set europarl_phrases_config "
                             "(a phrases pipeline config whose only source is the Europarl sample)")
        return self

    def phrases(self) -> PhrasesConfig:
        """The phrase pipeline's config, whose outputs are the phrase conditions' training data."""
        return load_config(PhrasesConfig, project_path(self.phrases_config))

    def europarl_phrases(self) -> PhrasesConfig | None:
        """The Europarl-only phrase pipeline's config (the ``data`` ablation's phrases), if one is named."""
        if self.europarl_phrases_config is None:
            return None
        return load_config(PhrasesConfig, project_path(self.europarl_phrases_config))

    @property
    def needs_phrases(self) -> bool:
        return bool({"bilingual_phrases", "pivot_paraphrases"} & set(self.conditions))

    def pairs_of(self, condition: str) -> int | None:
        """How many pairs a cell of ``condition`` trains on (a seeded sample; None: all)."""
        return self.condition_pairs.get(condition, self.max_pairs)


def phrase_data_paths(phrases: PhrasesConfig) -> dict[str, str]:
    """Where the pipeline leaves the phrase table and the pivot paraphrases, by training condition."""
    return {"bilingual_phrases": str(phrases.output_path / "phrase_table" / "data"),
            "pivot_paraphrases": str(phrases.output_path / "pivot" / "data")}


def train_config(config: ReproductionConfig, condition: str, objective: str, data_paths: dict[str, str],
                 suffix: str = "", overrides: dict | None = None, **data) -> PairsConfig:
    """The training config of one cell: base YAML + common + objective overrides + condition (+ ``data`` fields,
    then any further dotted ``overrides``)."""
    overrides = {**config.common, **(config.jbi if objective == "jbi" else config.jpa),
                 "name": f"{config.name}-{condition}-{objective}{suffix}", "objective.name": objective,
                 "optim.epochs": config.epochs, "data.condition": condition, "data.max_pairs": config.pairs_of(condition),
                 **(overrides or {})}
    if condition in data_paths:
        overrides["data.path"] = data_paths[condition]
    overrides.update({f"data.{key}": value for key, value in data.items()})
    return load_config(PairsConfig, project_path(config.base_config), overrides)
