"""Wieting et al.'s groups of cells: every group the reproduction trains (each selected variant of the
back-translated pairs, bilingual pairs and PPDB at the comparison's size, AVG and GRAN), the training config of its
cells, and the keys and labels the length-range groups go by."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.papers.cells import Group
from parabit.papers.wieting.settings import WietingSettings


def range_key(low: int, high: int | None) -> str:
    return f"len-{low}-{high}" if high is not None else f"len-{low}-plus"


def range_label(low: int, high: int | None) -> str:
    return f"{low}–{high} tokens" if high is not None else f"{low}+ tokens"


def group_label(key: str, length_ranges: tuple[tuple[int, int | None], ...]) -> str:
    """How the tables and findings name the group ``key`` (a length range by its tokens, a variant by its filter or
    engine)."""
    if key.startswith("len-"):
        for lo, hi in length_ranges:
            if range_key(lo, hi) == key:
                return range_label(lo, hi)
        return "any length"
    return key.removeprefix("bt-").removeprefix("engine-")


def train_config(settings: WietingSettings, quick: bool, *, path: Path | None = None, condition: str | None = None,
                 size: int | None = None, gran: bool = False):
    """The ``train`` config on the pairs at ``path`` or on ``size`` pairs of the training data ``condition``; GRAN
    for ``gran_epochs`` with ``gran``; one epoch without GloVe in quick mode."""
    overrides = {"data.condition": "pairs_parquet", "data.path": str(path)} if path is not None else \
        {"data.condition": condition, "data.path": None, "data.max_pairs": size}
    if gran:
        overrides.update({"model.encoder": "gran", "optim.epochs": settings.gran_epochs})
    if quick:
        overrides.update({"optim.epochs": 1, "data.glove_words": 0})
    return load_run_config(project_path(settings.train), overrides)


def cell_groups(settings: WietingSettings, quick: bool, paths: dict[str, Path], size: int) -> list[Group]:
    """A group per selected variant (``paths``: filters, length ranges, engines), then bilingual pairs and PPDB at
    the main comparison's ``size``, and GRAN on back-translated, bilingual and PPDB pairs."""
    train = partial(train_config, settings, quick)
    groups = [Group(key, train(path=path), group_label(key, settings.length_ranges)) for key, path in paths.items()]
    groups += [Group("bilingual", train(condition="bilingual_sentences", size=size), "bilingual en–es"),
               Group("ppdb", train(condition="ppdb", size=size), "PPDB"),
               Group("gran-bt-unfiltered", train(path=paths["bt-unfiltered"], gran=True), "GRAN, back-translated"),
               Group("gran-bilingual", train(condition="bilingual_sentences", size=size, gran=True),
                     "GRAN, bilingual en–es"),
               Group("gran-ppdb", train(condition="ppdb", size=size, gran=True), "GRAN, PPDB")]
    return groups
