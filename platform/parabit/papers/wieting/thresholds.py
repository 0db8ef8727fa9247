"""Tuning a filter's thresholds on the dev set, as the paper did: one Ray Tune sweep (:mod:`parabit.sweeps`) per
filter whose single parameter is the training pairs, one candidate selection per threshold window (selections are
cheap: :mod:`parabit.papers.wieting.selection`). The window whose trial scores best on the dev set (``dev_score``, STS 2016)
is the filter's tuned variant. The choice is saved, so a re-run does not sweep again.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml
from mlflow.tracking import MlflowClient

from parabit.config import to_dict
from parabit.tracking import tags
from parabit.tracking.store import tracking_uri
from parabit.training import TrainingConfig
from parabit.sweeps.space import Parameter, SchedulerSettings, SearchSettings, SearchSpace
from parabit.sweeps.sweep import run_sweep


@dataclass(frozen=True)
class Trial:
    window: tuple
    thresholds: dict
    path: str
    pairs: int
    dev_score: float | None


@dataclass(frozen=True)
class Tuned:
    """A filter's sweep: every candidate with its dev score, and the chosen one."""

    filter: str
    trials: tuple[Trial, ...]
    best: int  # index into trials

    @property
    def chosen(self) -> Trial:
        return self.trials[self.best]

    def to_dict(self) -> dict:
        return {"filter": self.filter, "best": self.best, "trials": [asdict(t) for t in self.trials]}

    @classmethod
    def from_dict(cls, data: dict) -> "Tuned":
        trials = tuple(Trial(tuple(t["window"]), t["thresholds"], t["path"], t["pairs"], t["dev_score"])
                       for t in data["trials"])
        return cls(data["filter"], trials, data["best"])

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f".{path.name}.tmp")
        scratch.write_text(json.dumps(self.to_dict(), indent=1))
        scratch.replace(path)

    @classmethod
    def load(cls, path: Path) -> "Tuned | None":
        return cls.from_dict(json.loads(path.read_text())) if path.is_file() else None


def tune_thresholds(name: str, label: str, base: TrainingConfig, candidates: list[Trial], workdir: Path,
                    epochs: int) -> Tuned:
    """Sweep ``candidates`` (one selection each) with ``base`` trained ``epochs`` epochs per trial, one trial at a
    time (the machine's cores are the trial's); returns and saves the result (reused when saved)."""
    saved = workdir / f"{name}.json"
    done = Tuned.load(saved)
    if done is not None and [t.path for t in done.trials] == [c.path for c in candidates]:
        return done
    config_file = workdir / f"{name}.base.yaml"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(yaml.safe_dump(to_dict(base), sort_keys=False))
    space = SearchSpace(
        name=name, base_config=str(config_file), source=f"threshold sweep of {label}",
        parameters=[Parameter("data.path", values=[c.path for c in candidates])],
        fixed={"optim.epochs": epochs, "scaling.cpus_per_worker": 0.9, "tracking.register_as": ""},
        search=SearchSettings(algorithm="grid", max_concurrent_trials=1),
        scheduler=SchedulerSettings(name="fifo"))
    run_sweep(space)
    scores = trial_dev_scores(name, base.tracking.experiment)
    trials = tuple(Trial(c.window, c.thresholds, c.path, c.pairs, scores.get(c.path)) for c in candidates)
    unscored = [str(t.window) for t in trials if t.dev_score is None]
    if unscored:  # a choice among the rest would not be the tuned one: nothing is saved, the sweep resumes
        raise RuntimeError(f"threshold sweep {name}: the trials of windows {', '.join(unscored)} did not finish with "
                           "a dev score; run the same command again to resume the sweep")
    tuned = Tuned(label, trials, max(range(len(trials)), key=lambda i: trials[i].dev_score))
    tuned.save(saved)
    return tuned


def trial_dev_scores(sweep: str, experiment: str) -> dict[str, float]:
    """``{data.path: last dev_score}`` of the sweep's finished trials, from their MLflow runs."""
    client = MlflowClient(tracking_uri())
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return {}
    runs = client.search_runs([found.experiment_id], f"tags.`{tags.SWEEP}` = '{sweep}' and "
                              f"tags.`{tags.KIND}` = 'trial' and attributes.status = 'FINISHED'")
    return {run.data.params["data.path"]: run.data.metrics[tags.DEV_SCORE] for run in runs
            if "data.path" in run.data.params and tags.DEV_SCORE in run.data.metrics}
