"""Search spaces as data: YAML files that name training-config fields the way ``TrainConfig`` spells them.

A space file looks like::

    name: jbi-elgohary
    kind: train                                           # or siamese (supervised, parabit.supervised)
    base_config: jobs/configs/bilingual_sentences.yaml
    fixed: {data.max_pairs: 100000, optim.epochs: 5}      # applied to every trial
    search: {algorithm: random, num_samples: 16, max_concurrent_trials: 2}
    scheduler: {name: asha, grace_period: 1, reduction_factor: 2}
    parameters:
      optim.batch_size: [25, 50, 100]                     # a categorical choice
      objective.margin:                                   # a conditional choice
        depends_on: objective.distance
        values: {euclidean: [1, 10, 100], cosine: [0.4, 0.6, 0.8]}

Every parameter must name an existing config field; every point of the space is checked by building its
config (``TrainConfig``, or ``SiameseConfig`` for ``kind: siamese``) at load time, so a typo or an invalid value
fails before any trial starts.
"""

from __future__ import annotations

import dataclasses
import random
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from parabit.config import ConfigError, apply_override, from_dict
from parabit.paths import PROJECT_ROOT
from parabit.training.config import TrainConfig

ALGORITHMS = ("grid", "random", "optuna")
KINDS = ("train", "siamese")


def config_class(kind: str) -> type:
    """The config dataclass trials of ``kind`` are built from: ``train`` (TrainConfig) or ``siamese``."""
    if kind == "siamese":
        from parabit.supervised.config import SiameseConfig

        return SiameseConfig
    return TrainConfig
SCHEDULERS = ("asha", "fifo")


def check_parameter_path(path: str, where: str, root: type = TrainConfig) -> None:
    """Raise :class:`ConfigError` unless ``path`` (e.g. ``objective.margin``) names a field of ``root``."""
    cls: Any = root
    walked = []
    for part in path.split("."):
        if not dataclasses.is_dataclass(cls):
            raise ConfigError(f"{where}: parameter {path!r}: {'.'.join(walked)} has no fields")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if part not in fields:
            owner = cls.__name__
            raise ConfigError(f"{where}: unknown parameter {path!r}: {owner} has no field {part!r}; "
                              f"its fields are {sorted(fields)}")
        walked.append(part)
        cls = typing.get_type_hints(cls)[part]


@dataclass
class Parameter:
    """A categorical choice, optionally conditional on another parameter's value."""

    path: str
    values: list | None = None
    depends_on: str | None = None
    conditional_values: dict | None = None

    def choices(self, point: dict) -> list:
        if self.depends_on is None:
            return self.values
        parent = point[self.depends_on]
        if parent not in self.conditional_values:
            raise ConfigError(f"parameter {self.path!r} has no values for {self.depends_on}={parent!r}")
        return self.conditional_values[parent]


@dataclass
class SearchSettings:
    """How trials are chosen and run. ``num_samples``: trials for random/optuna (grid runs every point once)."""

    algorithm: str = "random"
    num_samples: int = 12
    max_concurrent_trials: int = 2
    metric: str = "dev_score"
    mode: str = "max"
    seed: int = 0

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"search.algorithm is {self.algorithm!r}; choose one of {list(ALGORITHMS)}")
        if self.mode not in ("max", "min"):
            raise ValueError(f"search.mode is {self.mode!r}; choose max or min")


@dataclass
class SchedulerSettings:
    """ASHA early stopping on the per-epoch metric (``fifo``: none). ``grace_period`` is in epochs."""

    name: str = "asha"
    grace_period: int = 1
    reduction_factor: int = 2

    def __post_init__(self):
        if self.name not in SCHEDULERS:
            raise ValueError(f"scheduler.name is {self.name!r}; choose one of {list(SCHEDULERS)}")


@dataclass
class SearchSpace:
    """A loaded, validated space. ``points()`` / ``sample()`` give trial parameter dicts keyed by config path."""

    name: str
    base_config: str
    parameters: list[Parameter]
    fixed: dict = field(default_factory=dict)
    search: SearchSettings = field(default_factory=SearchSettings)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    source: str = "space"
    kind: str = "train"

    # -- points ---------------------------------------------------------------------------------------------
    def _ordered(self) -> list[Parameter]:
        """Parameters with every condition before the parameters that depend on it."""
        done, ordered, pending = set(), [], list(self.parameters)
        while pending:
            ready = [p for p in pending if p.depends_on is None or p.depends_on in done]
            if not ready:
                raise ConfigError(f"{self.source}: circular or missing depends_on among "
                                  f"{[p.path for p in pending]}")
            for parameter in ready:
                ordered.append(parameter)
                done.add(parameter.path)
                pending.remove(parameter)
        return ordered

    def points(self) -> list[dict]:
        """Every point of the (conditional) grid."""
        points: list[dict] = [{}]
        for parameter in self._ordered():
            points = [{**point, parameter.path: value} for point in points for value in parameter.choices(point)]
        return points

    def sample(self, rng: random.Random) -> dict:
        point: dict = {}
        for parameter in self._ordered():
            point[parameter.path] = rng.choice(parameter.choices(point))
        return point

    def trial_points(self) -> list[dict]:
        """The explicit trials of grid and random search (random: ``num_samples`` seeded draws, duplicates kept
        out)."""
        if self.search.algorithm == "grid":
            return self.points()
        rng = random.Random(self.search.seed)
        grid_size = len(self.points())
        drawn: list[dict] = []
        while len(drawn) < min(self.search.num_samples, grid_size):
            point = self.sample(rng)
            if point not in drawn:
                drawn.append(point)
        return drawn

    def optuna_space(self, trial) -> None:
        """Define-by-run space for Optuna: a conditional parameter gets one name per condition value."""
        point: dict = {}
        for parameter in self._ordered():
            name = parameter.path if parameter.depends_on is None else f"{parameter.path}|{point[parameter.depends_on]}"
            point[parameter.path] = trial.suggest_categorical(name, parameter.choices(point))

    # -- configs --------------------------------------------------------------------------------------------
    def base_dict(self) -> dict:
        path = Path(self.base_config)
        path = path if path.is_absolute() else PROJECT_ROOT / path
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except FileNotFoundError:
            raise ConfigError(f"{self.source}: base_config {path} does not exist") from None
        for dotted, value in self.fixed.items():
            apply_override(data, dotted, value)
        return data

    def trial_config(self, point: dict, name: str):
        """The full training config of one trial (a ``TrainConfig``, or a ``SiameseConfig`` for ``kind: siamese``)."""
        data = self.base_dict()
        for dotted, value in point.items():
            apply_override(data, dotted.split("|")[0], value)
        data["name"] = name
        return from_dict(config_class(self.kind), data, where=f"{self.source} (trial {name})")


def _parameter(path: str, spec: Any, where: str, root: type) -> Parameter:
    check_parameter_path(path, where, root)
    if isinstance(spec, list):
        return Parameter(path, values=spec)
    if isinstance(spec, dict) and set(spec) == {"depends_on", "values"} and isinstance(spec["values"], dict):
        check_parameter_path(spec["depends_on"], where, root)
        return Parameter(path, depends_on=spec["depends_on"], conditional_values=spec["values"])
    raise ConfigError(f"{where}: parameter {path!r} must be a list of values or "
                      "{depends_on: <parameter>, values: {<its value>: [...]}}")


def load_space(path: str | Path) -> SearchSpace:
    """Load and validate a space file; raises :class:`ConfigError` naming the file and the problem."""
    path = Path(path)
    where = str(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"search space {path} does not exist") from None
    known = {"name", "kind", "base_config", "fixed", "search", "scheduler", "parameters"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; valid keys: {sorted(known)}")
    for key in ("name", "base_config", "parameters"):
        if key not in data:
            raise ConfigError(f"{where}: missing {key!r}")
    kind = data.get("kind", "train")
    if kind not in KINDS:
        raise ConfigError(f"{where}: kind is {kind!r}; choose one of {list(KINDS)}")
    root = config_class(kind)
    for dotted in data.get("fixed", {}):
        check_parameter_path(dotted, where, root)
    space = SearchSpace(
        name=data["name"],
        base_config=data["base_config"],
        parameters=[_parameter(p, spec, where, root) for p, spec in data["parameters"].items()],
        fixed=dict(data.get("fixed", {})),
        search=from_dict(SearchSettings, data.get("search"), where=f"{where}.search"),
        scheduler=from_dict(SchedulerSettings, data.get("scheduler"), where=f"{where}.scheduler"),
        source=where,
        kind=kind,
    )
    for point in space.points():  # every reachable value must make a valid config
        space.trial_config(point, name=f"{space.name}-check")
    return space
