"""BilDRL's cell groups: the paper's own rows (Tables 3 and 4, per held-out split), the softmax cells and the levers
tried on them, and each cell's training config (a model config of the plan's
``configs`` folder with the plan's space, data folder, epochs, learning rate and row cap)."""

from __future__ import annotations

from pathlib import Path

from parabit.papers.bildrl.paper import DIRECTIONS, ES_PAIR, LAYERS, SINGLE
from parabit.papers.bildrl.settings import PlanView
from parabit.papers.cells import Group
from parabit.paths import project_path
from parabit.recipes import load_run_config
from parabit.recipes.bildrl.config import foreign_language

LONG_EPOCHS = 100  # the paper trains up to MAX_EPOCHS (1000); a tenth of that is what one CPU core affords here
# The paper's depth and a longer training, each tried on es-en (the smallest dictionary): group key suffix, the
# change to the softmax cell's config, and its label.
ES_EN_LEVERS = ((f"{LAYERS}-layers", {"model.layers": LAYERS}, f"{LAYERS} stacked layers"),
                (f"{LONG_EPOCHS}-epochs", {"optim.epochs": LONG_EPOCHS}, f"{LONG_EPOCHS} epochs"))


def split_suffix(split: str) -> str:
    """What a split's group keys end with (nothing for the strict split, the plan's main tables)."""
    return "" if split == "strict" else f"-{split}"


def split_label(split: str) -> str:
    return "" if split == "strict" else f" ({split}' split)"


def keys_needing(direction: str) -> list[str]:
    """The paper's groups (strict split) that train or test on ``direction``'s dictionary."""
    keys = [f"{m}-{direction}" for m in SINGLE]
    return keys + ["gru-mtl", "att-mtl", "att-joint"] if direction in ES_PAIR else keys


def cell_config(plan: PlanView, file: str, lang: str, split: str = "strict", **overrides):
    """The training config of a cell: the model config ``file`` on ``lang``'s space and ``split``'s dictionaries,
    with the plan's epochs, learning rate and row cap (quick mode's instead), then ``overrides``."""
    settings = plan.settings
    base = {"space": str(plan.spaces[lang]), "data_dir": str(plan.builds[split].output_path),
            "optim.epochs": settings.epochs, "optim.lr": settings.lr,
            "max_train_rows": settings.max_train_rows}
    if plan.quick:
        base.update({"optim.epochs": 1, "max_train_rows": settings.quick_rows, "paraphrase": False})
    return load_run_config(project_path(Path(settings.configs) / file), {**base, **overrides})


def softmax_temperature(plan: PlanView) -> float:
    return cell_config(plan, "att_en-es.yaml", "es", loss="softmax").temperature


def att_model(plan: PlanView):
    """The ATT configs' model section (what Setup and the departures describe)."""
    return cell_config(plan, "att_fr-en.yaml", "fr").model


def paper_groups(plan: PlanView, split: str) -> list[Group]:
    """The models of the paper's own rows (Tables 3 and 4) built on ``split``'s dictionaries; a split other
    than the strict one suffixes each key with ``-<split>``."""
    suffix, label = split_suffix(split), split_label(split)
    groups = [Group(f"{m}-{d}{suffix}", cell_config(plan, f"{m}_{d}.yaml", foreign_language(d), split),
                    f"{m.upper()} {d}{label}") for d in DIRECTIONS for m in SINGLE]
    groups += [Group(f"{m}-mtl{suffix}", cell_config(plan, f"{m}_mtl_es.yaml", "es", split),
                     f"{m.upper()}-MTL{label}") for m in ("gru", "att")]
    groups.append(Group(f"att-joint{suffix}", cell_config(plan, "att_joint_es.yaml", "es", split),
                        f"ATT-joint{label}"))
    if plan.settings.mono:
        for lang in ("es", "fr"):
            for m in ("gru", "att"):
                groups.append(Group(f"{m}-mono-{lang}{suffix}", cell_config(
                    plan, f"{m}_{lang}-en.yaml", lang, split, directions=["en-en"], evaluate_on=[f"{lang}-en"],
                    paraphrase=False), f"{m.upper()}-mono ({lang}-en){label}"))
    return groups


def all_groups(plan: PlanView) -> list[Group]:
    """The paper's groups on the strict split, the softmax cells and their levers, then the paper's groups on the
    other splits; none the data step could not prepare (``plan.missing``)."""
    groups = paper_groups(plan, "strict")
    seen = lambda d: {"evaluate_seen": plan.settings.seen_words} if d in ES_PAIR else {}  # noqa: E731
    groups += [Group(f"att-{d}-softmax", cell_config(plan, f"att_{d}.yaml", foreign_language(d), loss="softmax",
                                                     **seen(d)), f"ATT {d}, softmax loss") for d in DIRECTIONS]
    if "att-en-es" not in plan.missing:  # does more data move held-out retrieval? en-es has the most rows
        groups.append(Group("att-en-es-softmax-all", cell_config(plan, "att_en-es.yaml", "es", loss="softmax",
                                                                 max_train_rows=None),
                            "ATT en-es, softmax loss, every row"))
    if "att-es-en" not in plan.missing:  # the paper's depth and a longer training, on the smallest dictionary
        for key, change, label in ES_EN_LEVERS:
            groups.append(Group(f"att-es-en-softmax-{key}", cell_config(
                plan, "att_es-en.yaml", "es", loss="softmax", **seen("es-en"), **change),
                f"ATT es-en, softmax, {label}"))
    for split in plan.splits[1:]:
        groups += paper_groups(plan, split)
    return [g for g in groups if g.key not in plan.missing]
