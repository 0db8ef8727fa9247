"""Elgohary & Carpuat's J_bi tuning, per condition on the paper's dev set as the paper tuned it (under the choices
the paper states, or its other reading where it contradicts itself): the sweep at the paper's proxy scale and its
trials, its best points re-scored at the cells' own scale (cells of their own), the choice, and the words the
document describes it in."""

from __future__ import annotations

from parabit.config import read_yaml
from parabit.papers.cells import Group
from parabit.papers.elgohary.data import CONTESTED, OTHER_READING, STATED, ElgoharyData, tuning_key
from parabit.papers.elgohary.metrics import DEV
from parabit.papers.elgohary.paper import CONDITION_LABELS
from parabit.paths import project_path

OPTIMISER = "optim.name"


def sweep_trials(sweep: str, parameters: list[str], metric: str) -> list[dict]:
    """Every trial of ``sweep``: its parameters and last ``metric``, from its MLflow run (best first)."""
    from mlflow.tracking import MlflowClient

    from parabit.tracking import tags
    from parabit.tracking.store import tracking_uri

    client = MlflowClient(tracking_uri())
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()],
                              f"tags.`{tags.SWEEP}` = '{sweep}' and tags.`{tags.KIND}` = 'trial'")
    trials = [{"trial": run.info.run_name, "status": run.info.status,
               "params": {p: run.data.params.get(p) for p in parameters}, metric: run.data.metrics.get(metric),
               "epochs": run.data.metrics.get("epoch")} for run in runs]
    return sorted(trials, key=lambda t: -(t[metric] if t[metric] is not None else float("-inf")))


def typed_params(params: dict[str, str | None], values: dict[str, list]) -> dict:
    """A trial's parameters as MLflow keeps them (strings) turned back into the sweep space's values."""
    return {path: next((v for v in values[path] if str(v) == text), text) for path, text in params.items()}


def best_other(points: list[dict], parameter: str, chosen) -> dict | None:
    """The best of ``points`` (``typed`` parameters and a ``dev_score``) whose ``parameter`` is not ``chosen``: the
    best of the other choice."""
    others = [t for t in points if t["dev_score"] is not None and t["typed"].get(parameter) != chosen]
    return max(others, key=lambda t: t["dev_score"])["typed"] if others else None


def rescore_candidates(trials: list[dict], count: int, parameter: str = OPTIMISER) -> list[dict]:
    """The ``count`` best trials by dev score, the best of each value of ``parameter`` among them (so both
    optimisers are trained at the cells' scale, whichever wins at the proxy's), best first."""
    scored = sorted((t for t in trials if t["dev_score"] is not None), key=lambda t: -t["dev_score"])
    each = list({t["typed"].get(parameter): t for t in reversed(scored)}.values())  # the best of each value
    chosen = sorted(each, key=lambda t: -t["dev_score"])[:count]
    chosen += [t for t in scored if t not in chosen][:count - len(chosen)]
    return sorted(chosen, key=lambda t: -t["dev_score"])


def tuning_prefix(condition: str, reading: str = STATED) -> str:
    """The group key the cells of a tuning start with (the ``reading`` ablation's group for the other reading)."""
    return f"{condition}-jbi" if reading == STATED else f"{condition}-jbi-{OTHER_READING}"


def tuning_label(key: str) -> str:
    """A tuning (as :func:`tuning_key` keys it) in the document's words: its condition, and the reading if other."""
    condition, _, reading = key.partition(f"-{OTHER_READING}")
    return CONDITION_LABELS[condition] + (" (the other reading)" if key != condition else "")


def run_tuning_sweep(plan: ElgoharyData, condition: str, reading: str = STATED) -> dict:
    """Run (or resume) the J_bi sweep on ``condition``'s pairs, with every setting the cells share (composition,
    unknown words, dev set) and the paper's stated choices pinned; its best point is that tuning's J_bi
    settings (unless re-scored at the cells' scale)."""
    from parabit.sweeps.space import load_space
    from parabit.sweeps.sweep import run_sweep

    pins = plan.pins(condition, reading)
    name = f"{plan.context.config.prefix}-elgohary-jbi-{tuning_key(condition, reading)}" + (
        "-stated" if pins and reading == STATED else "")
    shared = {k: v for k, v in plan.config.common.items() if not k.startswith("evaluation.also")}
    data = {"data.condition": condition, **({"data.path": plan.data_paths[condition]}
                                             if condition in plan.data_paths else {})}
    space = load_space(project_path(plan.settings.jbi_sweep), name=name, overrides={
        **shared, "tracking.experiment": plan.context.config.experiment, "tracking.register_as": "", **data})
    space = space.pinned(pins) if pins else space
    summary = run_sweep(space)
    values = {p.path: sorted({v for point in space.points() for v in [point[p.path]]}, key=str)
              for p in space.parameters}
    trials = sweep_trials(name, [p.path for p in space.parameters], space.search.metric)
    for trial in trials:
        trial["typed"] = typed_params(trial["params"], values)
    return {"name": name, "condition": condition, "reading": reading, "pinned": pins,
            "space": plan.settings.jbi_sweep, "parent_run_id": summary.parent_run_id,
            "best_params": summary.best_params, "best_dev_score": summary.best_dev_score, "trials": trials}


def rescore_tuning(plan: ElgoharyData, condition: str, reading: str = STATED) -> None:
    """Train the sweep's best points at the cells' own scale (cells of their own, first seed) and take the
    best on the dev set: the tuning's J_bi settings (kept in ``plan.rescored``)."""
    key = tuning_key(condition, reading)
    chosen = rescore_candidates(plan.sweeps[key]["trials"], plan.settings.rescore)
    plan.rescored[key] = {"candidates": [
        {"group": f"{tuning_prefix(condition, reading)}-rescore{i}", "trial": t["trial"], "typed": t["typed"],
         "proxy_dev": t["dev_score"]} for i, t in enumerate(chosen, 1)]}
    results = plan.context.train_cells(plan, rescore_groups(plan, condition, reading))
    dev = {c["group"]: next(iter(results.values(c["group"], DEV).values()), None)
           for c in plan.rescored[key]["candidates"]}
    scored = [c for c in plan.rescored[key]["candidates"] if dev[c["group"]] is not None]
    if not scored:
        raise RuntimeError(f"no point of the {key} J_bi sweep trained at the cells' scale (see the cells' errors "
                           "above); the data step stops here and goes on from here when run again")
    best = max(scored, key=lambda c: dev[c["group"]])
    plan.rescored[key].update({"dev": dev, "chosen": best["group"], "choice": dict(best["typed"])})


def rescore_groups(plan: ElgoharyData, condition: str, reading: str = STATED) -> list[Group]:
    """The cells that re-score a tuning's best proxy points at the cells' own scale (none before it ran)."""
    label = CONDITION_LABELS[condition] + (", the other reading" if reading == CONTESTED else "")
    return [Group(c["group"], plan.training_config(condition, "jbi", c["typed"], reading=reading),
                  f"{label} J_bi, point {i} re-scored at the cells' scale")
            for i, c in enumerate(plan.rescored.get(tuning_key(condition, reading), {}).get("candidates", []), 1)]


def stated_text(plan: ElgoharyData, only: dict | None = None) -> str:
    """The stated choices, by condition (those of ``only``'s conditions and keys, if given)."""
    stated = {c: {k: v for k, v in pins.items() if only is None or k in only.get(c, {})}
              for c, pins in plan.config.stated.items() if only is None or c in only}
    return "; ".join(f"{CONDITION_LABELS[c]} " + ", ".join(f"{k.split('.')[-1]} {v}" for k, v in pins.items())
                     for c, pins in stated.items() if pins) or "none"


def sweep_scale(plan: ElgoharyData) -> str:
    """The proxy scale the sweep space trains its trials at (its ``fixed`` pairs and epochs)."""
    fixed = read_yaml(project_path(plan.settings.jbi_sweep)).get("fixed", {}) if plan.settings.jbi_sweep else {}
    pairs, epochs = fixed.get("data.max_pairs"), fixed.get("optim.epochs")
    return (f"{pairs:,} pairs" if pairs else "every pair") + (f" for {epochs} epochs" if epochs else "")


def jbi_text(plan: ElgoharyData) -> str:
    """The setup's sentence on the J_bi settings: the stated choices, and how each tuning chose the rest."""
    if not plan.sweeps:
        return f"J_bi settings {plan.config.jbi} (as configured: no sweep ran)."
    stated = f"the choices §3.2 states ({stated_text(plan)}) and " if plan.config.stated else ""
    chosen = "; ".join(f"{tuning_label(key)} {plan.tuned(sweep['condition'], sweep['reading'])}"
                       for key, sweep in plan.sweeps.items())
    first = next(iter(plan.sweeps.values()))
    rescore = (f", then its {plan.settings.rescore} best points trained at the cells' own scale and the best "
               "of them on dev taken (tables below)") if plan.rescored else " (trials below)"
    return (f"J_bi settings: {stated}the rest tuned per condition as the paper did, on the paper's dev set (STS "
            f"2012 SMT-europarl train): the best of {len(first['trials'])} trials of the `{first['space']}` sweep "
            f"over that condition's pairs at the paper's proxy scale ({sweep_scale(plan)}){rescore}: "
            f"{chosen}.")
