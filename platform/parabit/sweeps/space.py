"""Search spaces as data: YAML files that name training-config fields the way the run's config spells them.

A space file looks like::

    name: jbi-elgohary
    base_config: jobs/configs/bilingual_sentences.yaml    # any recipe's training config (its `recipe:` key decides)
    fixed: {data.max_pairs: 100000, optim.epochs: 5}      # applied to every trial
    search: {algorithm: random, num_samples: 16, max_concurrent_trials: 2}
    scheduler: {name: asha, grace_period: 1, reduction_factor: 2}
    parameters:
      optim.batch_size: [25, 50, 100]                     # a categorical choice
      objective.margin:                                   # a conditional choice
        depends_on: objective.distance
        values: {euclidean: [1, 10, 100], cosine: [0.4, 0.6, 0.8]}

Every parameter must name an existing field of the base config's class; every point of the space is checked by
building its config at load time, so a typo or an invalid value fails before any trial starts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PositiveInt

from parabit.config import Config, ConfigError, apply_override, check_field_path, check_finite, from_dict, read_yaml
from parabit.paths import project_path
from parabit.recipes import config_class
from parabit.training import TrainingConfig


class SearchSettings(Config):
    """How trials are chosen and run. ``num_samples``: trials for random/optuna (grid runs every point once).
    ``stratify``: random search only: parameters (unconditional ones) every combination of whose values gets an
    equal share of the ``num_samples`` draws (e.g. ``[objective.distance]``: as many trials with each distance),
    so a small sample still covers each of them."""

    algorithm: Literal["grid", "random", "optuna"] = "random"
    """``grid``: every point of the space once; ``random``: ``num_samples`` distinct points drawn with ``seed``;
    ``optuna``: Optuna proposes ``num_samples`` trials one by one from the results so far."""
    num_samples: PositiveInt = 12
    """Trials of ``random`` search (at most the number of distinct points) and of ``optuna``; ``grid`` ignores it.
    ``--num-samples`` overrides it."""
    stratify: tuple[str, ...] = ()
    """``random`` only: parameters (without ``depends_on``) each combination of whose values gets an equal share of the
    draws, so a small sample still covers each of them. Empty: plain random draws."""
    max_concurrent_trials: PositiveInt = 2
    """Trials that train at once, each with the base config's workers and resources; on a cluster that cannot grow
    the sweep refuses to start when they do not all fit."""
    metric: str = "dev_score"
    """The per-epoch metric that trials are compared by (Optuna, ASHA, and the best trial by its last report): a
    dev-data score, never a test score. ``dev_score``: the recipe's score on its ``dev`` set."""
    mode: Literal["max", "min"] = "max"
    """Whether a higher (``max``) or lower (``min``) ``metric`` is better, e.g. ``min`` for a loss."""
    seed: int = 0
    """Seed of the ``random`` draws and of Optuna's sampler (not the trials' training seed): the same seed draws the
    same trials."""


class SchedulerSettings(Config):
    """ASHA early stopping on the per-epoch metric (``fifo``: none). ``grace_period`` is in epochs."""

    name: Literal["asha", "fifo"] = "asha"
    """``asha``: stop the trials that fall behind at each rung; ``fifo``: every trial trains all its epochs."""
    grace_period: PositiveInt = 1
    """Epochs every trial trains before ASHA may stop it."""
    reduction_factor: int = Field(2, ge=2)
    """At each rung (epochs ``grace_period`` × powers of this) ASHA lets a trial go on only when its metric is among
    the best 1/``reduction_factor`` recorded there."""


class ConditionalValues(Config):
    """Values of a parameter that depend on another parameter's value."""

    depends_on: str
    """The dotted config field of the parameter (itself one of the space's ``parameters``) whose value picks the
    values."""
    values: dict[Any, list]
    """The values to choose from for each value of ``depends_on``: every value it can take needs an entry."""


class SpaceFile(Config):
    """The keys of a space file. ``keep_checkpoints``: once the sweep has ended and its best trial is registered,
    ``best`` removes the other trials' Ray Train checkpoints (a trial's MLflow run stays; a trial that failed keeps
    its folder, which a resumed sweep reads); ``all`` keeps every trial's."""

    name: str = Field(pattern=r"^[^/\s]+$")
    """The sweep's name (no ``/`` or whitespace): its folder ``<output root>/sweeps/<name>``, its MLflow runs and its
    trials' names (``<name>-<trial id>``). Running the same name again resumes the sweep; ``--name`` overrides it."""
    base_config: str
    """The training config every trial starts from (any recipe: its ``recipe:`` key decides); a relative path is read
    from the project folder."""
    fixed: dict[str, Any] = Field(default_factory=dict)
    """Dotted training-config fields set for every trial (e.g. ``optim.epochs: 5``), on top of ``base_config``; not
    one of the searched ``parameters``. ``--set`` adds to them."""
    search: SearchSettings = Field(default_factory=SearchSettings)
    """How trials are chosen and how many run at once."""
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    """Early stopping of the trials that fall behind (ASHA), or none."""
    parameters: dict[str, list | ConditionalValues] = Field(min_length=1)
    """The searched dotted training-config fields (at least one): each a list of values to choose from, or
    ``{depends_on, values}`` for values that depend on another parameter's value."""
    keep_checkpoints: Literal["best", "all"] = "best"
    """``best``: once the best trial is registered, remove the other trials' checkpoints (a failed trial's are kept,
    for a resume); ``all``: keep every trial's."""


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
class SearchSpace:
    """A loaded, validated space. ``points()`` / ``sample()`` give trial parameter dicts keyed by config path."""

    name: str
    base_config: str
    parameters: list[Parameter]
    fixed: dict = field(default_factory=dict)
    search: SearchSettings = field(default_factory=SearchSettings)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    keep_checkpoints: Literal["best", "all"] = "best"
    source: str = "space"

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

    def sample(self, rng: random.Random, fixed: dict | None = None) -> dict:
        """A random point; ``fixed`` parameters keep the given values (the others are drawn given them)."""
        point: dict = {}
        for parameter in self._ordered():
            if fixed and parameter.path in fixed:
                point[parameter.path] = fixed[parameter.path]
            else:
                point[parameter.path] = rng.choice(parameter.choices(point))
        return point

    def trial_points(self) -> list[dict]:
        """The explicit trials of grid and random search (random: ``num_samples`` seeded draws, duplicates kept
        out)."""
        if self.search.algorithm == "grid":
            return self.points()
        rng = random.Random(self.search.seed)
        strata = self.strata()
        drawn: list[dict] = []
        for index, stratum in enumerate(strata):
            # The draws are shared out as evenly as they go; the first strata take what does not divide.
            wanted = self.search.num_samples // len(strata) + (index < self.search.num_samples % len(strata))
            size = sum(1 for point in self.points() if point.items() >= stratum.items())
            mine: list[dict] = []
            while len(mine) < min(wanted, size):
                point = self.sample(rng, stratum)
                if point not in mine:
                    mine.append(point)
            drawn += mine
        return drawn

    def strata(self) -> list[dict]:
        """Every combination of the ``search.stratify`` parameters' values (one empty stratum without them)."""
        strata: list[dict] = [{}]
        by_path = {p.path: p for p in self.parameters}
        for path in self.search.stratify:
            strata = [{**stratum, path: value} for stratum in strata for value in by_path[path].values]
        return strata

    @property
    def trial_count(self) -> int:
        """How many trials a complete sweep runs."""
        return self.search.num_samples if self.search.algorithm == "optuna" else len(self.trial_points())

    def optuna_space(self, trial) -> None:
        """Define-by-run space for Optuna: a conditional parameter gets one name per condition value."""
        point: dict = {}
        for parameter in self._ordered():
            name = parameter.path if parameter.depends_on is None else f"{parameter.path}|{point[parameter.depends_on]}"
            point[parameter.path] = trial.suggest_categorical(name, parameter.choices(point))

    def pinned(self, values: dict[str, Any]) -> "SearchSpace":
        """This space with the parameters in ``values`` no longer searched: each is fixed to its value for every
        trial, a parameter that depends on one keeps only that value's choices, and stratification leaves it out
        (e.g. a choice the paper states, while the sweep tunes the rest). A value the space does not offer, or a
        key that is not one of its parameters, raises :class:`ConfigError`."""
        by_path = {p.path: p for p in self.parameters}
        for path, value in values.items():
            if path not in by_path:
                raise ConfigError(f"{self.source}: cannot pin {path!r}: it is not a parameter of the space "
                                  f"(parameters: {', '.join(by_path)})")
            offered = {str(v) for point in self.points() for v in [point[path]]}
            if str(value) not in offered:
                raise ConfigError(f"{self.source}: cannot pin {path}={value!r}: the space offers "
                                  f"{', '.join(sorted(offered))}")
        parameters = []
        for parameter in self.parameters:
            if parameter.path in values:
                continue
            if parameter.depends_on in values:
                parameter = Parameter(parameter.path, values=parameter.conditional_values[values[parameter.depends_on]])
            parameters.append(parameter)
        search = self.search.model_copy(update={"stratify": tuple(p for p in self.search.stratify if p not in values)})
        return replace(self, parameters=parameters, fixed={**self.fixed, **values}, search=search)

    # -- configs --------------------------------------------------------------------------------------------
    def base_dict(self) -> dict:
        path = project_path(self.base_config)
        try:
            data = read_yaml(path)
        except ConfigError as err:
            raise ConfigError(f"{self.source}: base_config: {err}") from None
        for dotted, value in self.fixed.items():
            apply_override(data, dotted, value)
        return data

    def config_class(self) -> type[TrainingConfig]:
        return config_class(self.base_dict(), f"{self.source} (base_config)")

    def trial_config(self, point: dict, name: str) -> TrainingConfig:
        """The full training config of one trial."""
        data = self.base_dict()
        for dotted, value in point.items():
            apply_override(data, dotted.split("|")[0], value)
        data["name"] = name
        return from_dict(self.config_class(), data, where=f"{self.source} (trial {name})")


def load_space(path: str | Path, num_samples: int | None = None, overrides: dict[str, Any] | None = None,
               name: str | None = None) -> SearchSpace:
    """Load and validate a space file; raises :class:`ConfigError` naming the file and the problem.

    From the command line: ``num_samples`` overrides ``search.num_samples`` (fewer or more trials), ``overrides``
    (dotted training-config fields) join ``fixed`` for every trial, ``name`` renames the sweep."""
    where = str(path)
    raw = read_yaml(path)
    if not isinstance(raw.get("search", {}), dict) or not isinstance(raw.get("fixed", {}), dict):
        raise ConfigError(f"{where}: search and fixed must be mappings")
    if num_samples is not None:
        raw.setdefault("search", {})["num_samples"] = num_samples
    if overrides:
        raw["fixed"] = {**raw.get("fixed", {}), **overrides}
    if name is not None:
        raw["name"] = name
    check_finite(raw, where)
    spec = from_dict(SpaceFile, raw, where=where)
    space = SearchSpace(name=spec.name, base_config=spec.base_config, parameters=[], fixed=dict(spec.fixed),
                        search=spec.search, scheduler=spec.scheduler, keep_checkpoints=spec.keep_checkpoints,
                        source=where)
    root = space.config_class()
    for dotted in spec.fixed:
        check_field_path(root, dotted, where)
        if dotted in spec.parameters:
            raise ConfigError(f"{where}: {dotted} is searched by this space (parameters:); a fixed value or --set "
                              "would be overwritten by every trial's draw: remove it from one of the two")
    for path_name, values in spec.parameters.items():
        check_field_path(root, path_name, where)
        if isinstance(values, ConditionalValues):
            check_field_path(root, values.depends_on, where)
            space.parameters.append(Parameter(path_name, depends_on=values.depends_on,
                                              conditional_values=values.values))
        else:
            space.parameters.append(Parameter(path_name, values=values))
    if num_samples is not None and spec.search.algorithm == "grid":
        raise ConfigError(f"{where}: --num-samples applies to random and optuna search; a grid runs every point")
    for path_name in spec.search.stratify:
        parameter = next((p for p in space.parameters if p.path == path_name), None)
        if parameter is None or parameter.depends_on is not None or spec.search.algorithm != "random":
            raise ConfigError(f"{where}: search.stratify names {path_name!r}: stratify random search by its "
                              "unconditional parameters only (the keys under parameters: without depends_on)")
    for point in space.points():  # every reachable value must make a valid config
        space.trial_config(point, name=f"{space.name}-check")
    return space
