"""What Wieting et al.'s reproduction runs: :class:`WietingSettings`, the ``wieting:`` section of the reproduction
config (the pipeline and training config files it starts from, the comparison's size, the filters and their
threshold windows, the length ranges, the engine comparison's sample, epochs and quick mode)."""

from __future__ import annotations

from pydantic import Field, PositiveInt

from parabit.config import Config, ConfigFile
from parabit.papers.wieting.paper import EPOCHS, PAIRS
from parabit.papers.wieting.selection import FilterSpec


def _default_filters() -> tuple[FilterSpec, ...]:
    both, lower = ((None, 0.5), (0.25, 0.75), (0.5, None)), ((0.25, None), (0.5, None), (0.75, None))
    return (FilterSpec(name="length_ratio", windows=((None, 0.5), (None, 0.75), (None, 0.9))),
            FilterSpec(name="ngram_overlap", options={"order": 1}, windows=both),
            FilterSpec(name="bleu", windows=both),
            FilterSpec(name="lm", windows=lower),
            FilterSpec(name="classifier", windows=lower))


class WietingSettings(Config):
    """Wieting et al.'s runs. Three config files, no defaults (the reproduction config names them; relative paths
    are read from the project folder): ``backtranslate``, the scoring pipeline (a ``PipelineConfig``: every filter
    scored, nothing selected); ``roundtrip``, the neural engine's pipeline for the engine comparison (its sources
    are replaced by a seeded sample of ``engine_sample`` Tatoeba pairs, which Apertium back-translates too);
    ``train``, the training settings (a ``pairs`` training config: AVG; GRAN via ``model.encoder: gran`` for
    ``gran_epochs``). ``sample_size``: the controlled comparison's size (or the most the data allows); ``filters``:
    each filter tried alone, its threshold windows swept for ``tune_epochs`` epochs per trial on the dev set;
    ``length_ranges``: token ranges of both sides (null: open). ``--quick``: ``quick_pairs`` Tatoeba pairs, one
    epoch, the middle window of each filter untuned, no engines."""

    backtranslate: ConfigFile
    """The scoring pipeline (a back-translation `PipelineConfig` YAML: Apertium es→en of the shipped Spanish bitext,
    every filter scored, nothing selected): every variant is a selection from its scores."""
    roundtrip: ConfigFile
    """The neural engine's pipeline (a `PipelineConfig` YAML: marian-pt en→pt→en round trips) for the engine
    comparison; its sources are replaced by the `engine_sample` Tatoeba pairs, and its filters score both engines."""
    train: ConfigFile
    """The training settings of every cell and threshold trial (a `pairs` training YAML: AVG; the GRAN groups set
    `model.encoder: gran` and `gran_epochs`), its data replaced per group."""
    sample_size: PositiveInt = PAIRS
    """Pairs per variant in the controlled comparison (the paper's 24k): each filter, unfiltered, bilingual and
    PPDB at one equal size, lowered to what the smallest of them allows; also the cap of the length ranges' size."""
    seed: int = 13
    """Seed of every variant's sample of pairs, of the engine comparison's Tatoeba sample and of the §6 text
    analysis; not the training seed (the reproduction's seeds)."""
    filters: tuple[FilterSpec, ...] = Field(default_factory=_default_filters)
    """The filters tried alone, each with the quantile windows its threshold sweep tries (a group `bt-<its label>`
    and a finding each); the default: length ratio, unigram overlap, BLEU, language model and classifier."""
    length_ranges: tuple[tuple[int, int | None], ...] = ((0, 10), (10, 20), (20, 30), (30, None))
    """Token ranges `[low, high]` (both ends included; null: open above) that both sides of a pair must lie in, each
    a group at one equal size beside `len-any` (no length filter). Shortest first: the findings take the first as
    the paper's best range and expect quality to fall along the list."""
    engine_sample: PositiveInt = 4000
    """Tatoeba pairs (a seeded sample) of the engine comparison: Apertium back-translates their Spanish side,
    marian-pt round-trips their English side, so both engines' pairs share the same English references."""
    tune_epochs: PositiveInt = 5
    """Training epochs of each threshold-sweep trial (one trial per window), scored on the dev set (STS 2016); kept
    short so that a sweep per filter stays affordable."""
    gran_epochs: PositiveInt = EPOCHS["gran"]
    """Training epochs of the GRAN groups (the AVG groups train the `train` config's own epochs)."""
    quick_pairs: PositiveInt = 400
    """With `--quick`: the first this many Tatoeba pairs are back-translated (one epoch, each filter's middle window
    untuned, no engine comparison)."""
